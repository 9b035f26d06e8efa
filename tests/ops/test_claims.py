"""Claims through the Python API against a real store, with a fake clock and no sleeps.

Waits run in threads; a test knows a waiter is queued when it blocks on its FIFO (the
``blocked`` fixture watches ``Inbox.block``), and wakes it by changing the lease table.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Busy, Claim, Conflict, Invalid, Memory, Refused
from memkeeper.claims.decisions import make_request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.fs import wakeups as waiting_module
from memkeeper.store.sqlite import Store
from tests.ops.conftest import START

if TYPE_CHECKING:
    from memkeeper.clock import FakeClock


class Blocked:
    """Which threads have blocked on their FIFO: each is queued and asleep."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.changed = threading.Condition()

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.threads) >= count, timeout=10)


@pytest.fixture
def blocked(monkeypatch: pytest.MonkeyPatch) -> Blocked:
    seen = Blocked()
    real_block = waiting_module.Inbox.block

    def block(inbox: waiting_module.Inbox, timeout: float) -> bool:
        with seen.changed:
            seen.threads.add(threading.get_ident())
            seen.changed.notify_all()
        return real_block(inbox, timeout)

    monkeypatch.setattr(waiting_module.Inbox, "block", block)
    return seen


class Background:
    """Run a call in a daemon thread; ``result()`` returns or raises what it did."""

    def __init__(self, call: Callable[[], Claim]) -> None:
        self.outcome: Claim | BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Claim]) -> None:
        try:
            self.outcome = call()
        except BaseException as exc:
            self.outcome = exc

    def result(self) -> Claim:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the waiter never came back"
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        assert self.outcome is not None
        return self.outcome


def kinds(memory: Memory, prefix: str = "claim.") -> list[tuple[str, str, str]]:
    return [(e.type, e.actor, e.data["id"]) for e in memory.events() if e.type.startswith(prefix)]


def set_leases(sample: Path, default_ttl: int, max_ttl: int) -> None:
    policy = sample / ".memkeeper.yaml"
    text = policy.read_text().replace("default_ttl: 120", f"default_ttl: {default_ttl}")
    policy.write_text(text.replace("max_ttl: 3600", f"max_ttl: {max_ttl}"))


# --- lifecycle ---------------------------------------------------------------------------


def test_a_claim_is_granted_with_a_token_and_the_policy_default_ttl(
    agents: Callable[[str], Memory],
) -> None:
    a = agents("a")
    claim = a.claim(["src/api/"], objective="refactor the API")
    assert (claim.agent, claim.mode, claim.targets, claim.token) == ("a", "write", ("src/api/",), 1)
    assert (claim.granted_at, claim.expires_at) == (START, START + 120)
    (event,) = a.events()
    assert (event.type, event.actor) == ("claim.granted", "a")
    assert event.data["id"] == claim.id
    assert event.data["token"] == 1
    assert event.data["targets"] == ["src/api/"]
    assert event.data["objective"] == "refactor the API"
    assert event.data["expires_at"] == "2023-11-14T22:15:20.000Z"


def test_the_ttl_defaults_to_and_is_capped_by_the_policy(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    set_leases(sample, default_ttl=30, max_ttl=60)
    a = agents("a")
    assert a.claim("one").expires_at == START + 30
    assert a.claim("two", ttl=5).expires_at == START + 5
    assert a.claim("three", ttl=1000).expires_at == START + 60
    assert a.renew(a.claim("four").id, ttl=1000).expires_at == START + 60


def test_a_ttl_above_the_maximum_is_capped_with_a_warning(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    set_leases(sample, default_ttl=30, max_ttl=60)
    a = agents("a")
    claim = a.claim("one", ttl=1000)
    assert claim.expires_at == START + 60
    assert claim.warnings == (
        "ttl 1000 s is above the policy's leases.max_ttl of 60 s: granted for 60 s — "
        "renew before it expires, or raise max_ttl in .memkeeper.yaml",
    )
    assert a.renew(claim.id, ttl=90.5).warnings == (
        "ttl 90.5 s is above the policy's leases.max_ttl of 60 s: granted for 60 s — "
        "renew before it expires, or raise max_ttl in .memkeeper.yaml",
    )
    assert a.claim("two", ttl=60).warnings == ()
    assert a.renew(claim.id).warnings == ()
    assert a.claims()[0].warnings == ()  # the answer's warnings, never stored
    assert claim == replace(claim, warnings=())  # and no part of the claim's identity


def test_renew_extends_from_now_and_records_the_new_expiry(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    claim = a.claim("src/", ttl=60)
    clock.advance(50)
    renewed = a.renew(claim.id, ttl=60)
    assert renewed.expires_at == START + 110
    assert (renewed.token, renewed.granted_at) == (claim.token, claim.granted_at)
    event = a.events()[-1]
    assert (event.type, event.data["expires_at"]) == ("claim.renewed", "2023-11-14T22:15:10.000Z")
    clock.advance(59)
    assert [c.id for c in a.claims()] == [claim.id]


def test_release_frees_the_scope_and_records_how_long_it_was_held(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/")
    clock.advance(7)
    assert a.release(claim.id) == claim
    assert a.claims() == []
    assert b.claim("src/x.py").agent == "b"
    released = [e for e in a.events() if e.type == "claim.released"]
    assert [(e.actor, e.data["id"], e.data["held_s"]) for e in released] == [("a", claim.id, 7)]


def test_an_expired_claim_vanishes_with_an_event_and_blocks_nobody(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    old = a.claim("src/", ttl=10)
    clock.advance(10)
    new = b.claim("src/api/")
    assert kinds(a) == [
        ("claim.granted", "a", old.id),
        ("claim.expired", "a", old.id),
        ("claim.granted", "b", new.id),
    ]
    assert a.claims() == [new]


def test_the_sweep_the_daemon_calls_returns_what_expired(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    short, long = a.claim("x", ttl=5), a.claim("y", ttl=50)
    clock.advance(5)
    assert a.sweep_claims() == [short]
    assert a.sweep_claims() == []
    assert a.claims() == [long]


def test_tokens_strictly_increase_across_release_expiry_and_reopening(
    agents: Callable[[str], Memory], sample: Path, clock: FakeClock
) -> None:
    a = agents("a")
    tokens = [a.claim("x").token]
    a.release(a.claims()[0].id)
    tokens.append(a.claim("x", ttl=1).token)
    clock.advance(2)
    tokens.append(a.claim("x").token)
    a.close()
    reopened = Memory.open(sample, agent="b", clock=clock)
    a.release(a.claims()[0].id)
    tokens.append(reopened.claim("x").token)
    reopened.close()
    assert tokens == sorted(set(tokens))
    assert tokens[-1] == 4


# --- conflicts ---------------------------------------------------------------------------


def test_busy_names_each_holder_with_its_expiry(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim(["src/api/", "docs/"], ttl=90)
    clock.advance(30)
    with pytest.raises(Busy) as caught:
        b.claim(["README.md", "src/api/x.py"])
    busy = caught.value
    assert busy.reason == "held"
    assert busy.holders == [
        {
            "agent": "a",
            "id": held.id,
            "mode": "write",
            "targets": ["src/api/", "docs/"],
            "strict": False,
            "expires_at": "2023-11-14T22:14:50.000Z",
            "seconds_left": 60,
        }
    ]
    assert "a holds write claim" in busy.message
    assert "60 s left" in busy.message
    assert b.claim("README.md").agent == "b", "all-or-nothing: the refused claim took nothing"


def test_paths_overlap_on_whole_segments(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    a.claim("src/api/")
    assert b.claim("src/ap").targets == ("src/ap",)
    assert b.claim("src/apix/y.py").targets == ("src/apix/y.py",)
    for inside in ("src/api", "src/api/deep/x.py", "src/**/*.py", "src/"):
        with pytest.raises(Busy):
            b.claim(inside)


def test_readers_share_and_a_writer_waits_for_them(agents: Callable[[str], Memory]) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    a.claim("docs/", mode="read")
    b.claim("docs/x.md", mode="read")
    with pytest.raises(Busy) as caught:
        c.claim("docs/")
    assert {h["agent"] for h in caught.value.holders} == {"a", "b"}


def test_an_agents_own_claims_never_conflict(agents: Callable[[str], Memory]) -> None:
    a = agents("a")
    a.claim("src/")
    assert a.claim("src/api/x.py").agent == "a"


def test_a_section_target_carries_the_full_key(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("CLAUDE.md#build")
    assert claim.targets == ("CLAUDE.md#inventory-service/build",)
    assert b.claim("CLAUDE.md#testing").targets == ("CLAUDE.md#inventory-service/testing",)
    for overlapping in ("CLAUDE.md", "CLAUDE.md#inventory-service", "*.md"):
        with pytest.raises(Busy):
            b.claim(overlapping)


def test_a_section_target_in_a_private_file_copies_nothing_into_the_store(
    agents: Callable[[str], Memory],
) -> None:
    a = agents("a")
    claim = a.claim("memory/scratch/agent-a.md#agent-a-scratchpad")
    assert claim.targets == ("memory/scratch/agent-a.md#agent-a-scratchpad",)
    store = a.workspace.store
    assert store.file_state("memory/scratch/agent-a.md") is None
    assert store.sections("memory/scratch/agent-a.md", with_absent=True) == []


def test_an_unknown_section_or_a_bad_target_is_invalid(agents: Callable[[str], Memory]) -> None:
    a = agents("a")
    with pytest.raises(Invalid) as caught:
        a.claim("CLAUDE.md#nope")
    assert "inventory-service/build" in caught.value.candidates
    for bad in ("../outside", "src/[z-a]"):
        with pytest.raises(Invalid):
            a.claim(bad)
    with pytest.raises(Invalid):
        a.claim("x", mode="exclusive")  # type: ignore[arg-type]
    assert a.events() == []


def test_only_the_holder_may_renew_or_release(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("src/")
    acts: list[Callable[[], Claim]] = [lambda: b.renew(claim.id), lambda: b.release(claim.id)]
    for act in acts:
        with pytest.raises(Refused) as caught:
            act()
        assert caught.value.reason == "not_holder"
    assert a.claims() == [claim]


def test_an_ended_claim_cannot_be_renewed_or_released(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a = agents("a")
    expiring, released = a.claim("x", ttl=10), a.claim("y")
    a.release(released.id)
    clock.advance(11)
    reasons = []
    acts: list[Callable[[], Claim]] = [
        lambda: a.renew(expiring.id),
        lambda: a.release(expiring.id),
        lambda: a.renew(released.id),
        lambda: a.release("c999"),
    ]
    for act in acts:
        with pytest.raises(Invalid) as caught:
            act()
        reasons.append(caught.value.reason)
    assert reasons == ["expired", "expired", "released", "unknown_claim"]
    assert ("claim.expired", "a", expiring.id) in kinds(a), "the sweep survived the error"


# --- writes under claims -------------------------------------------------------------------


def test_a_patch_into_an_advisory_claim_succeeds_with_a_warning(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    claim = a.claim("CLAUDE.md#build", ttl=100)
    clock.advance(40)
    result = b.patch("CLAUDE.md#build", "b was here\n", expect_rev=1)
    assert result.rev == 2
    (warning,) = result.warnings
    assert "a holds write claim" in warning
    assert claim.id in warning
    assert "60 s left" in warning
    assert a.patch("CLAUDE.md#build", "a too\n", expect_rev=2).warnings == ()


def test_a_strict_claim_refuses_another_agents_patch(
    agents: Callable[[str], Memory], sample: Path
) -> None:
    a, b = agents("a"), agents("b")
    before = (sample / "CLAUDE.md").read_bytes()
    claim = a.claim("CLAUDE.md", strict=True)
    with pytest.raises(Refused) as caught:
        b.patch("CLAUDE.md#build", "b was here\n", expect_rev=1)
    refused = caught.value
    assert refused.reason == "claimed"
    assert f"a holds strict write claim {claim.id}" in refused.message
    assert refused.holders[0]["expires_at"] == "2023-11-14T22:15:20.000Z"
    assert (sample / "CLAUDE.md").read_bytes() == before
    assert b.patch("AGENTS.md#roster", "fine\n", expect_rev=1).rev == 2


def test_a_strict_policy_rule_makes_an_advisory_claim_strict(
    agents: Callable[[str], Memory],
) -> None:
    a, human = agents("a"), agents("human")
    a.claim("CLAUDE.md#release-process")
    with pytest.raises(Refused) as caught:
        human.patch("CLAUDE.md#release-process", "tag it\n", expect_rev=1)
    assert caught.value.reason == "claimed"
    a.claim("CLAUDE.md#build")
    assert human.patch("CLAUDE.md#build", "ok\n", expect_rev=1).warnings != ()


def test_a_fenced_patch_lands_only_under_the_writers_own_live_covering_claim(
    agents: Callable[[str], Memory], clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    mine = a.claim("CLAUDE.md#inventory-service", ttl=10)
    reading = a.claim("AGENTS.md", mode="read")
    other = b.claim("memory/architecture.md")
    assert a.patch("CLAUDE.md#build", "ok\n", expect_rev=1, claim=mine.id).rev == 2
    refusals: list[Callable[[], object]] = [
        lambda: a.patch("memory/architecture.md#inventory", "x\n", expect_rev=1, claim=other.id),
        lambda: a.patch("memory/architecture.md#inventory", "x\n", expect_rev=1, claim=mine.id),
        lambda: a.patch("AGENTS.md#roster", "x\n", expect_rev=1, claim=reading.id),
        lambda: a.patch("CLAUDE.md#build", "x\n", expect_rev=2, claim="c404"),
    ]
    messages = []
    for write in refusals:
        with pytest.raises(Refused) as caught:
            write()
        assert caught.value.reason == "claimed"
        messages.append(caught.value.message)
    assert "belongs to b" in messages[0]
    assert "does not cover" in messages[1]
    assert "read claim" in messages[2]
    clock.advance(10)
    with pytest.raises(Refused) as late:
        a.patch("CLAUDE.md#build", "late\n", expect_rev=2, claim=mine.id)
    assert "expired" in late.value.message
    assert a.read("CLAUDE.md#build").content == "ok\n"


def test_a_patch_without_live_claims_never_loads_the_lease_core(
    memory: Memory, sample: Path
) -> None:
    memory.patch("CLAUDE.md#build", "warm the index and the policy cache\n", expect_rev=1)
    memory.close()
    probe = (
        "import sys\n"
        "from memkeeper import Memory\n"
        f"m = Memory.open({str(sample)!r}, agent='x')\n"
        "m.patch('CLAUDE.md#build', 'x\\n', expect_rev=2)\n"
        "print(sorted({'memkeeper.claims.decisions', 'memkeeper.ops.claims', 'dataclasses'}"
        " & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- waiting ---------------------------------------------------------------------------------


def test_a_waiter_is_granted_as_soon_as_the_holder_releases(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim("src/")
    waiter = Background(lambda: b.claim("src/x.py", wait=30))
    blocked.wait_for(1)
    assert a.metrics()["queue_depth"] == 1
    a.release(held.id)
    granted = waiter.result()
    assert (granted.agent, granted.token) == ("b", held.token + 1)
    assert a.metrics()["queue_depth"] == 0
    assert kinds(a)[-2:] == [("claim.released", "a", held.id), ("claim.granted", "b", granted.id)]


def test_an_expiry_noticed_by_anyone_grants_the_waiter(
    agents: Callable[[str], Memory], blocked: Blocked, clock: FakeClock
) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    held = a.claim("src/", ttl=5)
    waiter = Background(lambda: b.claim("src/", wait=60))
    blocked.wait_for(1)
    clock.advance(5)
    c.claims()
    assert waiter.result().agent == "b"
    assert ("claim.expired", "a", held.id) in kinds(a)


def test_a_wait_that_runs_out_is_busy_with_the_holders(
    agents: Callable[[str], Memory], blocked: Blocked, clock: FakeClock
) -> None:
    a, b, c = agents("a"), agents("b"), agents("c")
    held = a.claim("src/", ttl=600)
    waiter = Background(lambda: b.claim("src/", wait=10))
    blocked.wait_for(1)
    clock.advance(11)
    c.claim("elsewhere")  # any change of the table wakes the waiters
    with pytest.raises(Busy) as caught:
        waiter.result()
    assert caught.value.reason == "timeout"
    assert [h["id"] for h in caught.value.holders] == [held.id]
    assert c.metrics()["queue_depth"] == 0


def test_the_queue_serves_higher_priority_first(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, low, high = agents("a"), agents("low"), agents("high")
    held = a.claim("src/")
    first = Background(lambda: low.claim("src/", wait=30, priority=1))
    blocked.wait_for(1)
    second = Background(lambda: high.claim("src/", wait=30, priority=5))
    blocked.wait_for(2)
    a.release(held.id)
    winner = second.result()
    assert winner.agent == "high"
    assert first.thread.is_alive()
    high.release(winner.id)
    assert first.result().agent == "low"


def test_a_deadlock_aborts_the_lower_priority_waiter(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    a, b = agents("a"), agents("b")
    a.claim("src/a", priority=5)
    held_b = b.claim("src/b", priority=1)
    b_waits = Background(lambda: b.claim("src/a", wait=30, priority=1))
    blocked.wait_for(1)
    a_waits = Background(lambda: a.claim("src/b", wait=30, priority=5))
    with pytest.raises(Busy) as caught:
        b_waits.result()
    assert caught.value.reason == "deadlock"
    assert [h["agent"] for h in caught.value.holders] == ["a"]
    b.release(held_b.id)
    assert a_waits.result().targets == ("src/b",)
    aborted = [e for e in a.events() if e.type == "claim.aborted"]
    assert [(e.actor, e.data["reason"]) for e in aborted] == [("b", "deadlock")]
    assert a.metrics()["deadlocks_broken"] == 1


def test_a_new_request_that_closes_a_cycle_is_itself_the_victim_when_lower(
    agents: Callable[[str], Memory], blocked: Blocked
) -> None:
    low, high = agents("low"), agents("high")
    held_low = low.claim("x", priority=1)
    high.claim("y", priority=5)
    high_waits = Background(lambda: high.claim("x", wait=30, priority=5))
    blocked.wait_for(1)
    low_waits = Background(lambda: low.claim("y", wait=30, priority=1))
    with pytest.raises(Busy) as caught:
        low_waits.result()
    assert caught.value.reason == "deadlock"
    assert high_waits.thread.is_alive()
    low.release(held_low.id)
    assert high_waits.result().agent == "high"


def test_a_dead_waiters_request_is_dropped(agents: Callable[[str], Memory]) -> None:
    a, b = agents("a"), agents("b")
    held = a.claim("src/")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    request = make_request("c77", "ghost", ["src/"], ttl=60, arrival=77)
    with a.workspace.store.writing():
        a.workspace.store.put_waiter(WaiterRow(request, gone.pid, START + 60, "waiting", None))
    a.release(held.id)
    assert b.claim("src/").agent == "b", "the ghost was not served first"
    aborted = [e for e in a.events() if e.type == "claim.aborted"]
    assert [(e.actor, e.data["reason"]) for e in aborted] == [("ghost", "abandoned")]


# --- metrics ---------------------------------------------------------------------------------


def test_metrics_count_the_last_hour(
    agents: Callable[[str], Memory], clock: FakeClock, sample: Path
) -> None:
    a, b = agents("a"), agents("b")
    a.claim("x", ttl=10)
    a.claim("y", ttl=100)
    a.patch("CLAUDE.md#build", "one\n", expect_rev=1)
    with pytest.raises(Conflict):
        b.patch("CLAUDE.md#build", "two\n", expect_rev=1)
    clock.advance(10)
    expected: dict[str, Any] = {
        "window_s": 3600,
        "claims_held": 1,
        "queue_depth": 0,
        "claims_granted": 2,
        "deadlocks_broken": 0,
        "ttl_expirations": 1,
        "conflicts": 1,
    }
    assert b.metrics() == expected
    assert not any(e.type == "conflict" for e in a.events()), "kept out of the event log"
    clock.advance(3601)  # y expires now; everything else happened over an hour ago
    later = {"claims_held": 0, "claims_granted": 0, "ttl_expirations": 1, "conflicts": 0}
    assert b.metrics() == expected | later


@pytest.mark.sqlite_only  # SQLite's own syncs and statements, or a root without a store
def test_a_release_commits_without_waiting_for_the_disk_a_grant_does_not(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14 item 4: one synced commit per claim+release pair; the grant's (its fencing
    token) is the synced one."""
    memory.release(memory.claim("CLAUDE.md#build", ttl=60).id)  # the file indexed, verdicts cached
    synced: list[int] = []
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    claim = memory.claim("CLAUDE.md#build", ttl=60)
    assert len(synced) == 1  # the grant waited for the log's sync
    memory.release(claim.id)
    assert len(synced) == 1  # the release did not
    assert [e.type for e in memory.events()[-2:]] == ["claim.granted", "claim.released"]


@pytest.mark.sqlite_only  # SQLite's own syncs and statements, or a root without a store
def test_each_operation_reads_the_claim_table_once(memory: Memory) -> None:
    """Issue 14 item 4: a transaction reads the claims and the queue in one statement and
    works on that copy: no step reads them again, not even after its own writes."""
    statements: list[str] = []
    store = memory.workspace.store
    assert isinstance(store, Store)
    store._db.set_trace_callback(statements.append)
    try:
        claim = memory.claim("src/inventory/", ttl=60)
        memory.release(claim.id)
    finally:
        store._db.set_trace_callback(None)
    reads = [s for s in statements if s.startswith("SELECT") and " FROM claims" in s]
    assert len(reads) == 2, reads  # one per transaction
    assert all(" FROM waiters" in s for s in reads)  # the queue in the same statement
    assert sum(" FROM waiters" in s for s in statements) == 2


def test_a_path_target_is_resolved_against_the_directory_claimed_from(
    agents: Callable[[str], Memory], sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = agents("a")
    monkeypatch.chdir(sample.parent)  # outside the root: relative to the root
    assert a.claim("inventory/").targets == ("inventory/",)
    monkeypatch.chdir(sample / "src")
    assert a.claim("inventory/").targets == ("src/inventory/",)
    monkeypatch.chdir(sample)
    assert a.claim("inventory/").targets == ("inventory/",)

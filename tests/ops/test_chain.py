"""The event chain's half of ``verify``: walked from the last signed checkpoint, so a routine
verify reads what happened since; the checkpoint's signature and its event's hash checked;
``full`` walking everything; tampering before a checkpoint caught by ``full``, after it (or
under it, hashes rewritten) by a routine verify; a forged checkpoint reported."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper import checkpoints
from memkeeper import events as ev
from memkeeper.checkpoints import VERIFIED
from memkeeper.clock import FakeClock
from memkeeper.fs import keyring
from memkeeper.identity import keys, signers
from memkeeper.ops import chain
from memkeeper.ops.chain import tail_break, verify_chain
from memkeeper.ops.emit import emit
from memkeeper.ops.workspace import Workspace
from memkeeper.store.sqlite import Store

T0 = 1_800_000_000.0


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    return env


@pytest.fixture
def key(config: dict[str, str]) -> keys.Signer:
    return keyring.create(config, "human", "alice")[0]


@pytest.fixture
def ws(sample: Path, key: keys.Signer) -> Iterator[Workspace]:
    opened = Workspace(sample, "human", FakeClock(T0))
    assert opened.store is not None
    yield opened
    opened.close()


def emitted(ws: Workspace, count: int) -> None:
    for n in range(count):
        emit(ws, "task.done", {"n": n})


def sql(ws: Workspace, statement: str, *args: object) -> None:
    store = ws.store
    assert isinstance(store, Store)  # these tests tamper with SQLite's tables
    store._db.execute(statement, args)


def rules(report: chain.ChainReport) -> list[str]:
    return [v.rule for v in report.violations]


def test_a_routine_verify_walks_only_the_events_after_the_checkpoint(ws: Workspace) -> None:
    emitted(ws, 3)
    first = verify_chain(ws)
    assert (first.checked, first.since, first.checkpoint, first.length) == (3, 0, 3, 3)
    emitted(ws, 2)
    second = verify_chain(ws)
    assert (second.checked, second.since, second.checkpoint, second.length) == (2, 3, 5, 5)
    assert second.violations == []
    assert verify_chain(ws).checked == 0
    assert verify_chain(ws, full=True).checked == 5


def test_the_checkpoint_is_signed_by_the_verifying_process(ws: Workspace, key: keys.Signer) -> None:
    emitted(ws, 2)
    verify_chain(ws)
    cp = ws.store.chain_checkpoint(VERIFIED)
    assert cp is not None
    assert (cp.seq, cp.hash, cp.actor, cp.signer) == (
        2,
        ws.store.events()[-1].hash,
        "human",
        key.public,
    )
    assert cp.sig is not None
    assert keys.valid(key.public, checkpoints.message(cp), cp.sig)


def test_without_a_key_no_checkpoint_is_written_and_every_verify_walks_it_all(
    sample: Path, config: dict[str, str]
) -> None:
    ws = Workspace(sample, "human", FakeClock(T0))
    try:
        emitted(ws, 2)
        for _ in range(2):
            report = verify_chain(ws)
            assert (report.checked, report.checkpoint) == (2, None)
            assert report.unsigned is not None
            assert "no key" in report.unsigned
        assert ws.store.chain_checkpoint(VERIFIED) is None
    finally:
        ws.close()


def test_tampering_before_the_checkpoint_is_caught_by_a_full_verify(ws: Workspace) -> None:
    emitted(ws, 4)
    verify_chain(ws)
    sql(ws, "UPDATE events SET actor = 'mallory' WHERE id = 2")
    assert verify_chain(ws).violations == []  # the accepted blind spot of a routine verify
    full = verify_chain(ws, full=True)
    assert [v.message for v in full.violations] == [
        "event 2: its hash does not match its content: the event was edited"
    ]
    assert ws.store.chain_checkpoint(VERIFIED) is not None  # kept, not moved past a break


def test_tampering_after_the_checkpoint_is_caught_by_a_routine_verify(ws: Workspace) -> None:
    emitted(ws, 2)
    verify_chain(ws)
    emitted(ws, 2)
    sql(ws, "UPDATE events SET data = '{\"n\": 9}' WHERE id = 4")
    report = verify_chain(ws)
    assert [v.message for v in report.violations] == [
        "event 4: its hash does not match its content: the event was edited"
    ]
    assert report.checkpoint == 2  # not moved past it
    assert verify_chain(ws).violations  # and found again, each time


def test_history_rewritten_under_the_checkpoint_hashes_and_all_is_caught(ws: Workspace) -> None:
    emitted(ws, 4)
    verify_chain(ws)
    # Event 2 edited and every hash after it recomputed: a chain that holds link by link.
    tail: tuple[int, str] = (1, ws.store.events()[0].hash)
    for old in ws.store.events()[1:]:
        data = {"n": 99} if old.id == 2 else old.data
        new = ev.next_event(tail, old.ts, old.actor, old.type, old.path, old.section, data)
        sql(
            ws,
            "UPDATE events SET data = ?, prev = ?, hash = ? WHERE id = ?",
            ev.canonical(data).decode(),
            new.prev,
            new.hash,
            old.id,
        )
        tail = new.id, new.hash
    sql(ws, "UPDATE cache SET value = ? WHERE key = 'events:head'", f"4 {tail[1]}")
    report = verify_chain(ws)
    assert rules(report) == ["event-chain"]
    assert report.violations[0].message.startswith(
        "event 4: it no longer has the hash the checkpoint of"
    )
    assert (report.since, report.checked) == (0, 4)  # then walked from the start


@pytest.mark.parametrize(
    ("forge", "what"),
    [
        ({"signer": None, "sig": None}, "it is not signed"),
        ({"seq": 1}, "does not verify: it was forged or altered"),
        ({"hash": "sha256:" + "1" * 64}, "does not verify: it was forged or altered"),
    ],
)
def test_a_forged_checkpoint_is_reported_and_not_walked_from(
    ws: Workspace, forge: dict[str, object], what: str
) -> None:
    emitted(ws, 3)
    verify_chain(ws)
    cp = ws.store.chain_checkpoint(VERIFIED)
    assert cp is not None
    ws.store.put_chain_checkpoint(cp._replace(**forge))
    report = verify_chain(ws)
    assert rules(report) == ["checkpoint"]
    assert what in report.violations[0].message
    assert "verify --full" in report.violations[0].fix
    assert (report.since, report.checked) == (0, 3)


def test_a_full_verify_replaces_a_forged_checkpoint_with_its_own(ws: Workspace) -> None:
    emitted(ws, 3)
    verify_chain(ws)
    cp = ws.store.chain_checkpoint(VERIFIED)
    assert cp is not None
    ws.store.put_chain_checkpoint(cp._replace(seq=2))
    full = verify_chain(ws, full=True)
    assert rules(full) == ["checkpoint"]  # reported once more …
    assert full.checkpoint == 3  # … and replaced
    assert verify_chain(ws).violations == []


def test_an_unreadable_checkpoint_is_reported(ws: Workspace) -> None:
    emitted(ws, 1)
    verify_chain(ws)
    sql(ws, "UPDATE checkpoints SET record = '{}'")
    report = verify_chain(ws)
    assert rules(report) == ["checkpoint"]
    assert "the verified checkpoint cannot be read" in report.violations[0].message


def test_with_a_signers_file_the_checkpoint_needs_a_trusted_key(
    ws: Workspace, sample: Path, key: keys.Signer
) -> None:
    emitted(ws, 2)
    verify_chain(ws)  # no signers file yet: any key signs it
    other = keys.Signer("bob", bytes(range(1, 33)))
    (sample / ".memkeeper-signers").write_bytes(
        signers.with_signer(b"", "bob", ("human",), other.public)
    )
    report = verify_chain(ws)
    # The signers file changed since: the walk starts over (every event judged, alice's
    # events and her checkpoint not trusted), and nothing new is signed by alice's key.
    assert set(rules(report)) == {"checkpoint", "signature"}
    assert report.since == 0


def test_a_trusted_process_checkpoints_and_an_untrusted_one_says_why_not(
    ws: Workspace, sample: Path, key: keys.Signer
) -> None:
    (sample / ".memkeeper-signers").write_bytes(
        signers.with_signer(b"", "alice", ("human",), key.public)
    )
    emitted(ws, 2)
    assert verify_chain(ws).checkpoint == 2
    emitted(ws, 1)
    stranger = Workspace(sample, "agent-b", FakeClock(T0))
    try:
        report = verify_chain(stranger)
        assert report.violations == []
        assert report.checkpoint == 2  # alice's, kept
        assert report.unsigned is not None
        assert "may not sign as agent-b" in report.unsigned
    finally:
        stranger.close()


def test_a_changed_signers_file_makes_the_next_verify_walk_it_all(
    ws: Workspace, sample: Path, key: keys.Signer
) -> None:
    path = sample / ".memkeeper-signers"
    path.write_bytes(signers.with_signer(b"", "alice", ("human",), key.public))
    emitted(ws, 3)
    verify_chain(ws)
    assert verify_chain(ws).checked == 0
    path.write_bytes(
        signers.with_signer(
            path.read_bytes(), "bob", ("b",), keys.Signer("b", bytes(range(2, 34))).public
        )
    )
    again = verify_chain(ws)
    assert (again.since, again.checked, again.violations) == (0, 3, [])


def test_a_walk_reads_the_log_in_batches(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain, "BATCH", 2)
    emitted(ws, 5)
    sql(ws, "UPDATE events SET actor = 'mallory' WHERE id = 5")
    report = verify_chain(ws)
    assert (report.checked, report.length) == (5, 5)
    assert [v.message.split(":")[0] for v in report.violations] == ["event 5"]


def test_no_recorded_head_is_judged_by_the_chain_alone() -> None:
    assert tail_break(None, None) == []
    assert tail_break((3, "sha256:c"), None) == []


def test_a_log_that_ends_at_the_recorded_head_is_whole() -> None:
    assert tail_break((3, "sha256:c"), (3, "sha256:c")) == []


def test_a_last_event_with_another_hash_than_the_head_is_a_break() -> None:
    assert tail_break((3, "sha256:x"), (3, "sha256:c")) == [
        (3, "it is not the last event memkeeper wrote: its hash differs")
    ]


def test_a_log_that_goes_on_past_the_head_is_a_break() -> None:
    assert tail_break((5, "sha256:e"), (3, "sha256:c")) == [
        (5, "the log goes on past event 3, the last one memkeeper wrote")
    ]


def test_an_emptied_log_with_a_head_is_a_break() -> None:
    assert tail_break(None, (3, "sha256:c")) == [
        (
            3,
            "the log is empty, but event 3 was the last one written: "
            "events were deleted from its end",
        )
    ]


def test_events_deleted_from_the_end_under_the_checkpoint_are_caught(ws: Workspace) -> None:
    emitted(ws, 3)
    verify_chain(ws)
    sql(ws, "DELETE FROM events WHERE id = 3")
    found = [v.message for v in verify_chain(ws).violations]
    assert found[0].startswith("event 3: it is gone, though the checkpoint of")
    assert "event 3: the log ends at event 2, but event 3 was the last one written" in found[1]


def test_a_verify_with_nothing_new_leaves_the_checkpoint_as_it_was(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    emitted(ws, 2)
    verify_chain(ws)
    written: list[object] = []
    monkeypatch.setattr(ws.store, "put_chain_checkpoint", written.append)
    assert verify_chain(ws).checkpoint == 2
    assert written == []

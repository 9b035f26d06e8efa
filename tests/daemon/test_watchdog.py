"""The watchdog, driven by the fake clock and scripted batches: a live claim with no movement
on the ground — no file under its targets changed, no commit on its branch, nothing its
holder wrote through memkeeper — is marked idle at ``leases.idle_after``, its holder told;
movement keeps it active or clears the mark; ``idle_release_after`` releases it."""

from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.daemon.loop import run
from memkeeper.daemon.step import Daemon
from memkeeper.ops import idleclaims
from tests.daemon.conftest import MODIFIED, RESCAN_S, Never, Raw, Script, no_sleep

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper.clock import FakeClock
    from memkeeper.daemon.plan import Outcome

IDLE_S = 60


def with_idle(root: Path, idle_after: object, release_after: object = "off") -> None:
    policy = root / ".memkeeper.yaml"
    text = re.sub(r"  idle_(release_)?after: .*\n", "", policy.read_text())
    text = text.replace(
        "  max_ttl: 3600\n",
        f"  max_ttl: 3600\n  idle_after: {idle_after}\n  idle_release_after: {release_after}\n",
    )
    policy.write_text(text)


def started(home: Memory, idle_after: object = IDLE_S, release_after: object = "off") -> Daemon:
    with_idle(home.root, idle_after, release_after)
    daemon = Daemon(home.workspace, RESCAN_S, quiet_s=0)
    daemon.caught_up(first=True)
    daemon.step(set())  # the watchdog's first look
    return daemon


def run_for(
    daemon: Daemon, clock: FakeClock, seconds: float, every: float = 5.0, batch: object = None
) -> list[Outcome]:
    done: list[Outcome] = []
    for _ in range(round(seconds / every)):
        clock.advance(every)
        done += daemon.step(set())
    return done


def of(outcomes: list[Outcome], action: str) -> list[Outcome]:
    return [o for o in outcomes if o.action == action]


def holder(home: Memory, clock: FakeClock) -> Memory:
    return Memory(home.root, "agent-b", clock=clock)


def test_a_claim_nothing_moves_under_goes_idle_at_idle_after_and_its_holder_is_told(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home)
    b = holder(home, clock)
    claim = b.claim(["src/"], ttl=3600)
    assert of(run_for(daemon, clock, IDLE_S - 5), "idle") == []
    went = of(run_for(daemon, clock, 5), "idle")
    assert [o.detail.split(":")[0] for o in went] == [f"claim {claim.id} of agent-b on src/"]
    told = b.mail.inbox()
    assert [(m.kind, m.about) for m in told] == [("idle", claim.id)]
    assert "has seen no change for 60 s" in told[0].text
    idle_events = [e for e in home.events() if e.type == "claim.idle"]
    assert [(e.actor, e.data["id"], e.data["idle_s"]) for e in idle_events] == [
        ("memkeeper", claim.id, 60.0)
    ]
    assert list(idleclaims.idle_marks(home.workspace, [claim])) == [claim.id]


def test_it_goes_idle_once_per_spell(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    holder(home, clock).claim(["src/"], ttl=3600)
    outcomes = run_for(daemon, clock, 10 * IDLE_S)
    assert len(of(outcomes, "idle")) == 1
    assert [e.type for e in home.events()].count("claim.idle") == 1


def test_a_file_changing_under_its_targets_keeps_it_active(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    holder(home, clock).claim(["src/"], ttl=3600)
    run_for(daemon, clock, 40)
    source = home.root / "src" / "app.py"
    source.parent.mkdir(exist_ok=True)
    source.write_text("print('working')\n")
    daemon.step({(MODIFIED, str(source))})
    assert of(run_for(daemon, clock, 55), "idle") == []  # 95 s after the grant
    assert len(of(run_for(daemon, clock, 10), "idle")) == 1  # 60 s after the change


def test_a_change_outside_its_targets_does_not(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    holder(home, clock).claim(["src/"], ttl=3600)
    run_for(daemon, clock, 40)
    elsewhere = home.root / "docs" / "other.txt"
    elsewhere.parent.mkdir(exist_ok=True)
    elsewhere.write_text("x\n")
    daemon.step({(MODIFIED, str(elsewhere))})
    assert len(of(run_for(daemon, clock, 20), "idle")) == 1


def test_a_commit_on_its_branch_keeps_it_active(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    b = holder(home, clock)
    claim = b.claims.take(["src/"], ttl=3600, branch="feature")
    run_for(daemon, clock, 40)
    ref = home.root / ".git" / "refs" / "heads" / "feature"
    ref.write_text("1" * 40 + "\n")  # what git commit leaves behind
    daemon.step({(MODIFIED, str(home.root / ".git" / "COMMIT_EDITMSG"))})
    clock.advance(1)
    daemon.step(set())
    assert of(run_for(daemon, clock, 55), "idle") == []
    went = of(run_for(daemon, clock, 10), "idle")
    assert [o.detail.split(" ")[1] for o in went] == [claim.id]


@pytest.mark.peer("git")
def test_a_real_commit_in_its_worktree_keeps_it_active(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    claim = holder(home, clock).claims.take(["src/"], ttl=3600)  # the worktree's branch
    run_for(daemon, clock, 40)
    git = ["git", "-C", str(home.root), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "progress"], check=True)
    daemon.step({(MODIFIED, str(home.root / ".git" / "COMMIT_EDITMSG"))})
    clock.advance(1)
    daemon.step(set())
    assert of(run_for(daemon, clock, 55), "idle") == []
    went = of(run_for(daemon, clock, 10), "idle")
    assert [o.detail.split(" ")[1] for o in went] == [claim.id]


def test_a_patch_by_its_holder_keeps_it_active_a_renewal_does_not(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home)
    b, c = holder(home, clock), Memory(home.root, "agent-c", clock=clock)
    patched = b.claim(["src/"], ttl=3600)
    renewed = c.claim(["docs/"], ttl=3600)
    run_for(daemon, clock, 40)
    section = b.read("AGENTS.md#handoff-rules")
    b.patch("AGENTS.md#handoff-rules", b"New conventions.\n", expect_rev=section.rev)
    c.renew(renewed.id, ttl=3600)
    went = of(run_for(daemon, clock, 20), "idle")
    assert [o.detail.split(" ")[1] for o in went] == [renewed.id]
    assert of(run_for(daemon, clock, 35), "idle") == []
    assert [o.detail.split(" ")[1] for o in of(run_for(daemon, clock, 10), "idle")] == [patched.id]


def test_movement_after_the_mark_makes_it_active_again_and_a_new_spell_can_follow(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home)
    b = holder(home, clock)
    claim = b.claim(["memory/"], ttl=3600)
    assert len(of(run_for(daemon, clock, IDLE_S), "idle")) == 1
    b.append("memory/decisions.md", "Back at it.")  # at the very moment of the mark
    back = of(run_for(daemon, clock, 15), "active")
    assert [o.detail.split(" ")[1] for o in back] == [claim.id]
    assert idleclaims.idle_marks(home.workspace, [claim]) == {}
    assert len(of(run_for(daemon, clock, IDLE_S), "idle")) == 1
    types = [e.type for e in home.events() if e.type in ("claim.idle", "claim.active")]
    assert types == ["claim.idle", "claim.active", "claim.idle"]


def test_idle_release_after_releases_an_idle_claim_and_tells_its_holder(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home, release_after=120)
    b = holder(home, clock)
    claim = b.claim(["src/"], ttl=3600)
    assert len(of(run_for(daemon, clock, IDLE_S), "idle")) == 1
    assert of(run_for(daemon, clock, 115), "released") == []
    assert len(of(run_for(daemon, clock, 5), "released")) == 1
    assert home.claims() == []
    released = [e for e in home.events() if e.type == "claim.released"]
    assert [(e.actor, e.data["id"], e.data["reason"]) for e in released] == [
        ("agent-b", claim.id, "idle")
    ]
    assert [m.kind for m in b.mail.inbox()] == ["idle", "idle"]
    assert "was released" in b.mail.inbox()[1].text


@pytest.mark.parametrize("off", ["off", 0])
def test_idle_after_off_marks_nothing(home: Memory, clock: FakeClock, off: object) -> None:
    daemon = started(home, idle_after=off)
    holder(home, clock).claim(["src/"], ttl=3600)
    assert of(run_for(daemon, clock, 3 * 1200, every=60), "idle") == []
    assert daemon.watchdog.dirs == frozenset()


def test_a_restarted_daemon_keeps_the_mark_and_does_not_mark_again(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home)
    holder(home, clock).claim(["src/"], ttl=3600)
    run_for(daemon, clock, IDLE_S)
    again = started(home, idle_after=IDLE_S)
    outcomes = run_for(again, clock, 3 * IDLE_S)
    assert of(outcomes, "idle") == of(outcomes, "active") == []


def test_it_looks_at_most_every_quarter_of_idle_after_and_every_minute(
    home: Memory, clock: FakeClock
) -> None:
    daemon = started(home, idle_after=1200)
    assert daemon.watchdog.next_at - clock.now() == pytest.approx(60.0)
    clock.advance(59)
    daemon.step(set())
    assert daemon.watchdog.next_at - clock.now() == pytest.approx(1.0)  # not looked yet
    short = started(home, idle_after=20)
    assert short.watchdog.next_at - clock.now() == pytest.approx(5.0)


def test_the_targets_directories_are_watched(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    (home.root / "src" / "deep").mkdir(parents=True, exist_ok=True)
    holder(home, clock).claim(["src/", "docs/*.md"], ttl=3600)
    daemon.step({(MODIFIED, str(home.root / ".memkeeper" / "state.db-wal"))})
    assert daemon.watchdog.dirs == frozenset()
    run_for(daemon, clock, 1, every=1)
    assert {"src", "src/deep", "docs"} <= daemon.watchdog.dirs
    assert daemon.must_rewatch()
    assert str(home.root / "src" / "deep") in daemon.watch_paths()


def test_turned_off_and_on_again_it_starts_afresh(home: Memory, clock: FakeClock) -> None:
    daemon = started(home)
    holder(home, clock).claim(["src/"], ttl=3600)
    policy = home.root / ".memkeeper.yaml"
    with_idle(home.root, "off")
    daemon.step({(MODIFIED, str(policy))})
    assert of(run_for(daemon, clock, 5 * IDLE_S), "idle") == []
    with_idle(home.root, IDLE_S)
    daemon.step({(MODIFIED, str(policy))})
    assert of(run_for(daemon, clock, IDLE_S - 5), "idle") == []  # not at once: it saw nothing
    assert len(of(run_for(daemon, clock, 10), "idle")) == 1


def test_through_the_loop_a_claim_moved_by_a_file_change_goes_idle_idle_after_later(
    home: Memory, clock: FakeClock
) -> None:
    """``run`` with the scripted change source: the claim's directory is watched once the
    watchdog has seen the claim (a rewatch), a save under it at 30 s is movement, and the
    claim goes idle 60 s after that save, not 60 s after the start."""
    with_idle(home.root, IDLE_S)
    start = clock.now()
    claim = holder(home, clock).claim(["src/"], ttl=3600)
    source = home.root / "src" / "inventory" / "new.py"

    def tick() -> Raw:
        clock.advance(5)
        return set()

    def save() -> Raw:
        source.write_text("print('progress')\n")
        return {(MODIFIED, str(source))}

    script = Script([tick] * 6 + [save] + [tick] * 14)
    seen = []
    for outcome in run(home.workspace, script, Never(), quiet_s=0, pause=no_sleep):
        if outcome.action == "idle":
            seen.append((clock.now() - start, outcome.detail.split(" ")[1]))
    assert seen == [(90.0, claim.id)]
    assert any(str(home.root / "src" / "inventory") in dirs for dirs in script.watched[1:])


def test_a_released_claims_directories_are_dropped_only_every_few_minutes(
    home: Memory, clock: FakeClock
) -> None:
    """A new watch set costs the daemon a rewatch: claims coming and going do not each
    make one."""
    daemon = started(home)
    (home.root / "src" / "a").mkdir(parents=True)
    b = holder(home, clock)
    first = b.claim(["src/a/"], ttl=3600)
    run_for(daemon, clock, 15)
    assert daemon.watchdog.dirs == {"src/a"}
    b.release(first.id)
    b.claim(["docs/"], ttl=3600)
    run_for(daemon, clock, 15)
    assert daemon.watchdog.dirs == {"src/a", "docs"}  # grown, not shrunk
    run_for(daemon, clock, 300)
    assert daemon.watchdog.dirs == {"docs"}

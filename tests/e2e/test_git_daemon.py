"""Git at work in a tree the daemon watches (docs/reference.md §11): a branch switch, a stash and
rebase, a merge with a conflict in CLAUDE.md and a hard reset all succeed with ``memkeeper watch``
running; afterwards ``verify`` is clean and the events say which changes were git's.

Between git commands each test waits longer than the daemon's quiet period, so a daemon that
re-rendered a page because of git's own changes would have dirtied the tree by then."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memkeeper.daemon.plan import QUIET_S
from tests.conftest import MEMKEEPER, Cli
from tests.e2e.test_daemon import Streamed, spawn, until

__all__ = ["spawn"]  # the fixture, imported for these tests
SETTLE_S = QUIET_S + 1.0  # long enough for the daemon to act on what git did


def git(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if ok:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def dirty(root: Path) -> list[str]:
    """Tracked files whose work tree differs from the index (untracked ones left out)."""
    return git(root, "status", "--porcelain", "--untracked-files=no").stdout.splitlines()


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, f"{rel} has no {old!r}"
    path.write_text(text.replace(old, new, 1))


def settled(root: Path) -> None:
    """The daemon has had time to act, and ``verify`` is clean (it indexed everything)."""
    time.sleep(SETTLE_S)
    until(lambda: verify(root).returncode == 0, timeout=20)


def verify(root: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([MEMKEEPER, "verify", "--json"], cwd=root, capture_output=True)


def events_by(root: Path, actor: str) -> list[dict[str, object]]:
    out = subprocess.run(
        [MEMKEEPER, "events", "--json"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return [e for e in map(json.loads, out.splitlines()) if e["actor"] == actor]


@pytest.fixture
def watched(sample: Path, cli: Cli, spawn: Callable[..., Streamed]) -> Streamed:
    """The sample committed on ``main`` with its rendered pages, the daemon running."""
    assert cli("init").code == 0
    git(sample, "config", "user.email", "dev@example.com")
    git(sample, "config", "user.name", "Dev")
    git(sample, "checkout", "-q", "-b", "main")
    daemon = spawn("watch", "--json")
    daemon.wait_for(lambda o: o["action"] == "started")
    time.sleep(SETTLE_S)  # the first render of every page, then committed with the rest
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "memory files, rendered")
    settled(sample)
    assert dirty(sample) == []
    return daemon


def test_a_branch_switch_succeeds_both_ways_and_leaves_the_tree_clean(
    sample: Path, watched: Streamed
) -> None:
    git(sample, "checkout", "-q", "-b", "other")
    edit(sample, "CLAUDE.md", "make build", "make all")
    edit(sample, "memory/status.md", "deploy freeze", "deploy freeze (other)")
    git(sample, "commit", "-q", "-am", "other: build and notes")
    settled(sample)
    git(sample, "checkout", "-q", "main")
    settled(sample)
    assert dirty(sample) == []
    assert "make build" in (sample / "CLAUDE.md").read_text()
    git(sample, "checkout", "-q", "other")
    settled(sample)
    assert dirty(sample) == []
    assert "(other)" in (sample / "memory/status.md").read_text()
    assert any(e["path"] == "CLAUDE.md" for e in events_by(sample, "git"))
    assert verify(sample).returncode == 0


def test_a_stash_and_a_rebase_succeed_with_the_daemon_running(
    sample: Path, watched: Streamed
) -> None:
    git(sample, "checkout", "-q", "-b", "upstream")
    edit(sample, "AGENTS.md", "\n", "\nUpstream's line.\n")
    git(sample, "commit", "-q", "-am", "upstream: a line")
    git(sample, "checkout", "-q", "main")
    edit(sample, "CLAUDE.md", "make build", "make all")
    git(sample, "commit", "-q", "-am", "main: build")
    settled(sample)
    edit(sample, "memory/architecture.md", "\n", "\nWork in progress.\n")  # a human's edit
    settled(sample)
    git(sample, "stash")
    settled(sample)
    assert dirty(sample) == []
    git(sample, "rebase", "-q", "upstream")
    settled(sample)
    git(sample, "stash", "pop")
    settled(sample)
    assert "Work in progress." in (sample / "memory/architecture.md").read_text()
    assert "Upstream's line." in (sample / "AGENTS.md").read_text()
    # the page shows the human's edit (an event that is not git's), stashed and popped with it
    assert dirty(sample) == [" M memory/architecture.md", " M memory/status.md"]
    assert verify(sample).returncode == 0


def test_a_merge_with_a_conflict_in_claude_md_and_a_hard_reset(
    sample: Path, watched: Streamed
) -> None:
    git(sample, "checkout", "-q", "-b", "theirs")
    edit(sample, "CLAUDE.md", "make build", "make theirs")
    git(sample, "commit", "-q", "-am", "theirs: build")
    git(sample, "checkout", "-q", "main")
    edit(sample, "CLAUDE.md", "make build", "make ours")
    git(sample, "commit", "-q", "-am", "ours: build")
    settled(sample)
    merge = git(sample, "merge", "theirs", ok=False)
    assert merge.returncode == 1
    assert "CONFLICT" in merge.stdout
    time.sleep(SETTLE_S)  # paused while the merge is in progress: no violation, no index
    assert "<<<<<<<" in (sample / "CLAUDE.md").read_text()
    text = (sample / "CLAUDE.md").read_text()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>> theirs\n") + len(">>>>>>> theirs\n")
    (sample / "CLAUDE.md").write_text(text[:start] + "- make ours theirs\n" + text[end:])
    git(sample, "add", "CLAUDE.md")
    git(sample, "commit", "-q", "--no-edit")
    settled(sample)
    assert "make ours theirs" in (sample / "CLAUDE.md").read_text()
    assert dirty(sample) == []
    git(sample, "reset", "-q", "--hard", "HEAD~1")
    settled(sample)
    assert "`make ours`" in (sample / "CLAUDE.md").read_text()
    assert dirty(sample) == []
    assert verify(sample).returncode == 0
    edits = [e for e in events_by(sample, "git") if e["path"] == "CLAUDE.md"]
    assert len(edits) >= 2  # the merge's result and the reset, both git's

"""``verify``: the event log's hash chain, its recorded head, and every indexed file against
the index."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memkeeper import Failed, Memory
from memkeeper.ops.verify import problems
from memkeeper.store.sqlite import Store


@pytest.fixture
def memory(memory: Memory) -> Memory:
    """The shared fixture with its store made: ``read`` indexes only where a store exists."""
    assert memory.workspace.store is not None
    return memory


def rules_and_paths(memory: Memory) -> list[tuple[str, str | None]]:
    return [(v.rule, v.path) for v in problems(memory.workspace)]


def sql(memory: Memory, statement: str) -> None:
    sqlite(memory)._db.execute(statement)


def sqlite(memory: Memory) -> Store:
    store = memory.workspace.store
    assert isinstance(store, Store)  # these tests tamper with SQLite's tables
    return store


def git(root: Path, *args: str) -> str:
    identity = {
        f"GIT_{who}_{what}": "t" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL")
    }
    env = {**os.environ, **identity}
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def committed(memory: Memory, sample: Path) -> Memory:
    """The sample committed, with CLAUDE.md and AGENTS.md indexed."""
    git(sample, "add", "-A")
    git(sample, "commit", "-q", "-m", "baseline")
    memory.read("CLAUDE.md")
    memory.read("AGENTS.md")
    return memory


def test_verify_catches_an_edited_event(memory: Memory) -> None:
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    memory.patch("CLAUDE.md#build", "y\n", expect_rev=2)
    assert memory.verify()["events"] == 2
    db = sqlite(memory)._db
    db.execute("UPDATE events SET actor = 'mallory' WHERE id = 1")
    with pytest.raises(Failed) as caught:
        memory.verify()
    assert any(v.rule == "event-chain" for v in caught.value.violations)


def test_verify_reports_a_file_changed_behind_the_index(memory: Memory, sample: Path) -> None:
    memory.read("CLAUDE.md#build")
    (sample / "CLAUDE.md").write_text("# Replaced\n")
    with pytest.raises(Failed) as caught:
        memory.verify()
    assert caught.value.violations[0].path == "CLAUDE.md"
    memory.read("CLAUDE.md")
    assert memory.verify()["files"] >= 1


def test_a_fresh_store_verifies_with_nothing_in_it(memory: Memory) -> None:
    found = memory.verify()
    assert (found["events"], found["files"], found["checkpoint"]) == (0, 0, None)


def test_verify_counts_events_and_indexed_files(memory: Memory) -> None:
    memory.read("CLAUDE.md")
    memory.emit("task.completed", {"task": 1})
    found = memory.verify()
    assert (found["events"], found["files"], found["checked"]) == (1, 1, 1)


def test_a_deleted_last_event_is_caught_by_the_recorded_head(memory: Memory) -> None:
    memory.emit("task.completed", {"n": 1})
    memory.emit("task.completed", {"n": 2})
    sql(memory, "DELETE FROM events WHERE id = 2")
    with pytest.raises(Failed) as caught:
        memory.verify()
    (found,) = caught.value.violations
    assert found.rule == "event-chain"
    assert "event 2: the log ends at event 1" in found.message
    assert "events were deleted from its end" in found.message


@pytest.mark.peer("git")
def test_verify_names_how_many_problems_it_found(memory: Memory, sample: Path) -> None:
    memory.read("CLAUDE.md")
    memory.read("AGENTS.md")
    (sample / "CLAUDE.md").write_text("# Replaced\n")
    (sample / "AGENTS.md").unlink()
    with pytest.raises(Failed, match=r"verify found 2 problem\(s\)"):
        memory.verify()


@pytest.mark.peer("git")
def test_a_missing_indexed_file_is_an_index_problem(memory: Memory, sample: Path) -> None:
    memory.read("AGENTS.md")
    (sample / "AGENTS.md").unlink()
    (found,) = problems(memory.workspace)
    assert (found.path, found.rule) == ("AGENTS.md", "index")
    assert "missing or not a regular file" in found.message


def test_a_stored_hash_that_does_not_match_its_text_is_found(memory: Memory) -> None:
    memory.read("CLAUDE.md")
    sql(memory, "UPDATE sections SET hash = 'sha256:bad' WHERE key = 'inventory-service/build'")
    (found,) = problems(memory.workspace)
    assert found.path == "CLAUDE.md"
    assert "section 'inventory-service/build': stored hash does not match" in found.message


def test_sections_that_do_not_add_up_to_the_file_are_found(memory: Memory) -> None:
    memory.read("CLAUDE.md")
    sql(memory, "DELETE FROM sections WHERE key = 'inventory-service/testing'")
    assert rules_and_paths(memory) == [("index", "CLAUDE.md")]
    assert "do not add up to the file" in problems(memory.workspace)[0].message


def test_a_verified_store_has_no_problems(memory: Memory) -> None:
    memory.read("CLAUDE.md")
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    memory.append("memory/decisions.md", "Keep it simple.")
    assert problems(memory.workspace) == []


# -- files deleted on purpose ----------------------------------------------------------------


@pytest.mark.peer("git")
def test_a_file_deleted_in_a_commit_leaves_verify_clean(committed: Memory, sample: Path) -> None:
    git(sample, "rm", "-q", "AGENTS.md")
    git(sample, "commit", "-q", "-m", "AGENTS.md is gone")
    assert problems(committed.workspace) == []
    assert committed.verify()["files"] == 1


@pytest.mark.peer("git")
def test_a_file_absent_from_the_checked_out_branch_leaves_verify_clean(
    committed: Memory, sample: Path
) -> None:
    home = git(sample, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(sample, "checkout", "-q", "-b", "notes")
    (sample / "memory/notes.md").write_text("# Notes\n\nOnly on this branch.\n")
    git(sample, "add", "memory/notes.md")
    git(sample, "commit", "-q", "-m", "notes")
    committed.read("memory/notes.md")
    git(sample, "checkout", "-q", home)
    assert not (sample / "memory/notes.md").exists()
    assert problems(committed.workspace) == []
    git(sample, "checkout", "-q", "notes")
    assert problems(committed.workspace) == []


@pytest.mark.peer("git")
def test_a_file_missing_but_committed_is_a_problem_with_a_git_fix(
    committed: Memory, sample: Path
) -> None:
    (sample / "AGENTS.md").unlink()
    (found,) = problems(committed.workspace)
    assert (found.path, found.line, found.rule) == ("AGENTS.md", None, "index")
    assert "HEAD still holds it" in found.message
    assert "git checkout HEAD -- AGENTS.md" in found.fix
    assert "git rm AGENTS.md" in found.fix
    git(sample, "rm", "-q", "AGENTS.md")  # staged, not yet committed
    assert [v.rule for v in problems(committed.workspace)] == ["index"]


@pytest.mark.peer("git")
def test_a_file_the_policy_no_longer_manages_is_not_judged(committed: Memory, sample: Path) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text().replace("  - path: AGENTS.md\n", "  - path: GONE.md\n"))
    (sample / "AGENTS.md").write_text("# Changed behind the index\n")
    assert problems(committed.workspace) == []
    (sample / "AGENTS.md").unlink()
    assert problems(committed.workspace) == []
    assert committed.verify()["files"] == 1


@pytest.mark.peer("git")
def test_a_root_below_the_top_of_its_repository_asks_git_about_its_own_paths(
    tmp_path: Path, sample: Path
) -> None:
    top = tmp_path / "mono"
    (top / "services").mkdir(parents=True)
    root = top / "services" / "inventory"
    sample.rename(root)
    (root / ".git").rename(top / ".git")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "baseline")
    memory = Memory.open(root, agent="agent-a")
    assert memory.workspace.store is not None
    memory.read("AGENTS.md")
    (root / "AGENTS.md").unlink()
    (found,) = problems(memory.workspace)
    assert "HEAD still holds it" in found.message
    git(top, "rm", "-q", "services/inventory/AGENTS.md")
    git(top, "commit", "-q", "-m", "gone")
    assert problems(memory.workspace) == []


@pytest.mark.peer("git")
def test_a_missing_file_outside_git_or_before_the_first_commit_is_a_problem(
    memory: Memory, sample: Path
) -> None:
    memory.read("AGENTS.md")
    (sample / "AGENTS.md").unlink()
    (found,) = problems(memory.workspace)
    assert found.fix == "restore it, or remove its rule from the policy"
    (sample / ".git").rename(sample / "not-git")
    assert [v.path for v in problems(memory.workspace)] == ["AGENTS.md"]


def test_verify_under_an_invalid_policy_says_so(memory: Memory, sample: Path) -> None:
    from memkeeper.errors import PolicyInvalid

    memory.read("CLAUDE.md#build")
    (sample / ".memkeeper.yaml").write_text("version: 1\nfiles: [{path: x, class: nonsense}]\n")
    with pytest.raises(PolicyInvalid, match="unknown class 'nonsense'"):
        memory.verify()

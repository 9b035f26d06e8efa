"""The walk for managed files: sorted, matched rule by rule, never into memkeeper's or git's
state, into a dot-directory only when the ecosystem or a glob names it, past symlinks and the
temp files of atomic writes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs.walk import managed_files
from memkeeper.names import temp_name
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import DOT_DIRS, FileRule, Policy, empty_policy
from memkeeper.policy.presets import preset_bytes


def policy_of(*globs: str) -> Policy:
    rules = "".join(f"  - {{path: '{glob}', class: section-owned}}\n" for glob in globs)
    return parse_policy(f"version: 1\nfiles:\n{rules}".encode(), source="p.yaml")


def found(policy: Policy, root: Path) -> list[str]:
    return [relpath for relpath, _ in managed_files(policy, root)]


def write(root: Path, relpath: str, text: str = "# x\n") -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_managed_files_walks_the_tree_sorted_skipping_state_and_symlinks(tmp_path: Path) -> None:
    for relpath in [
        "CLAUDE.md",
        "src/AGENTS.md",
        "README.md",
        "memory/decisions.md",
        ".github/copilot-instructions.md",
        ".cursor/rules/a.mdc",
        ".git/CLAUDE.md",
        ".memkeeper/CLAUDE.md",
        ".venv/lib/AGENTS.md",
        "node_modules/pkg/AGENTS.md",
        ".hidden/AGENTS.md",
    ]:
        write(tmp_path, relpath)
    os.symlink(tmp_path / "CLAUDE.md", tmp_path / "docs-CLAUDE.md")
    os.symlink(tmp_path / "src", tmp_path / "linked", target_is_directory=True)
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "README.md")
    found = managed_files(parse_policy(preset_bytes("default")), tmp_path)
    assert [(relpath, rule.file_class) for relpath, rule in found] == [
        (".cursor/rules/a.mdc", "section-owned"),
        (".github/copilot-instructions.md", "section-owned"),
        ("CLAUDE.md", "section-owned"),
        ("memory/decisions.md", "append-only"),
        ("src/AGENTS.md", "section-owned"),
    ]


def test_managed_files_enters_a_dot_directory_a_glob_names(tmp_path: Path) -> None:
    write(tmp_path, ".clinerules/01-style.md")
    write(tmp_path, ".windsurf/rules/a.md")
    found = managed_files(parse_policy(preset_bytes("cline-memory-bank")), tmp_path)
    assert [relpath for relpath, _ in found] == [".clinerules/01-style.md"]


def test_managed_files_returns_the_matching_rule(tmp_path: Path) -> None:
    write(tmp_path, "memory/status.md")
    policy = parse_policy(preset_bytes("default"))
    [(relpath, rule)] = managed_files(policy, tmp_path)
    assert isinstance(rule, FileRule)
    assert rule is policy.classify(relpath)


def test_managed_files_of_the_empty_policy_is_empty(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md")
    assert managed_files(empty_policy(), tmp_path) == []


def test_a_symlinked_file_is_skipped_even_when_a_rule_names_it(tmp_path: Path) -> None:
    write(tmp_path, "real.md")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    assert found(policy_of("*.md"), tmp_path) == ["real.md"]


def test_a_symlinked_directory_is_not_entered(tmp_path: Path) -> None:
    write(tmp_path, "docs/a.md")
    (tmp_path / "mirror").symlink_to(tmp_path / "docs", target_is_directory=True)
    assert found(policy_of("**/*.md"), tmp_path) == ["docs/a.md"]


def test_the_temp_file_of_an_atomic_write_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "memory/a.md")
    write(tmp_path, f"memory/{temp_name('a.md', 4242)}")
    write(tmp_path, "memory/.a.md.memkeeper-draft.tmp")  # no pid: not one of ours
    assert found(policy_of("memory/**"), tmp_path) == [
        "memory/.a.md.memkeeper-draft.tmp",
        "memory/a.md",
    ]


@pytest.mark.parametrize("name", sorted(DOT_DIRS))
def test_the_ecosystems_dot_directories_are_walked_by_default(tmp_path: Path, name: str) -> None:
    write(tmp_path, f"{name}/rules.md")
    assert found(policy_of("**/*.md"), tmp_path) == [f"{name}/rules.md"]


def test_any_other_dot_directory_is_walked_only_when_a_glob_names_it(tmp_path: Path) -> None:
    write(tmp_path, ".notes/a.md")
    write(tmp_path, ".other/a.md")
    assert found(policy_of("**/*.md"), tmp_path) == []
    assert found(policy_of("**/*.md", ".notes/**"), tmp_path) == [".notes/a.md"]


def test_a_dot_directory_named_deeper_in_a_glob_is_walked_at_any_depth(tmp_path: Path) -> None:
    write(tmp_path, "pkg/.rules/a.md")
    assert found(policy_of("pkg/.rules/*.md"), tmp_path) == ["pkg/.rules/a.md"]


@pytest.mark.parametrize("state", [".git", ".memkeeper"])
def test_git_and_memkeeper_state_are_never_walked_even_when_named(
    tmp_path: Path, state: str
) -> None:
    write(tmp_path, f"{state}/a.md")
    write(tmp_path, f"sub/{state}/b.md")
    write(tmp_path, "c.md")
    assert found(policy_of("**", f"{state}/**", f"**/{state}/**"), tmp_path) == ["c.md"]


@pytest.mark.parametrize("cache", [".venv", "node_modules", "__pycache__"])
def test_tool_caches_are_never_walked(tmp_path: Path, cache: str) -> None:
    write(tmp_path, f"{cache}/a.md")
    assert found(policy_of("**", f"{cache}/**"), tmp_path) == []


def test_the_result_is_sorted_by_path_across_directories(tmp_path: Path) -> None:
    for relpath in ["b.md", "a/z.md", "a.md", "a/b/c.md", "A.md"]:
        write(tmp_path, relpath)
    assert found(policy_of("**/*.md"), tmp_path) == ["A.md", "a.md", "a/b/c.md", "a/z.md", "b.md"]


def test_each_file_gets_the_first_rule_that_matches(tmp_path: Path) -> None:
    write(tmp_path, "memory/a.md")
    write(tmp_path, "memory/scratch/b.md")
    policy = parse_policy(
        b"version: 1\nfiles:\n  - {path: memory/scratch/**, class: private}\n"
        b"  - {path: memory/**, class: section-owned}\n"
    )
    rules = {relpath: rule for relpath, rule in managed_files(policy, tmp_path)}
    assert {relpath: rule.index for relpath, rule in rules.items()} == {
        "memory/a.md": 1,
        "memory/scratch/b.md": 0,
    }
    assert all(isinstance(rule, FileRule) for rule in rules.values())


def test_the_root_may_be_a_string(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md")
    assert [p for p, _ in managed_files(policy_of("CLAUDE.md"), str(tmp_path))] == ["CLAUDE.md"]


def test_a_directory_that_cannot_be_read_holds_nothing_to_manage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "open/a.md")
    write(tmp_path, "locked/b.md")
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if os.path.basename(os.path.normpath(path)) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert found(policy_of("**/*.md"), tmp_path) == ["open/a.md"]


def test_a_missing_root_holds_nothing_to_manage(tmp_path: Path) -> None:
    assert managed_files(policy_of("**"), tmp_path / "gone") == []

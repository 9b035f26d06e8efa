"""Git's index read far enough to set entries' sizes to 0: checked against the indexes real
git writes (versions 2, 3 and 4, SHA-1 and SHA-256, a split index left alone), and against
``git ls-files --debug`` reading the result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.daemon.indexfile import size_offsets, smudged

pytestmark = pytest.mark.peer("git")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def repo(root: Path, *init: str, version: int | None = None) -> Path:
    git(root, "init", "-q", *init)
    if version is not None:
        git(root, "config", "index.version", str(version))
    for rel in ("a.md", "docs/a-long-name-that-shares-a-prefix.md", "docs/a.md", "z.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n")
    git(root, "add", "-A")
    return root


def sizes(root: Path) -> dict[str, str]:
    """Each path's size as git reads it from the index."""
    out = git(root, "ls-files", "--debug").splitlines()
    found, path = {}, ""
    for line in out:
        if not line.startswith(" "):
            path = line
        elif line.strip().startswith("size:"):
            found[path] = line.split()[1]
    return found


@pytest.mark.parametrize("version", [2, 3, 4])
def test_each_index_version_has_its_entries_found_and_sizes_set_to_zero(
    tmp_path: Path, version: int
) -> None:
    root = repo(tmp_path, version=version)
    if version == 3:
        (root / "new.md").write_text("new\n")
        git(root, "add", "-N", "new.md")  # intent to add: an extended entry
    index = root / ".git/index"
    data = index.read_bytes()
    offsets = size_offsets(data)
    assert offsets is not None
    assert b"docs/a-long-name-that-shares-a-prefix.md" in offsets
    out = smudged(data, frozenset({b"docs/a.md", b"z.md", b"missing.md"}))
    assert out is not None
    index.write_bytes(out)
    found = sizes(root)
    assert (found["docs/a.md"], found["z.md"]) == ("0", "0")
    assert found["a.md"] != "0"
    assert found["docs/a-long-name-that-shares-a-prefix.md"] != "0"
    assert smudged(out, frozenset({b"docs/a.md"})) is None  # nothing left to change
    status = git(root, "status", "--porcelain", "--untracked-files=no").splitlines()
    assert [line for line in status if line[1] == "M"] == []  # none modified in the tree


def test_a_sha256_repository_is_read(tmp_path: Path) -> None:
    root = repo(tmp_path, "--object-format=sha256")
    out = smudged((root / ".git/index").read_bytes(), frozenset({b"a.md"}))
    assert out is not None
    (root / ".git/index").write_bytes(out)
    assert sizes(root)["a.md"] == "0"


def test_a_split_index_and_other_files_are_not_read(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "update-index", "--split-index")
    assert smudged((root / ".git/index").read_bytes(), frozenset({b"a.md"})) is None
    assert smudged(b"not an index", frozenset({b"a.md"})) is None
    assert smudged(b"", frozenset()) is None

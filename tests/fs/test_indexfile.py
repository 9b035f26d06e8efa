"""Git's index read far enough to refresh entries' stat data: checked against the indexes real
git writes (versions 2, 3 and 4, SHA-1 and SHA-256, a split index left alone), and against
``git ls-files --debug`` reading the result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.fs.indexfile import refreshed, size_offsets

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
def test_each_index_version_has_its_entries_found_and_refreshed(
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
    stamp = (1, 2, 3, 4, 5, 6, 7, 8, 9)
    files = {
        b"docs/a.md": (stamp, b"docs/a.md\n"),  # the blob it names
        b"z.md": (stamp, b"another text\n"),  # not: left alone
        b"missing.md": (stamp, b""),
    }
    out = refreshed(data, files)
    assert out is not None
    index.write_bytes(out)
    found = sizes(root)
    assert (found["docs/a.md"], found["z.md"]) == ("9", "5")
    debug = git(root, "ls-files", "--debug", "docs/a.md")
    assert "ctime: 1:2" in debug
    assert "mtime: 3:4" in debug
    assert "dev: 5\tino: 6" in debug
    assert "uid: 7\tgid: 8" in debug
    assert refreshed(out, files) is None  # nothing left to change
    git(root, "status", "--porcelain")  # git reads it (a bad checksum would be fatal)


def test_a_sha256_repository_is_read(tmp_path: Path) -> None:
    root = repo(tmp_path, "--object-format=sha256")
    files = {b"a.md": ((1, 2, 3, 4, 5, 6, 7, 8, 42), b"a.md\n")}
    out = refreshed((root / ".git/index").read_bytes(), files)
    assert out is not None
    (root / ".git/index").write_bytes(out)
    assert sizes(root)["a.md"] == "42"


def test_a_split_index_and_other_files_are_not_read(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "update-index", "--split-index")
    files = {b"a.md": ((1, 2, 3, 4, 5, 6, 7, 8, 42), b"a.md\n")}
    assert refreshed((root / ".git/index").read_bytes(), files) is None
    assert refreshed(b"not an index", files) is None
    assert refreshed(b"", {}) is None

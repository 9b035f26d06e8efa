"""Git's index read far enough to refresh entries' stat data: checked against the indexes real
git writes (versions 2, 3 and 4, SHA-1 and SHA-256, a split index left alone), and against
``git ls-files --debug`` reading the result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.fs.indexfile import marked, refreshed, size_offsets

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


@pytest.mark.parametrize(
    ("version", "init"), [(2, ()), (3, ()), (4, ()), (None, ("--object-format=sha256",))]
)
def test_an_entry_is_marked_assume_valid_as_git_marks_it_and_unmarked_by_a_refresh(
    tmp_path: Path, version: int | None, init: tuple[str, ...]
) -> None:
    """``marked`` sets the bit ``git update-index --assume-unchanged`` sets, beside an
    extended entry's flags, on entries that name the file's blob; ``refreshed(..., unmark)``
    clears it, its stat data refreshed or not."""
    root = repo(tmp_path, *init, version=version)
    if version == 3:
        (root / "new.md").write_text("new\n")
        git(root, "add", "-N", "new.md")
    index = root / ".git/index"
    data = index.read_bytes()
    out = marked(data, {b"docs/a.md": b"docs/a.md\n", b"z.md": b"z.md\n", b"missing.md": b""})
    assert out is not None
    assert marked(out, {b"docs/a.md": b"docs/a.md\n"}) is None  # marked already
    assert marked(data, {b"missing.md": b""}) is None
    assert marked(data, {b"a.md": b"a.md, edited\n"}) is None  # modified for git: not marked
    index.write_bytes(out)
    assert "h docs/a.md\n" in git(root, "ls-files", "-v")
    assert "h z.md\n" in git(root, "ls-files", "-v")
    git(root, "update-index", "--no-assume-unchanged", "z.md")
    git(root, "update-index", "--assume-unchanged", "z.md")  # git's own mark: the same bit
    assert marked(index.read_bytes(), {b"docs/a.md": b"docs/a.md\n", b"z.md": b"z.md\n"}) is None
    (root / "docs/a.md").write_text("changed, and longer\n")
    ours = ("docs/a.md", "z.md")
    assert git(root, "diff-files", "--name-only", "--", *ours) == ""  # git looks not at it
    stamp = (1, 2, 3, 4, 5, 6, 7, 8, 9)
    again = refreshed(index.read_bytes(), {b"z.md": (stamp, b"z.md\n")}, [b"docs/a.md", b"z.md"])
    assert again is not None
    index.write_bytes(again)
    listed = git(root, "ls-files", "-v")
    assert "H docs/a.md\n" in listed
    assert "H z.md\n" in listed
    assert sizes(root)["z.md"] == "9"
    assert git(root, "diff-files", "--name-only", "--", *ours) == "docs/a.md\nz.md\n"  # looked at
    if version == 3:
        assert "new.md" in git(root, "ls-files", "-v")  # the extended entry still read


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

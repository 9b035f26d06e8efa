"""The marks of a root that shares a store (``.memkeeper/synced/``): what ``write_mark`` writes
``read_mark`` gives back, byte for byte; a write goes through a temp file and a rename, so one
that fails leaves the previous mark whole, and what a crashed one left is written over by the
next; a mark that is missing, torn, foreign or of another path reads as none; ``drop_mark``
forgets one mark only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memkeeper.fs import background
from memkeeper.fs.synced import Mark, drop_mark, read_mark, write_mark
from memkeeper.names import SYNCED_DIR, kept_tag

HASH = "sha256:" + "ab" * 32


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / ".memkeeper")  # not there yet: the first write makes it


def where(home: str, rel: str) -> Path:
    return Path(home, SYNCED_DIR, kept_tag(rel))


def listing(home: str) -> list[str]:
    """The synced directory's names once the background has removed replaced marks."""
    background.drain()
    return sorted(os.listdir(os.path.join(home, SYNCED_DIR)))


def same(a: Mark | None, b: Mark) -> bool:
    return a is not None and (a.path, a.rev, a.hash, a.data) == (b.path, b.rev, b.hash, b.data)


DATA = [
    b"# Title\n\nbody\n",
    b"",
    b"\n\n",
    b'{"path": "x", "rev": 9, "hash": "h"}\nlooks like a head\n',
    bytes(range(256)),
    "caf\u00e9 \u2713\r\n".encode(),
]


@pytest.mark.parametrize("data", DATA)
def test_a_mark_reads_back_as_written(home: str, data: bytes) -> None:
    mark = Mark("memory/notes.md", 7, HASH, data)
    write_mark(home, mark)
    assert same(read_mark(home, "memory/notes.md"), mark)


def test_the_file_is_a_json_head_line_then_the_bytes(home: str) -> None:
    write_mark(home, Mark("CLAUDE.md", 3, HASH, b"a\nb\n"))
    head, _, data = where(home, "CLAUDE.md").read_bytes().partition(b"\n")
    assert json.loads(head) == {"path": "CLAUDE.md", "rev": 3, "hash": HASH}
    assert data == b"a\nb\n"


def test_a_path_never_agreed_on_has_no_mark(home: str) -> None:
    assert read_mark(home, "CLAUDE.md") is None  # nor a synced directory yet
    write_mark(home, Mark("AGENTS.md", 1, HASH, b"x"))
    assert read_mark(home, "CLAUDE.md") is None


def test_a_new_mark_replaces_the_old_and_leaves_no_temp_or_old_link(home: str) -> None:
    write_mark(home, Mark("CLAUDE.md", 1, HASH, b"first\n"))
    newer = Mark("CLAUDE.md", 2, "sha256:" + "cd" * 32, b"second\n")
    write_mark(home, newer)
    assert same(read_mark(home, "CLAUDE.md"), newer)
    assert listing(home) == [kept_tag("CLAUDE.md")]


def test_each_path_has_a_mark_of_its_own(home: str) -> None:
    marks = [Mark(rel, n, HASH, rel.encode()) for n, rel in enumerate(["a.md", "b/a.md", "A.md"])]
    for mark in marks:
        write_mark(home, mark)
    for mark in marks:
        assert same(read_mark(home, mark.path), mark)
    assert listing(home) == sorted(kept_tag(m.path) for m in marks)


def test_a_write_that_fails_before_its_rename_leaves_the_previous_mark(
    home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = Mark("CLAUDE.md", 1, HASH, b"agreed\n")
    write_mark(home, kept)

    def crash(src: str, dst: str) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="the disk went away"):
        write_mark(home, Mark("CLAUDE.md", 2, HASH, b"newer\n"))
    monkeypatch.undo()
    assert same(read_mark(home, "CLAUDE.md"), kept)
    staged = [n for n in listing(home) if n.endswith(".tmp")]
    assert staged == [f"{kept_tag('CLAUDE.md')}.{os.getpid()}.tmp"]  # the write's own, unread


def test_a_temp_or_old_link_left_by_a_crashed_write_is_written_over(home: str) -> None:
    write_mark(home, Mark("CLAUDE.md", 1, HASH, b"first\n"))
    base = where(home, "CLAUDE.md")
    Path(f"{base}.{os.getpid()}.tmp").write_bytes(b"torn temp, much longer than the mark " * 9)
    Path(f"{base}.{os.getpid()}.old").write_bytes(b"an old link a crash left")
    newer = Mark("CLAUDE.md", 2, HASH, b"second\n")
    write_mark(home, newer)
    assert same(read_mark(home, "CLAUDE.md"), newer)
    assert listing(home) == [kept_tag("CLAUDE.md")]


TORN = [
    b"",  # created, never written
    b'{"path": "CLAUDE.md", "rev": 1, "hash": "sha256:ab"}',  # the head without its newline
    b'{"path": "CLAUDE.md", "rev": 1, "ha',
    b"not json\nbytes\n",
    b"\xff\xfe\nbytes\n",
    b"[1, 2, 3]\nbytes\n",
    b"5\nbytes\n",
    b'{"path": "CLAUDE.md", "hash": "sha256:ab"}\nbytes\n',
    b'{"rev": 1, "hash": "sha256:ab"}\nbytes\n',
    b'{"path": "CLAUDE.md", "rev": 1}\nbytes\n',
    b'{"path": "CLAUDE.md", "rev": "one", "hash": "sha256:ab"}\nbytes\n',
    b'{"path": "CLAUDE.md", "rev": null, "hash": "sha256:ab"}\nbytes\n',
    b'{"path": "AGENTS.md", "rev": 1, "hash": "sha256:ab"}\nbytes\n',  # another path's
    b'{"path": 5, "rev": 1, "hash": "sha256:ab"}\nbytes\n',
]


@pytest.mark.parametrize("raw", TORN)
def test_a_torn_or_foreign_mark_reads_as_none(home: str, raw: bytes) -> None:
    path = where(home, "CLAUDE.md")
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    assert read_mark(home, "CLAUDE.md") is None


def test_a_head_with_a_numeric_string_rev_still_reads(home: str) -> None:
    path = where(home, "CLAUDE.md")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"path": "CLAUDE.md", "rev": "4", "hash": "sha256:ab"}\nbytes')
    found = read_mark(home, "CLAUDE.md")
    assert found is not None
    assert (found.rev, found.hash, found.data) == (4, "sha256:ab", b"bytes")


def test_drop_forgets_one_mark_and_a_missing_one_is_no_error(home: str) -> None:
    write_mark(home, Mark("CLAUDE.md", 1, HASH, b"x"))
    write_mark(home, Mark("AGENTS.md", 1, HASH, b"y"))
    drop_mark(home, "CLAUDE.md")
    assert read_mark(home, "CLAUDE.md") is None
    assert read_mark(home, "AGENTS.md") is not None
    drop_mark(home, "CLAUDE.md")
    drop_mark(home, "never-marked.md")
    drop_mark(str(Path(home).parent / "no-home"), "CLAUDE.md")


def test_a_mark_shows_its_path_rev_and_the_start_of_its_hash() -> None:
    shown = repr(Mark("CLAUDE.md", 3, HASH, b"x"))
    assert shown == "Mark('CLAUDE.md', rev=3, hash=sha256:abababab…)"

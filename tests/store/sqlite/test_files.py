"""The files, sections and bodies tables of a real SQLite store: a file's state, its section
rows in document order (absent ones last), one section read with its file's state, the
context a patch splices into; then the bodies, statement by statement: a row's current body
is stored once (its row's) and archived when the section moves on; a body is kept once
per rev (the first one stays) and only for present rows; pruning runs every ``PRUNE_EVERY``
revs for the section it is due for and nothing else, so a section always has between
``KEEP_BODIES`` and ``KEEP_BODIES + PRUNE_EVERY - 1`` bodies. (What both backends share:
tests/store/contract/.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memkeeper import events as ev
from memkeeper.records import FileState, SectionRow
from memkeeper.store.bodies import KEEP_BODIES, PRUNE_EVERY

if TYPE_CHECKING:
    from memkeeper.store.sqlite import Store


def row(key: str, ord_: int, *, present: bool = True, body: bytes = b"body\n") -> SectionRow:
    heading = f"## {key}\n".encode()
    return SectionRow(
        key=key,
        ord=ord_,
        rev=1,
        hash=ev.digest(heading + body) if present else None,
        present=present,
        title=key,
        level=2,
        base=key.rsplit("/", 1)[-1],
        heading=heading,
        body=body,
        lines=2,
    )


def at_rev(key: str, rev: int, body: bytes = b"text\n", *, present: bool = True) -> SectionRow:
    heading = f"# {key}\n".encode()
    hash_ = ev.digest(heading + body) if present else None
    return SectionRow(key, 0, rev, hash_, present, key, 1, key, heading, body, 2)


def keep(store: Store, path: str, *rows: SectionRow) -> None:
    with store.writing():
        store.keep_bodies(path, rows)


def kept_revs(store: Store, path: str, key: str) -> list[int]:
    sql = "SELECT rev FROM bodies WHERE path = ? AND key = ? ORDER BY rev"
    return [rev for (rev,) in store._db.execute(sql, (path, key)).fetchall()]


def body_count(store: Store) -> int:
    return int(store._db.execute("SELECT COUNT(*) FROM bodies").fetchone()[0])


# -- files and sections ---------------------------------------------------------------------


def test_put_file_inserts_then_updates(store: Store) -> None:
    assert store.file_state("a.md") is None
    with store.writing():
        store.put_file("a.md", FileState(1, "sha256:a"))
        store.put_file("b.md", FileState(1, "sha256:b"))
        store.put_file("a.md", FileState(2, "sha256:c"))
    assert store.file_state("a.md") == FileState(2, "sha256:c")
    assert store.indexed_paths() == ["a.md", "b.md"]


@pytest.fixture
def indexed(store: Store) -> Store:
    """``a.md`` with present sections a (ord 0), b/c (ord 1), d (ord 2) and an absent ``gone``."""
    with store.writing():
        store.put_file("a.md", FileState(4, "sha256:file"))
        store.put_sections(
            "a.md",
            [
                row("d", 2, body=b"dddd\n"),
                row("a", 0, body=b""),
                row("gone", 1, present=False),
                row("b/c", 1, body=b"cc\n"),
            ],
        )
        store.put_sections("other.md", [row("a", 0, body=b"elsewhere\n")])
    return store


def test_sections_lists_present_rows_in_document_order(indexed: Store) -> None:
    assert [s.key for s in indexed.sections("a.md")] == ["a", "b/c", "d"]
    assert indexed.sections("a.md")[1] == row("b/c", 1, body=b"cc\n")


def test_sections_with_absent_lists_absent_rows_last(indexed: Store) -> None:
    listed = indexed.sections("a.md", with_absent=True)
    assert [(s.key, s.present, s.hash) for s in listed][-1] == ("gone", False, None)
    assert [s.key for s in listed] == ["a", "b/c", "d", "gone"]


def test_section_keys_gives_key_and_base_of_present_sections(indexed: Store) -> None:
    assert indexed.section_keys("a.md") == [("a", "a"), ("b/c", "c"), ("d", "d")]
    assert indexed.section_keys("missing.md") == []


def test_indexed_section_reads_the_file_state_with_the_section(indexed: Store) -> None:
    found = indexed.indexed_section("a.md", "b/c")
    assert found == (FileState(4, "sha256:file"), row("b/c", 1, body=b"cc\n"))
    assert isinstance(found[1].heading, bytes)


def test_indexed_section_is_none_for_absent_unknown_or_unindexed(indexed: Store) -> None:
    assert indexed.indexed_section("a.md", "gone") is None
    assert indexed.indexed_section("a.md", "nope") is None
    assert indexed.indexed_section("other.md", "a") is None  # no files row


def test_put_sections_replaces_a_row_by_key(indexed: Store) -> None:
    with indexed.writing():
        indexed.put_sections("a.md", [row("gone", 3, body=b"back\n")._replace(rev=2)])
    back = indexed.indexed_section("a.md", "gone")
    assert back is not None
    assert (back[1].rev, back[1].body, back[1].present) == (2, b"back\n", True)


def test_splice_context_sums_present_sections_before_an_ord(indexed: Store) -> None:
    heading = len(b"## a\n")
    assert indexed.splice_context("a.md", 0)[0] == 0
    assert indexed.splice_context("a.md", 1)[0] == heading
    assert indexed.splice_context("a.md", 2)[0] == heading + len(b"## b/c\ncc\n")
    assert indexed.splice_context("a.md", 99) == (heading + len(b"## b/c\ncc\n## d\ndddd\n"), None)
    assert indexed.splice_context("missing.md", 5) == (0, None)


# -- bodies -----------------------------------------------------------------------------------


def test_a_body_comes_back_as_bytes_at_its_rev_only(store: Store) -> None:
    keep(store, "a.md", at_rev("log", 3, b"\xff\x00three\n"))
    found = store.body_at("a.md", "log", 3)
    assert found == b"\xff\x00three\n"
    assert type(found) is bytes
    assert store.body_at("a.md", "log", 2) is None
    assert store.body_at("a.md", "other", 3) is None
    assert store.body_at("b.md", "log", 3) is None


def test_the_first_body_kept_at_a_rev_stays(store: Store) -> None:
    keep(store, "a.md", at_rev("log", 3, b"first\n"))
    keep(store, "a.md", at_rev("log", 3, b"second\n"))
    assert store.body_at("a.md", "log", 3) == b"first\n"
    assert body_count(store) == 1


def test_absent_rows_keep_no_body(store: Store) -> None:
    keep(store, "a.md", at_rev("gone", 4, b"", present=False))
    keep(store, "a.md")  # no rows at all
    assert body_count(store) == 0
    keep(store, "a.md", at_rev("gone", 5, b"", present=False), at_rev("here", 5, b"here\n"))
    assert [kept_revs(store, "a.md", k) for k in ("gone", "here")] == [[], [5]]


def test_a_due_prune_forgets_only_its_own_sections_old_bodies(store: Store) -> None:
    with store.writing():
        for rev in range(1, PRUNE_EVERY + 5):
            store.keep_bodies("a.md", [at_rev("log", rev), at_rev("notes", rev)])
            store.keep_bodies("b.md", [at_rev("log", rev)])
    due = KEEP_BODIES + PRUNE_EVERY  # its cut, rev - KEEP_BODIES, is a multiple of PRUNE_EVERY
    keep(store, "a.md", at_rev("log", due))
    assert kept_revs(store, "a.md", "log") == [*range(PRUNE_EVERY + 1, PRUNE_EVERY + 5), due]
    assert kept_revs(store, "a.md", "notes") == list(range(1, PRUNE_EVERY + 5))
    assert kept_revs(store, "b.md", "log") == list(range(1, PRUNE_EVERY + 5))


def test_a_rev_not_due_prunes_nothing(store: Store) -> None:
    keep(store, "a.md", at_rev("log", 1), at_rev("log", 2), at_rev("log", 3))
    late = KEEP_BODIES + PRUNE_EVERY + 1  # its cut is one past a multiple of PRUNE_EVERY
    keep(store, "a.md", at_rev("log", late))
    keep(store, "a.md", at_rev("log", KEEP_BODIES + 3))  # cut 3: not due either
    assert kept_revs(store, "a.md", "log") == [1, 2, 3, KEEP_BODIES + 3, late]


def test_a_section_written_rev_after_rev_keeps_its_last_bodies_within_the_bounds(
    store: Store,
) -> None:
    counts = []
    with store.writing():
        for rev in range(1, KEEP_BODIES + 3 * PRUNE_EVERY + 1):
            store.keep_bodies("a.md", [at_rev("log", rev)])
            revs = kept_revs(store, "a.md", "log")
            assert revs == list(range(revs[0], rev + 1))  # the newest, without a gap
            counts.append(len(revs))
    assert counts[: KEEP_BODIES + 1] == list(range(1, KEEP_BODIES + 2))  # nothing pruned yet
    steady = counts[KEEP_BODIES:]
    assert min(steady) == KEEP_BODIES
    assert max(steady) == KEEP_BODIES + PRUNE_EVERY - 1


def test_a_rows_current_body_is_stored_once_and_archived_when_it_moves_on(store: Store) -> None:
    with store.writing():  # a new file: its bodies are its rows', nothing else holds them
        store.put_sections("a.md", [at_rev("log", 1, b"one\n"), at_rev("notes", 1, b"n\n")])
    assert body_count(store) == 0
    assert store.body_at("a.md", "log", 1) == b"one\n"  # answered from the row
    with store.writing():  # the same rev again (a move): nothing to archive
        store.put_sections("a.md", [at_rev("log", 1, b"one\n")])
    assert body_count(store) == 0
    with store.writing():
        store.put_sections("a.md", [at_rev("log", 2, b"two\n")])
        store.put_sections("a.md", [at_rev("notes", 1, b"", present=False)])
    assert kept_revs(store, "a.md", "log") == [1]
    assert kept_revs(store, "a.md", "notes") == [1]  # gone: its last body archived
    answers = [store.body_at("a.md", k, rev) for k, rev in (("log", 1), ("log", 2), ("notes", 1))]
    assert answers == [b"one\n", b"two\n", b"n\n"]
    assert store.body_at("a.md", "log", 3) is None


# -- versions -----------------------------------------------------------------------------------


def test_a_local_store_knows_no_other_versions(store: Store) -> None:
    store.keep_version("CLAUDE.md", "sha256:1", 1)
    assert store.version_rev("CLAUDE.md", "sha256:1") is None


def test_a_sha256_hash_is_stored_as_its_32_bytes_and_read_back_as_text(store: Store) -> None:
    digest = ev.digest(b"# a\ntext\n")
    odd = ["sha256:" + "A" * 64, "sha256:" + "g" * 64, "sha256:short"]
    rows = [at_rev(f"k{n}", 1)._replace(hash=h, ord=n) for n, h in enumerate([digest, *odd])]
    with store.writing():
        store.put_sections("a.md", rows)
    cells = store._db.execute("SELECT hash FROM sections WHERE path = 'a.md' ORDER BY key")
    assert [type(cell) for (cell,) in cells] == [bytes, str, str, str]
    assert [r.hash for r in store.sections("a.md")] == [digest, *odd]
    store._db.execute(  # a row as schema 12 wrote it: the hash as text
        "UPDATE sections SET hash = ? WHERE path = 'a.md' AND key = 'k0'", (digest,)
    )
    assert store.sections("a.md") == rows

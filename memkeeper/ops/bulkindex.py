"""Indexing many files at once (``init``, ``status``, the files a daemon finds never indexed
at its start: ``index_new``): in batches, each batch one store
transaction — one sync of SQLite's log, one etcd transaction — rather than one per file, and
the policy's verdicts of all the files worked out with one parse of the policy.

A file whose bytes hash to what the index holds is only counted. The others go in batches:
the batch's file locks are taken first, each without waiting — a file another process holds
(a patch in progress) is left to the one-file path, ``refresh``, which waits for it — then
one transaction reads, splits and indexes each file as ``refresh`` would
(``Indexing.index_file``: a change to a file indexed before is an external edit, with its
events). So the order is every writer's: the file's lock, then the transaction. A file that
is not text is reported, not indexed, and the rest of its batch goes on; a save in progress
(``Raced``) is left to ``refresh`` too.

A batch is ``BATCH_FILES`` files or ``BATCH_BYTES`` bytes, whichever comes first: its locks
are held while it is indexed, so a patch of one of its files waits that long (splitting and
indexing a file of 20 sections takes ~3 ms here). A batch that fails midway for one file —
a save that raced a replace being redone, say — is rolled back whole and its files go one by
one. With a shared store a batch starts at ``SHARED_FILES`` files and ``SHARED_BYTES``:
etcd takes at most 128 operations (a new file costs three: its rows, its state, its
version) and 1.5 MiB per transaction (``store.etcd.core``); a batch refused as too large —
before anything is sent — is split in two until a file is alone.
"""

from __future__ import annotations

import contextlib
import os

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.events import digest
from memkeeper.fs import files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memkeeper.ops.workspace import Workspace

BATCH_FILES = 64
BATCH_BYTES = 8 << 20
SHARED_FILES = 32
SHARED_BYTES = 256 << 10

# What indexing said of a file: how many sections it has, or what is wrong with it.
Indexed = int | str


def index_files(ws: Workspace, rels: list[str]) -> dict[str, Indexed]:
    """Bring the index of each of ``rels`` (managed, not private) up to date with its file;
    for each, its number of sections or the message of what is wrong with it. A root without
    a store gets none: each file is split from the disk (``read.present_rows``)."""
    if not ws.has_store:
        return {rel: _one(ws, rel) for rel in rels}
    ws.remember_rules(rels)
    out: dict[str, Indexed] = {}
    todo: list[tuple[str, int]] = []
    held = set(ws.store.indexed_paths())
    for rel in rels:
        if rel not in held:  # new: its size is enough to batch it (read in the batch)
            todo.append((rel, _size(ws, rel)))
            continue
        state = ws.store.file_state(rel)
        try:
            data = files.read_bytes(ws.top, rel)
        except Invalid as exc:
            out[rel] = exc.message
            continue
        if state is not None and state.file_hash == digest(data):
            ws.seen_agreeing(rel, state, data)
            out[rel] = len(ws.store.section_keys(rel))
        else:
            todo.append((rel, len(data)))
    most, size = (SHARED_FILES, SHARED_BYTES) if ws.shared else (BATCH_FILES, BATCH_BYTES)
    for batch in batches(todo, most, size):
        out.update(_index_batch(ws, batch))
    return out


def batches(sized: list[tuple[str, int]], most: int, size: int) -> Iterator[list[str]]:
    """The names of ``sized`` (name, bytes), in order, in runs of at most ``most`` names and
    ``size`` bytes — a name bigger than ``size`` alone."""
    run: list[str] = []
    total = 0
    for name, length in sized:
        if run and (len(run) == most or total + length > size):
            yield run
            run, total = [], 0
        run.append(name)
        total += length
    if run:
        yield run


def _index_batch(ws: Workspace, batch: list[str]) -> dict[str, Indexed]:
    found: dict[str, Indexed | None] = {}
    with contextlib.ExitStack() as held:
        mine = [rel for rel in sorted(batch) if held.enter_context(ws.try_locked(rel))]
        if mine:
            found = _split_until_it_fits(ws, mine)
    out: dict[str, Indexed] = {}
    for rel in batch:  # locked by another process, or a save in progress: one by one
        indexed = found.get(rel)
        out[rel] = _one(ws, rel) if indexed is None else indexed
    return out


def _split_until_it_fits(ws: Workspace, rels: list[str]) -> dict[str, Indexed | None]:
    try:
        if ws.shared:
            return ws.again(lambda: _transaction(ws, rels))
        return _transaction(ws, rels)
    except (files.Raced, Invalid):  # from index_file itself, rolled back: one by one
        return dict.fromkeys(rels)
    except EnvironmentFailure as exc:
        if exc.reason != "store_too_large" or len(rels) == 1:
            raise
    half = len(rels) // 2
    return {**_split_until_it_fits(ws, rels[:half]), **_split_until_it_fits(ws, rels[half:])}


def _transaction(ws: Workspace, rels: list[str]) -> dict[str, Indexed | None]:
    """Index ``rels`` (their locks held) in one transaction: each one's count of sections,
    the message of what is wrong with it, or None for a save in progress."""
    from memkeeper.markdown.sections import split

    out: dict[str, Indexed | None] = {}
    with ws.writing():
        ws.store.prefetch_files(rels)
        for rel in rels:
            try:
                data = files.read_bytes(ws.top, rel, whole=True)
                doc = split(data, rel)
            except files.Raced:
                out[rel] = None
                continue
            except Invalid as exc:
                out[rel] = exc.message
                continue
            indexed = ws.index_file(rel, data, doc=doc)
            if indexed is None:  # unchanged after all, or settled and indexed there
                out[rel] = len(ws.store.section_keys(rel))
            else:
                out[rel] = len(indexed.sections)
    return out


def _size(ws: Workspace, rel: str) -> int:
    """The file's size as ``lstat`` sees it (0 if it is not there: the batch will say)."""
    try:
        return os.lstat(os.path.join(ws.top, rel)).st_size
    except OSError:
        return 0


def _one(ws: Workspace, rel: str) -> Indexed:
    from memkeeper.ops import read

    try:
        return len(read.present_rows(ws, rel))
    except Invalid as exc:
        return exc.message


def index_new(ws: Workspace, rels: list[str]) -> list[str]:
    """The files of ``rels`` the index has never held, indexed in batches (a daemon started
    on a repository not indexed yet); those indexed. The others are left as they are."""
    held = set(ws.store.indexed_paths())
    new = [rel for rel in rels if rel not in held]
    found = index_files(ws, new) if new else {}
    return [rel for rel in new if isinstance(found[rel], int)]

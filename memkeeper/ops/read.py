"""``sections`` and ``read``: answered from the index when the file is unchanged.

A read of an indexed, unchanged file parses no Markdown and no YAML: the index holds each
section's bytes and line count. A changed file is indexed first (as an external edit).
Two kinds of read store nothing and answer from the file alone, as its first indexing would
(every rev 1): a private file (never copied into the store), and any file of a root without
a store (read-only commands create no state where there is none).
"""

from __future__ import annotations

import contextlib

from memkeeper.errors import EnvironmentFailure
from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.markdown import refs
from memkeeper.records import SectionInfo, SectionText
from memkeeper.store.retry import Retry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import FileState, SectionRow

# A writer may land between a read of the file and the index: looked at again, at once.
_READ_ATTEMPTS = 20
_READ = Retry(_READ_ATTEMPTS)


def sections(ws: Workspace, rel: str) -> list[SectionInfo]:
    """The sections of a root-relative path, indexing it first if it changed."""
    out, line = [], 1
    for row in present_rows(ws, rel):
        assert row.hash is not None
        out.append(
            SectionInfo(
                row.key, row.title, row.level, row.rev, row.hash, line, line + row.lines - 1
            )
        )
        line += row.lines
    return out


def present_rows(ws: Workspace, rel: str) -> list[SectionRow]:
    """The present sections of ``rel`` in order: from the index, brought up to date first —
    or, for a file that is not to be stored, split from the disk (``unstored``)."""
    if unstored(ws, rel):
        return _split(ws, rel)[1]
    ws.refresh(rel)
    return ws.store.sections(rel)


def unstored(ws: Workspace, rel: str) -> bool:
    """True when ``rel`` is answered from the disk and nothing of it is stored: a root
    without a store (none is created to read), or a private file."""
    return not ws.has_store or ws.rule(rel).file_class == "private"


def read(ws: Workspace, ref: str) -> SectionText:
    """A section (``PATH#KEY``) or a whole file (``PATH``) with its revisions. With a shared
    store that does not answer, the local file's text, marked ``stale`` (its revisions are
    those of the file's own first indexing: the store's are unknown)."""
    path, key = refs.split_ref(ref)
    rel = ws.relpath(path)
    if not ws.has_store:
        return _read_unstored(ws, rel, key, None)
    if not ws.shared:
        answer = _read(ws, rel, key)
    else:
        from memkeeper.store.errors import StoreRefused, StoreUnavailable  # a shared store's

        try:
            answer = ws.again(lambda: _read(ws, rel, key))  # (a snapshot moved on meanwhile)
        except StoreRefused:
            raise  # a setting to fix (a password, a certificate): said, not answered around
        except StoreUnavailable:
            return _read_unstored(ws, rel, key, None)._replace(stale=True)
    if not answer.stale:
        _remember(ws, rel, answer)
    return answer


def _remember(ws: Workspace, rel: str, answer: SectionText) -> None:
    """Write down what this identity read of a section-owned file (each section of it, for a
    whole file), for the channel's "changed since you read it" (``mail.reads``): one small
    row per section, written only when newer than the one held — a read again of an
    unchanged section writes nothing. Not worth a durable commit: a lost row costs a notice."""
    from memkeeper.mail import reads

    if ws.rule(rel).file_class not in reads.CLASSES:
        return

    def once() -> None:
        if answer.key is not None:
            revs = {answer.key: answer.rev}
        else:
            revs = {row.key: row.rev for row in ws.store.sections(rel)}
        fresh = reads.to_record(ws.store.reads_of(ws.agent, rel), revs)
        if fresh:
            with ws.store.writing(durable=False):
                ws.store.record_reads(ws.agent, rel, fresh)

    # Started over when a shared store's writer got in first (or a commit's answer was lost);
    # a store gone, or busy, since it answered costs the row, never the read.
    with contextlib.suppress(EnvironmentFailure):
        ws.again(once)


def _read(ws: Workspace, rel: str, key: str | None) -> SectionText:
    # the policy's verdict (cached by its hash): an invalid policy is exit 2 here too
    ws.rule(rel)
    for _ in _READ.tries():
        data = files.read_bytes(ws.top, rel)
        answer = _read_indexed(ws, rel, key, digest(data), data)
        if answer is not None:
            return answer
        if ws.rule(rel).file_class == "private":
            return _read_unstored(ws, rel, key, data)
        if ws.shared and ws.diverged(rel) is not None:  # this root's copy, which the store
            return _read_unstored(ws, rel, key, data)._replace(stale=True)  # does not have
        if ws.refresh(rel) is False:
            # a save in progress the whole time it was waited for: not read half written
            break
    answer = _read_indexed(ws, rel, key, None, None)  # what the index holds, at least
    if answer is None:
        raise EnvironmentFailure(
            f"{rel}: another program has it open for writing (a save in progress) and "
            "memkeeper has never read it whole — nothing was read; try again once the save "
            "is done",
            path=rel,
            reason="being_written",
        )
    return answer


def _read_indexed(
    ws: Workspace, rel: str, key: str | None, file_hash: str | None, data: bytes | None
) -> SectionText | None:
    """Answer from the index, if it holds ``file_hash`` (``None``: whatever it holds)."""
    with ws.store.reading():
        state = ws.store.file_state(rel)
        if state is None or file_hash not in (None, state.file_hash):
            return None
        if data is not None:
            ws.seen_agreeing(rel, state, data)
        if key is None:
            whole = data if data is not None else files.read_bytes(ws.top, rel)
            return SectionText(
                rel,
                None,
                "",
                whole.decode("utf-8"),
                state.file_rev,
                state.file_hash,
                state.file_rev,
                state.file_hash,
            )
        found = ws.section_row(rel, key)
    return section_text(rel, state, found)


def _read_unstored(ws: Workspace, rel: str, key: str | None, data: bytes | None) -> SectionText:
    """``read`` from the disk alone, as the file's first indexing would answer."""
    data = files.read_bytes(ws.top, rel) if data is None else data
    state, rows = _split(ws, rel, data)  # also refuses what is not UTF-8, naming the line
    if key is None:
        text = data.decode("utf-8")
        return SectionText(rel, None, "", text, 1, state.file_hash, 1, state.file_hash)
    full = refs.resolve_key(rel, key, [(row.key, row.base) for row in rows])
    return section_text(rel, state, next(row for row in rows if row.key == full))


def _split(
    ws: Workspace, rel: str, data: bytes | None = None
) -> tuple[FileState, list[SectionRow]]:
    """The file's state and rows as its first indexing would make them; nothing is stored."""
    from memkeeper.markdown.revisions import rows_for
    from memkeeper.markdown.sections import split
    from memkeeper.records import FileState

    data = files.read_bytes(ws.top, rel) if data is None else data
    return FileState(1, digest(data)), rows_for(split(data, rel))


def section_text(rel: str, state: FileState, row: SectionRow) -> SectionText:
    """What ``read`` says of one indexed section (also a conflict's ``current``)."""
    return SectionText(
        rel,
        row.key,
        row.heading.decode("utf-8"),
        row.body.decode("utf-8"),
        row.rev,
        row.hash or "",
        state.file_rev,
        state.file_hash,
    )

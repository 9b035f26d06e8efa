"""``sections`` and ``read``: answered from the index when the file is unchanged.

A read of an indexed, unchanged file parses no Markdown and no YAML: the index holds each
section's bytes and line count. A changed file is indexed first (as an external edit).
"""

from __future__ import annotations

from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.markdown import refs
from memkeeper.records import SectionInfo, SectionText

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import FileState, SectionRow

_READ_ATTEMPTS = 20


def sections(ws: Workspace, rel: str) -> list[SectionInfo]:
    """The sections of a root-relative path, indexing it first if it changed."""
    ws.refresh(rel)
    out, line = [], 1
    for row in ws.store.sections(rel):
        assert row.hash is not None
        out.append(
            SectionInfo(
                row.key, row.title, row.level, row.rev, row.hash, line, line + row.lines - 1
            )
        )
        line += row.lines
    return out


def read(ws: Workspace, ref: str) -> SectionText:
    """A section (``PATH#KEY``) or a whole file (``PATH``) with its revisions."""
    path, key = refs.split_ref(ref)
    rel = ws.relpath(path)
    for _ in range(_READ_ATTEMPTS):  # a writer may land between our read and the index
        data = files.read_bytes(ws.top, rel)
        answer = _read_indexed(ws, rel, key, digest(data), data)
        if answer is not None:
            return answer
        ws.refresh(rel)
    answer = _read_indexed(ws, rel, key, None, None)  # what the index holds, at least
    assert answer is not None
    return answer


def _read_indexed(
    ws: Workspace, rel: str, key: str | None, file_hash: str | None, data: bytes | None
) -> SectionText | None:
    """Answer from the index, if it holds ``file_hash`` (``None``: whatever it holds)."""
    with ws.store.reading():
        state = ws.store.file_state(rel)
        if state is None or file_hash not in (None, state.file_hash):
            return None
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

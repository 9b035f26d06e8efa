"""Codex's ``apply_patch`` format, parsed into file operations the gate judges one by one.

The grammar (openai/codex ``codex-rs/core/src/tools/handlers/tool_apply_patch.lark``)::

    start: "*** Begin Patch" LF hunk+ "*** End Patch" LF?
    hunk: "*** Add File: " path LF ("+" text LF)+
        | "*** Delete File: " path LF
        | "*** Update File: " path LF ("*** Move to: " path LF)? change?
    change: ("@@" [" " header] LF | ("+" | "-" | " ") text LF)+ ("*** End of File" LF)?

An update's chunks (between ``@@`` lines) become ``(old, new)`` edits: the context and removed
lines, and the context and added lines — what ``Edit`` gives the gate for Claude Code. Header
lines may be indented (Codex trims them); an ``*** Environment ID:`` line after the first is
skipped. Paths stay as written (relative to the session's cwd). Pure.
"""

from __future__ import annotations

from memkeeper.records import Record

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Literal

    OpKind = Literal["add", "delete", "update"]

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = (
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
)
END_OF_FILE = "*** End of File"
ENVIRONMENT = "*** Environment ID:"


class BadPatch(ValueError):
    """Not a patch in Codex's format (the tool would refuse it too)."""


class FileOp(Record):
    """One file a patch touches."""

    __slots__ = ("kind", "path", "content", "edits", "move_to")
    kind: OpKind
    path: str
    content: str  # add: the whole new file
    edits: tuple[tuple[str, str], ...]  # update: (old, new) text, in order
    move_to: str | None  # update: renamed to this path

    def __init__(
        self,
        kind: OpKind,
        path: str,
        content: str = "",
        edits: tuple[tuple[str, str], ...] = (),
        move_to: str | None = None,
    ) -> None:
        self._fill(kind, path, content, edits, move_to)


def is_patch(text: str) -> bool:
    """Whether ``text`` holds an ``apply_patch`` envelope (also inside a shell heredoc)."""
    return BEGIN in text


def parse_patch(text: str) -> tuple[FileOp, ...]:
    """Every file operation in the first patch envelope of ``text``, in order."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.strip() == BEGIN), None)
    if start is None:
        raise BadPatch(f"no {BEGIN!r} line")
    ops: list[FileOp] = []
    at = start + 1
    if at < len(lines) and lines[at].strip().startswith(ENVIRONMENT):
        at += 1
    while at < len(lines):
        header = lines[at].strip()
        if header == END:
            if not ops:
                raise BadPatch("the patch touches no file")
            return tuple(ops)
        if header.startswith(ADD.rstrip()):
            at, op = _add(lines, at + 1, _path(header, ADD))
        elif header.startswith(DELETE.rstrip()):
            at, op = at + 1, FileOp("delete", _path(header, DELETE))
        elif header.startswith(UPDATE.rstrip()):
            at, op = _update(lines, at + 1, _path(header, UPDATE))
        else:
            raise BadPatch(f"line {at + 1}: expected a file header, got {lines[at]!r}")
        ops.append(op)
    raise BadPatch(f"no {END!r} line")


def _path(header: str, prefix: str) -> str:
    path = header[len(prefix) :].strip()
    if not path:
        raise BadPatch(f"{prefix.strip()} with no path")
    return path


def _is_header(line: str) -> bool:
    return line.strip().startswith("*** ") and not line.startswith(("+", "-", " "))


def _add(lines: list[str], at: int, path: str) -> tuple[int, FileOp]:
    body: list[str] = []
    while at < len(lines) and lines[at].startswith("+"):
        body.append(lines[at][1:] + "\n")
        at += 1
    return at, FileOp("add", path, "".join(body))


def _update(lines: list[str], at: int, path: str) -> tuple[int, FileOp]:
    move_to = None
    if at < len(lines) and lines[at].strip().startswith(MOVE.rstrip()):
        move_to = _path(lines[at].strip(), MOVE)
        at += 1
    edits: list[tuple[str, str]] = []
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if old or new:
            edits.append(("".join(old), "".join(new)))
        old.clear()
        new.clear()

    while at < len(lines):
        line = lines[at]
        if line.strip() == END_OF_FILE:
            at += 1
            break
        if line.startswith("@@"):
            flush()
        elif line.startswith(" ") or line == "":
            old.append(line[1:] + "\n")
            new.append(line[1:] + "\n")
        elif line.startswith("-"):
            old.append(line[1:] + "\n")
        elif line.startswith("+"):
            new.append(line[1:] + "\n")
        elif _is_header(line):
            break
        else:
            raise BadPatch(f"line {at + 1}: {line!r} is not a change line (+, - or space)")
        at += 1
    flush()
    return at, FileOp("update", path, edits=tuple(edits), move_to=move_to)

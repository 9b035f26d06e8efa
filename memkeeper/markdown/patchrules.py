"""Pure rules for turning a patch request into a section's new bytes (docs/reference.md §4,
"Patch rules").

- ``text_bytes`` refuses input that is not text (invalid UTF-8, NUL).
- ``normalize_body`` writes the body with the file's line endings and the final-newline rule.
- ``apply_dmp`` applies a diff-match-patch payload *strictly*: every hunk must match the base
  exactly where it says, never the library's fuzzy guess.
- ``body_is_inert`` is the fast path's guard: a body none of whose lines could open a heading,
  fence, HTML block or link definition cannot change the document's sections, so no re-parse.
- ``keeps_structure`` is the next one, for any other body: a parse of the body and the next
  heading alone (what follows a top-level heading parses the same whatever came before it)
  shows that nothing in the body became a heading and the next heading is still itself.
- ``structure_problem`` explains, from two full parses, how a body would change the headings.
"""

from __future__ import annotations

import re

from memkeeper.errors import Invalid
from memkeeper.markdown.lines import (
    LINE_END,
    STABLE_ID,
    count_lines,
    detect_newline,
    not_text,
    position,
)
from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.markdown.sections import Document

# Lines that could start a heading, a setext underline, a fence, an HTML block (also the
# memkeeper markers) or a link reference definition, after any container prefix.
_RISKY_LINE = re.compile(
    rb"^[ \t]*#|^[ \t]*(?:=+|-+)[ \t]*$|```|~~~|^[ \t>*+\-0-9.)]*<|^[ \t>]*\[", re.MULTILINE
)


def text_bytes(data: bytes, where: str) -> str:
    """Decode UTF-8 text, refusing NUL bytes and invalid sequences with the line they are on."""
    problem = not_text(data)
    if problem is None:
        return data.decode("utf-8")
    kind, offset = problem
    line = position(data, offset)[0]
    if kind == "nul":
        raise Invalid(f"{where}:{line}: contains a NUL byte — memory files and bodies must be text")
    raise Invalid(
        f"{where}:{line}: invalid UTF-8 at byte {offset} — memory files "
        "and bodies must be UTF-8 text"
    )


def normalize_body(body: bytes, newline: bytes, ends_file: bool) -> bytes:
    """The body with every line ending as ``newline``; a final one unless it ends the file."""
    converted = LINE_END.sub(newline, body)
    if converted and not converted.endswith(newline) and not ends_file:
        converted += newline
    return converted


class Splice(Record):
    """A file's new bytes after replacing one section's body, and where that body sits."""

    __slots__ = ("data", "heading", "body", "body_start", "body_end")
    data: bytes
    heading: bytes
    body: bytes
    body_start: int
    body_end: int

    def __init__(
        self, data: bytes, heading: bytes, body: bytes, body_start: int, body_end: int
    ) -> None:
        self._fill(data, heading, body, body_start, body_end)


def splice(
    data: bytes, start: int, heading: bytes, old_body: bytes, new_body: bytes, is_heading: bool
) -> Splice:
    """Replace the body after ``heading`` (at ``start``) with ``new_body``, in the file's style.

    Every byte outside the section stays as it was; a heading on the file's last line gains a
    line ending when a body follows it.
    """
    end = start + len(heading) + len(old_body)
    newline = detect_newline(data)
    if heading.endswith(b"\r") and newline == b"\n":
        newline = b"\r"  # "\r" + "\n" would fuse into one "\r\n" and eat a blank line
    body = normalize_body(new_body, newline, end == len(data))
    if body and is_heading and not heading.endswith((b"\n", b"\r")):
        heading += newline
    body_start = start + len(heading)
    return Splice(
        data[:start] + heading + body + data[end:],
        heading,
        body,
        body_start,
        body_start + len(body),
    )


def apply_dmp(base: str, patch_text: str, where: str) -> str:
    """Apply a ``patch_toText`` payload to ``base`` with no fuzz, or raise ``Invalid``."""
    from diff_match_patch import diff_match_patch

    dmp = diff_match_patch()
    try:
        patches = dmp.patch_fromText(patch_text)
    except (ValueError, IndexError) as exc:
        raise Invalid(
            f"{where}: malformed diff-match-patch payload ({exc}) — produce it with patch_toText",
            reason="bad_patch",
        ) from None
    text = base
    for number, patch in enumerate(patches, start=1):
        source = "".join(t for op, t in patch.diffs if op != dmp.DIFF_INSERT)
        target = "".join(t for op, t in patch.diffs if op != dmp.DIFF_DELETE)
        at = patch.start2
        if not 0 <= at <= len(text):  # slicing would clamp it onto the body's end or start
            raise Invalid(
                f"{where}: hunk {number} of the diff-match-patch payload is located at "
                f"character {at}, outside the current body ({len(text)} characters) — "
                "re-read the section and rebuild the patch against it",
                reason="patch_does_not_apply",
            )
        if text[at : at + len(source)] != source:
            raise Invalid(
                f"{where}: hunk {number} of the diff-match-patch payload does not "
                "apply exactly to the current body — re-read the section and "
                "rebuild the patch against it",
                reason="patch_does_not_apply",
            )
        text = text[:at] + target + text[at + len(source) :]
    return text


def body_is_inert(old_body: bytes, body: bytes, heading: bytes, next_heading: bytes | None) -> bool:
    """True when replacing ``old_body`` by ``body`` provably keeps every section boundary.

    Neither body may hold a line that could open a heading, fence, HTML block (the old one
    may be what swallowed later headings) or link definition. Conservative: a False only
    sends the patch through a full re-parse.
    """
    if not heading and not body:
        return False  # an emptied preamble disappears
    if heading and not heading.endswith((b"\n", b"\r")):
        return False  # the heading line would need a line ending added
    if _risky(old_body) or _risky(body):
        return False
    if next_heading is None:
        return True
    # A last paragraph line could join a following setext heading's text.
    if next_heading[:1] in (b" ", b"\t"):
        return False  # an indented heading can become part of a list item in the body
    next_is_atx = count_lines(next_heading) == 1  # a setext heading spans text + underline
    return next_is_atx or body == b"" or _ends_with_blank_line(body)


def keeps_structure(
    data: bytes,
    body_start: int,
    body_end: int,
    old_body: bytes,
    following: bytes | None,
    *,
    preamble: bool = False,
) -> bool:
    """True when ``data`` (a patch's result: a section's new body at ``[body_start,
    body_end)``, after its unchanged heading, and ``following``, the next section's heading,
    after it; ``preamble``: the section is the text before the first heading) provably has
    the old document's sections: the body parsed with the next
    heading holds exactly that heading, on its own lines, named as before. Parses the body
    and one heading, whatever the file's size. Conservative: False sends the patch through
    the full comparison (``structure_problem``) — always for a file that opens with ``---``
    (front matter a body could close) and for a body with a link definition in it (those
    reach across the document)."""
    from memkeeper.markdown.lines import line_starts
    from memkeeper.markdown.sections import find_headings

    if preamble and body_start == body_end:
        return False  # an emptied preamble disappears
    if data.removeprefix(_BOM).startswith(b"---") or b"]:" in old_body:
        return False
    base = 0 if preamble else body_start  # after a top-level heading, nothing is left open
    window = data[base : body_end + len(following or b"")]
    if b"]:" in window:
        return False
    text = window.decode("utf-8")
    heads = find_headings(window, text.removeprefix("\ufeff"), line_starts(window), first=not base)[
        0
    ]
    if following is None:
        return not heads
    if len(heads) != 1 or heads[0].linked:
        return False
    before = count_lines(window[: body_end - base])
    return heads[0].start_line == before and heads[0].body_line == count_lines(window)


def _risky(body: bytes) -> bool:
    return _RISKY_LINE.search(body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")) is not None


def _ends_with_blank_line(body: bytes) -> bool:
    lines = LINE_END.split(body)
    return len(lines) >= 2 and lines[-1] == b"" and lines[-2].strip() == b""


def structure_problem(
    old: Document, new: Document, key: str, body_start: int, body_end: int
) -> str | None:
    """Why replacing ``key``'s body changed the section list, or None if it did not."""
    old_keys = [s.key for s in old.sections]
    new_keys = [s.key for s in new.sections]
    born = [s for s in new.sections if s.level and body_start <= s.start < body_end]
    if born:
        line = born[0].start_line - _line_of(new.data, body_start) + 1
        heading = new.heading(born[0])
        marker = _marker_line(heading)
        title = heading[len(marker) :].decode("utf-8", "replace").strip()
        if marker and born[0].start + len(marker) >= body_end:  # only the marker is the body's
            return (
                f"body line {line} is a stable-id marker ({marker.decode().strip()}), which "
                f"would give the next heading ({title!r}) the key {born[0].key!r} — a marker "
                "belongs to the heading it names, not to a body: remove it from the body, or "
                f"add the marker above {title!r} by editing the file itself"
            )
        line += count_lines(marker)
        return (
            f"body line {line} would become a heading ({title!r}) — a body may not "
            "contain headings: indent the line, escape its '#', or put it in a fence"
        )
    if key not in new_keys and key == old.sections[0].key and old.sections[0].level == 0:
        return "an empty body would remove the preamble altogether — leave at least one line in it"
    if old_keys != new_keys:
        lost = [k for k in old_keys if k not in new_keys]
        what = f"the heading {lost[0]!r}" if lost else "the headings after it"
        cause = _cause(new, body_start, body_end)
        return f"the body would change {what} outside this section: {cause}"
    for before, after in zip(old.sections, new.sections, strict=True):
        if before.key != key and old.text(before) != new.text(after):
            return (
                f"the body would change section {after.key!r} (a link definition or a "
                "paragraph joining its heading) — end the body with a blank line"
            )
    return None


_BOM = b"\xef\xbb\xbf"
_FENCE = re.compile(rb"^ {0,3}(```|~~~)", re.MULTILINE)


def _marker_line(heading: bytes) -> bytes:
    """The stable-id marker line (with its line ending) that opens ``heading``, else ``b""``."""
    ending = LINE_END.search(heading)
    if ending is None:
        return b""
    first = heading[: ending.start()].decode("utf-8", "replace")
    return heading[: ending.end()] if STABLE_ID.fullmatch(first) else b""


def _cause(new: Document, body_start: int, body_end: int) -> str:
    body = new.data[body_start:body_end].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if len(_FENCE.findall(body)) % 2:
        return "it opens a code fence it never closes, which swallows what follows — close it"
    if b"<" in body:
        return (
            "an HTML block or comment in it runs on into what follows — close it and "
            "end the body with a blank line"
        )
    return (
        "its last lines join what follows (a setext underline or a paragraph) — end the "
        "body with a blank line"
    )


def _line_of(data: bytes, offset: int) -> int:
    return len(LINE_END.findall(data, 0, offset)) + 1

"""Generated regions (docs/reference.md §5): their markers, checksums, and splicing rendered
text in.

    <!-- memkeeper:generated source=NAME [id=ID] [KEY=VALUE ...] -->
    (text memkeeper renders)
    <!-- memkeeper:end checksum=sha256:<16 hex> -->

A marker is a whole line (blanks around it allowed), recognised anywhere in a ``generated``
file, as cog does: a code fence does not hide it. A region's text is the bytes between its
two marker lines; its checksum is the first 16 hex digits of the sha256 of that text with
line endings read as ``\\n`` (so a checkout that converts line endings is not a hand edit).
An end marker without a checksum marks a region never rendered. A region's id is its
``source`` unless ``id=`` names it, so one file may show one source twice.

Pure functions over bytes. Hot path (a patch of a generated file): stdlib only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.events import digest
from memkeeper.markdown.lines import LINE_END
from memkeeper.records import Record

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from typing import NoReturn

_START = re.compile(rb"[ \t]*<!--[ \t]*memkeeper:generated(?=\s|-->)(.*?)-->[ \t]*")
_END = re.compile(rb"[ \t]*<!--[ \t]*memkeeper:end(?=\s|-->)(.*?)-->[ \t]*")
_LOOSE = re.compile(rb"[ \t]*<!--[ \t]*memkeeper:(?:generated|end)(?=\s|-->|$)")
_ARG = re.compile(r"([a-z][a-z0-9_-]*)=(\S+)")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_CHECKSUM = re.compile(r"checksum=sha256:([0-9a-f]{16})")
_BOM = b"\xef\xbb\xbf"
_FIX_MARKERS = "each `<!-- memkeeper:generated source=NAME -->` needs one `<!-- memkeeper:end -->`"


class Region(Record):
    """One generated region, as byte offsets into its file (line numbers are 1-based)."""

    __slots__ = (
        "id",
        "source",
        "args",
        "start",
        "text_start",
        "text_end",
        "end",
        "start_line",
        "end_line",
        "checksum",
    )
    id: str
    source: str
    args: tuple[tuple[str, str], ...]  # the start marker's KEY=VALUE pairs but source and id
    start: int  # the start marker line
    text_start: int  # just after the start marker line
    text_end: int  # the end marker line
    end: int  # just after the end marker line
    start_line: int
    end_line: int
    checksum: str | None  # the end marker's 16 hex digits; None: never rendered

    def __init__(
        self,
        id: str,
        source: str,
        args: tuple[tuple[str, str], ...],
        start: int,
        text_start: int,
        text_end: int,
        end: int,
        start_line: int,
        end_line: int,
        checksum: str | None,
    ) -> None:
        self._fill(
            id, source, args, start, text_start, text_end, end, start_line, end_line, checksum
        )

    def text(self, data: bytes) -> bytes:
        return data[self.text_start : self.text_end]

    def edited(self, data: bytes) -> bool:
        """True when the text no longer matches the checksum memkeeper wrote: a hand edit."""
        return self.checksum is not None and self.checksum != checksum(self.text(data))


def checksum(text: bytes) -> str:
    """The 16 hex digits an end marker carries for this region text."""
    return digest(LINE_END.sub(b"\n", text))[7:23]


def looks_like_marker(line: bytes) -> bool:
    """True for a line (without its line ending) that ``parse`` reads as a marker or rejects."""
    return _LOOSE.match(line) is not None


def _lines(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """``(number, start, end incl. line ending, content)`` of every line."""
    start, number = 0, 1
    for match in LINE_END.finditer(data):
        yield number, start, match.end(), data[start : match.start()]
        start, number = match.end(), number + 1
    if start < len(data):
        yield number, start, len(data), data[start:]


def parse(data: bytes, path: str) -> tuple[Region, ...]:
    """Every region of a file, in order; ``Invalid`` naming the line of a marker mistake."""
    regions: list[Region] = []
    opened: tuple[int, int, int, bytes] | None = None
    for number, start, end, line in _lines(data):
        content = line.removeprefix(_BOM) if start == 0 else line
        if _START.fullmatch(content):
            if opened is not None:
                _fail(path, number, f"start marker nested in the region opened at line {opened[0]}")
            opened = (number, start, end, content)
        elif (closing := _END.fullmatch(content)) is not None:
            if opened is None:
                _fail(path, number, "end marker without a start marker above it")
            regions.append(_region(path, opened, (number, start, end), closing.group(1)))
            opened = None
        elif _LOOSE.match(content):
            what = "marker shares its line with other text or does not end with -->"
            _fail(path, number, what, "put the whole marker, and only it, on one line")
    if opened is not None:
        _fail(path, opened[0], "start marker without an end marker below it")
    _check_ids(path, regions)
    return tuple(regions)


def _region(
    path: str, opened: tuple[int, int, int, bytes], closed: tuple[int, int, int], tail: bytes
) -> Region:
    line, start, text_start, content = opened
    end_line, text_end, end = closed
    match = _START.fullmatch(content)
    assert match is not None
    args = _args(path, line, match.group(1))
    source = args.pop("source", None)
    if source is None:
        _fail(path, line, "start marker without source=NAME", "add source=claims, events, …")
    region_id = args.pop("id", source)
    for what, value in (("source", source), ("id", region_id)):
        if not _NAME.fullmatch(value):
            _fail(path, line, f"bad {what} {value!r}", "use letters, digits, '_', '.', '-'")
    found = _checksum(path, end_line, tail)
    extra = tuple(sorted(args.items()))
    return Region(region_id, source, extra, start, text_start, text_end, end, line, end_line, found)


def _args(path: str, line: int, raw: bytes) -> dict[str, str]:
    args: dict[str, str] = {}
    for word in _text(path, line, raw).split():
        match = _ARG.fullmatch(word)
        if match is None:
            _fail(path, line, f"marker argument {word!r} is not KEY=VALUE", "write KEY=VALUE")
        key, value = match.groups()
        if key in args:
            _fail(path, line, f"marker argument {key!r} given twice", "give it once")
        args[key] = value
    return args


def _checksum(path: str, line: int, raw: bytes) -> str | None:
    text = _text(path, line, raw).strip()
    if not text:
        return None
    match = _CHECKSUM.fullmatch(text)
    if match is None:
        what = f"bad end marker argument {text!r}"
        _fail(path, line, what, "write <!-- memkeeper:end --> and let memkeeper fill it in")
    return match.group(1)


def _text(path: str, line: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        _fail(path, line, "marker is not UTF-8", "save the file as UTF-8")


def _check_ids(path: str, regions: list[Region]) -> None:
    seen: dict[str, int] = {}
    for region in regions:
        if region.id in seen:
            what = f"duplicate region id {region.id!r} (also at line {seen[region.id]})"
            _fail(path, region.start_line, what, "give one of them id=OTHER-NAME")
        seen[region.id] = region.start_line


def _fail(path: str, line: int, what: str, fix: str = _FIX_MARKERS) -> NoReturn:
    raise Invalid(f"{path}:{line}: {what} — {fix}", path=path, line=line)


# -- writing rendered text in -------------------------------------------------------------


def fill(data: bytes, regions: Sequence[Region], rendered: Mapping[str, str]) -> bytes:
    """The file with each region named in ``rendered`` holding that text and its checksum.

    Text is written with the line ending of the region's start marker line (so filling
    again finds the same one); every other byte stays as it was.
    """
    out, at = [], 0
    for region in regions:
        if region.id not in rendered:
            continue
        marker = data[region.start : region.text_start]
        newline = marker[len(marker.rstrip(b"\r\n")) :] or b"\n"
        text = LINE_END.sub(newline, rendered[region.id].encode("utf-8"))
        if text and not text.endswith(newline):
            text += newline
        out += [data[at : region.text_start], text, _end_line(data, region, checksum(text))]
        at = region.end
    out.append(data[at:])
    return b"".join(out)


def _end_line(data: bytes, region: Region, digest: str) -> bytes:
    line = data[region.text_end : region.end]
    body = line.rstrip(b"\r\n")
    indent = body[: len(body) - len(body.lstrip(b" \t"))]
    marker = b"<!-- memkeeper:end checksum=sha256:" + digest.encode() + b" -->"
    return indent + marker + line[len(body) :]


def patch_problem(path: str, old: bytes, new: bytes) -> str | None:
    """Why a patch turning ``old`` into ``new`` touches a region or its markers, if it does.

    ``Invalid`` when ``old`` itself has broken markers (fix those by hand first).
    """
    before = parse(old, path)
    try:
        after = parse(new, path)
    except Invalid as exc:
        line = exc.fields.get("line")
        return f"the patch would break the region markers (at line {line} of the result)"
    kept = {r.id: new[r.start : r.end] for r in after}
    for region in before:
        if kept.pop(region.id, None) != old[region.start : region.end]:
            lines = f"lines {region.start_line}-{region.end_line}"
            return f"the patch would change generated region {region.id!r} ({lines})"
    if kept:
        return f"the patch would add a generated region ({next(iter(kept))!r})"
    return None

"""Split a Markdown file into sections with exact byte and line spans.

A section is a top-level heading (ATX or setext, as markdown-it-py sees it) and everything
up to the next top-level heading; text before the first heading is ``_preamble``. A stable-id
marker (``<!-- memkeeper:section id=NAME -->``) on the line just above a heading is part of
that heading: its section starts there, so no other section's body holds it. The split
is lossless: ``join(split(data)) == data`` for every input, whatever its line endings, BOM or
final newline. Headings are located by a block-only markdown-it parse (the front-matter
plugin keeps YAML headers out of them) and mapped back onto the original bytes, where
``\\r\\n``, ``\\r`` and ``\\n`` each end a line, exactly as markdown-it counts them; a file
with nothing that could hide or make a heading but ATX lines at column 0 is split without
markdown-it (``fastsplit``), to the same result.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from memkeeper.errors import Invalid
from memkeeper.markdown import fastsplit
from memkeeper.markdown.lines import STABLE_ID, count_lines, detect_newline, line_starts, not_text

__all__ = [
    "PREAMBLE",
    "Document",
    "Heading",
    "Section",
    "assign_keys",
    "build",
    "count_lines",
    "detect_newline",
    "find_headings",
    "join",
    "line_starts",
    "slug",
    "split",
]

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from markdown_it.token import Token

PREAMBLE = "_preamble"  # the key of the text before the first heading
_BOM = b"\xef\xbb\xbf"

_MD = MarkdownIt("commonmark").use(front_matter_plugin).disable("inline")
_INLINE_MARKUP = re.compile(r"[\n!&*_<\[\]\\`]")  # the characters inline parsing acts on
_ASCII_RUN = re.compile(r"[^a-z0-9_\-]+")

# key, base, title, level, start, body_start, stable
_Span = tuple[str, str, str, int, int, int, str | None]


@dataclass(frozen=True, slots=True)
class Section:
    """One section: a heading line (or lines) and its body, as offsets into the file."""

    key: str
    base: str
    title: str
    level: int
    start: int
    body_start: int
    end: int
    start_line: int
    end_line: int
    # The stable id whose marker line opens the section (its start), if any.
    stable: str | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """A file's bytes and its sections, which cover them exactly and in order."""

    data: bytes
    sections: tuple[Section, ...]

    def heading(self, section: Section) -> bytes:
        return self.data[section.start : section.body_start]

    def body(self, section: Section) -> bytes:
        return self.data[section.body_start : section.end]

    def text(self, section: Section) -> bytes:
        return self.data[section.start : section.end]

    def keys(self) -> tuple[tuple[str, str], ...]:
        """``(key, base)`` pairs in document order, as ``refs.resolve_key`` takes them."""
        return tuple((s.key, s.base) for s in self.sections)

    def get(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)


@dataclass(frozen=True, slots=True)
class Heading:
    """A top-level heading as the block parse found it, in lines of the text parsed."""

    line: int  # 0-based first line
    body_line: int  # 0-based line just after the heading (setext: after its underline)
    level: int
    title: str
    stable: str | None
    linked: bool = False  # its text holds a "[": a link definition anywhere may change its title

    @property
    def start_line(self) -> int:
        """Where its section starts: its stable-id marker, the line above, belongs to it."""
        return self.line - 1 if self.stable is not None else self.line


def split(data: bytes, path: str = "<input>") -> Document:
    """Sections of ``data``; raises ``Invalid`` for NUL bytes or invalid UTF-8."""
    starts = line_starts(data)
    headings = find_headings(data, _decode(data, starts, path), starts, first=True)[0]
    keys = assign_keys((h.level, h.title, h.stable) for h in headings)
    return Document(data, tuple(build(data, headings, keys, starts, len(data))))


def build(
    data: bytes,
    headings: Sequence[Heading],
    keys: Sequence[tuple[str, str]],
    starts: list[int],
    end: int,
    *,
    base: int = 0,
    line0: int = 0,
) -> list[Section]:
    """The sections ``headings`` open, with their ``keys``, the last one running to ``end``.

    ``data`` is the whole file; the headings were found in the window of it that starts at
    offset ``base`` (line ``line0``, 0-based), whose line starts, relative to ``base``, are
    ``starts``. A window at the file's start gains the preamble, if there is text before the
    first heading.
    """
    bounds = [*starts, len(data) - base]  # bounds[n]: offset of window line n, or its end
    spans: list[_Span] = []
    if base == 0 and (headings[0].start_line > 0 if headings else end > 0):
        bom = len(_BOM) if data.startswith(_BOM) else 0  # the BOM stays when a body is replaced
        spans.append((PREAMBLE, PREAMBLE, "", 0, 0, bom, None))
    for (key, base_name), head in zip(keys, headings, strict=True):
        start, body_start = base + bounds[head.start_line], base + bounds[head.body_line]
        spans.append((key, base_name, head.title, head.level, start, body_start, head.stable))
    ends = [span[4] for span in spans[1:]] + [end] if spans else []
    pairs = zip(spans, ends, strict=True)
    return [_section(span, stop, starts, base, line0) for span, stop in pairs]


def join(doc: Document) -> bytes:
    return b"".join(doc.text(s) for s in doc.sections)


def slug(text: str) -> str:
    """Lowercase; each run of anything but letters, digits, ``_`` and ``-`` becomes ``-``."""
    lowered = text.lower()
    if lowered.isascii():
        slugged = _ASCII_RUN.sub("-", lowered)
    else:
        slugged = "".join(_slug_char(c) for c in lowered)
        slugged = re.sub(r"\x00+", "-", slugged)
    return slugged.strip("-") or "section"


def _slug_char(char: str) -> str:
    if char in "_-" or unicodedata.category(char)[0] in "LMN":
        return char
    return "\x00"


def _decode(data: bytes, starts: list[int], path: str) -> str:
    problem = not_text(data)
    if problem is None:
        return data.decode("utf-8").removeprefix("\ufeff")
    kind, offset = problem
    line, column = _position(starts, offset)
    if kind == "nul":
        raise Invalid(
            f"{path}:{line}: NUL byte at column {column} — memory files must be text; "
            "remove the NUL bytes",
            path=path,
            line=line,
            column=column,
        )
    raise Invalid(
        f"{path}:{line}: invalid UTF-8 byte 0x{data[offset]:02x} at column {column} "
        f"(offset {offset}) — memory files must be UTF-8 text; re-save it as UTF-8",
        path=path,
        line=line,
        column=column,
        offset=offset,
    )


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    """1-based line and 1-based byte column of ``offset``."""
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def find_headings(
    data: bytes, text: str, starts: list[int], *, first: bool
) -> tuple[list[Heading], bool]:
    """The top-level headings of ``text`` (``data`` decoded, whose line starts are
    ``starts``), and whether it opens with front matter. ``first``: ``data`` starts the file,
    where front matter may open it; a window further on is parsed without the front-matter
    rule (a body's ``---`` is no front matter)."""
    env: dict[str, object] = {}
    plain = fastsplit.headings(text)  # None: a construct only markdown-it can tell
    if plain is not None:  # no front matter either: a text opening with "-" is not plain
        marked = "memkeeper:section" in text  # else no line is a stable-id marker
        return [
            Heading(
                line,
                line + 1,
                level,
                _title(raw, env),
                _stable_id(data, starts, line) if marked else None,
                "[" in raw,
            )
            for line, level, raw in plain
        ], False
    tokens = (_MD if first else _md_within()).parse(text, env)
    found: list[Heading] = []
    front = bool(tokens) and tokens[0].type == "front_matter"
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        line, body_line = token.map
        content = tokens[index + 1].content
        stable = _stable_id(data, starts, line)
        level = int(token.tag[1:])
        found.append(Heading(line, body_line, level, _title(content, env), stable, "[" in content))
    return found, front


_WITHIN: list[MarkdownIt] = []


def _md_within() -> MarkdownIt:
    """The block parser for a window after the file's start (made on first use)."""
    if not _WITHIN:
        _WITHIN.append(MarkdownIt("commonmark").disable("inline"))
    return _WITHIN[0]


def _title(content: str, env: dict[str, object]) -> str:
    if _INLINE_MARKUP.search(content) is None:
        return content.strip()  # nothing the inline parser would change
    children: list[Token] = []
    _MD.inline.parse(content, _MD, env, children)
    return _plain(children).strip()


def _plain(tokens: Sequence[Token]) -> str:
    """Text as rendered: link and emphasis markup, inline HTML dropped; images give alt."""
    parts: list[str] = []
    for token in tokens:
        if token.type in ("text", "text_special", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "image":
            parts.append(_plain(token.children or ()))
    return "".join(parts)


def _stable_id(data: bytes, starts: list[int], line: int) -> str | None:
    if line == 0:
        return None
    above = data[starts[line - 1] : starts[line]].decode("utf-8").removeprefix("\ufeff")
    match = STABLE_ID.fullmatch(above)
    return match.group(1) if match else None


def assign_keys(
    headings: Iterable[tuple[int, str, str | None]],
    taken_before: Iterable[str] = (),
    ancestors_before: Sequence[tuple[int, str]] = (),
) -> list[tuple[str, str]]:
    """``(key, base)`` per ``(level, title, stable id)``: slugs joined to ancestors, stable
    ids, unique suffixes. ``taken_before`` and ``ancestors_before`` (``(level, key)``, the
    outermost first): the keys of the headings before these and the ancestors they leave,
    when only the headings from some point on are keyed."""
    # key -> the last suffix number tried on it: numbers up to it are taken, and a key that
    # is taken stays taken, so the first free suffix is the same from any point
    taken: dict[str, int] = dict.fromkeys(taken_before, 1)
    taken[PREAMBLE] = 1
    ancestors = list(ancestors_before)
    pairs: list[tuple[str, str]] = []
    for level, title, stable in headings:
        while ancestors and ancestors[-1][0] >= level:
            ancestors.pop()
        if stable is not None:
            wanted, base = stable, stable.rpartition("/")[2]
        else:
            base = slug(title)
            wanted = f"{ancestors[-1][1]}/{base}" if ancestors else base
        key = _unique(wanted, taken)
        ancestors.append((level, key))
        pairs.append((key, base))
    return pairs


def _unique(wanted: str, taken: dict[str, int]) -> str:
    """``wanted``, else the first free ``wanted-2``, ``wanted-3``…; marks the result taken."""
    if wanted not in taken:
        taken[wanted] = 1
        return wanted
    key, number = wanted, taken[wanted]  # numbers up to taken[wanted] are known to be taken
    while key in taken:
        number += 1
        key = f"{wanted}-{number}"
    taken[wanted] = number
    taken[key] = 1
    return key


def _section(span: _Span, end: int, starts: list[int], base: int, line0: int) -> Section:
    key, base_name, title, level, start, body_start, stable = span
    return Section(
        key=key,
        base=base_name,
        title=title,
        level=level,
        start=start,
        body_start=body_start,
        end=end,
        start_line=line0 + bisect_right(starts, start - base),
        end_line=line0 + bisect_right(starts, end - 1 - base),
        stable=stable,
    )

"""The top-level headings of a plain Markdown file, found without markdown-it when that is safe.

Most memory files are paragraphs, lists and ``#`` headings at column 0. In such a file every
line that is an ATX heading at column 0 is a top-level heading, and nothing else is one: a
heading line interrupts a paragraph, ends a list or a blockquote, and is never taken into a
nested fence or HTML block (those end at the first line outdented from their container). What
could make a heading appear or disappear is a construct that starts at an indent of three
spaces or less — a setext underline, an indented ``#`` heading, a fence, an HTML block other
than a one-line comment, front matter — a link reference definition (it may change a title's
text), or containers nested deep enough for markdown-it's ``maxNesting`` to cut the rest of
the file into one block. ``headings`` looks for any of these with one regular expression and
returns None when it sees one (``sections.split`` then asks markdown-it); otherwise it
returns each heading's line, level and raw title as markdown-it's heading rule would. Tabs
in an indent count to the next multiple of four, so a tab before the first non-blank
character puts it out of reach of every top-level construct.
"""

from __future__ import annotations

import re

from markdown_it.common.utils import MD_TRIM_CHARS

__all__ = ["headings"]

_NEWLINE = re.compile(r"\r\n?")
# Each construct at the start of a line (after the "\n" the search puts before the text: a
# literal first character lets the regex engine skip from one line ending to the next).
_NEEDS_PARSER = re.compile(
    r"""
    \n(?:
        [ ]{1,3}\#                        # an indented ATX heading
      | [ ]{0,3}(?:=+|-+)\s*$             # a setext underline (or a front-matter fence)
      | [ ]{0,3}(?:```|~~~)               # a code fence
      | [ ]{0,3}<(?!(?=!--)[^\n]*-->)     # an HTML block, but a comment closed on its line
      | [ \t>*+\-0-9.)]{12}               # containers that may nest to markdown-it's limit
    )
    """,
    re.MULTILINE | re.VERBOSE,
)
_REFERENCE = "]:"  # in every link reference definition, which may change a title's text
_ATX = re.compile(r"^(#{1,6})((?:[ \t][^\n]*)?)$", re.MULTILINE)

Heading = tuple[int, int, str]  # 0-based line, level, raw title (before inline parsing)


def headings(text: str) -> list[Heading] | None:
    """The top-level headings of ``text`` (decoded, BOM removed), all ATX at column 0, or
    None if it holds anything that needs markdown-it to tell."""
    if "\r" in text:
        text = _NEWLINE.sub("\n", text)  # one "\n" per line ending: line numbers stay
    if text.startswith("-") or _REFERENCE in text:
        return None
    if _NEEDS_PARSER.search("\n" + text) is not None:
        return None
    found: list[Heading] = []
    line, counted = 0, 0
    for match in _ATX.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        found.append((line, len(match.group(1)), _title(match.group(2))))
    return found


def _title(rest: str) -> str:
    """A heading's title as markdown-it's heading rule cuts ``rest``, what follows the ``#``
    run: trailing blanks, then a closing run of ``#`` after a blank, then CommonMark
    whitespace at both ends."""
    body = rest.rstrip(" \t")
    closed = body.rstrip("#")
    if len(closed) < len(body) and closed[-1:] in (" ", "\t"):
        body = closed
    return body.strip(MD_TRIM_CHARS)

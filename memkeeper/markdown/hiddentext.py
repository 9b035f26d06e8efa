"""Characters that hide text from a human reviewer but not from an agent reading the file.

Bidirectional controls reorder what an editor shows (Trojan Source); zero-width characters
and Unicode tag characters carry text nobody sees (prompt smuggling into agent memory). A
byte-order mark counts only away from the start of the file; ZWJ and ZWNJ only next to ASCII,
since emoji sequences and Persian or Indic words need them between their own letters.
"""

from __future__ import annotations

import re
import unicodedata

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ZERO_WIDTH = "\u200b\u2060\u2061\u2062\u2063\u2064\ufeff"
_JOINERS = "\u200c\u200d"
_TAGS = "\U000e0000-\U000e007f"
_ANY = re.compile(f"[{_BIDI}{_ZERO_WIDTH}{_JOINERS}{_TAGS}]")
_LINE_END = re.compile(r"\r\n|\r|\n")
_FLAG = "\U0001f3f4"  # a black flag followed by tag characters is a subdivision flag emoji


def hidden_characters(text: str) -> list[tuple[int, int, str, int]]:
    """``(line, column, description, count)`` per line holding hidden characters, 1-based:
    where the first one is, what it is, and how many the line holds."""
    found = []
    for number, line in enumerate(_LINE_END.split(text), start=1):
        hits = _hits(line, at_file_start=number == 1)
        if hits:
            found.append((number, hits[0] + 1, describe(line[hits[0]]), len(hits)))
    return found


def _hits(line: str, at_file_start: bool) -> list[int]:
    hits, flag_tags_until = [], -1
    for match in _ANY.finditer(line):
        at = match.start()
        if _is_tag(line[at]) and (flag_tags_until == at or (at and line[at - 1] == _FLAG)):
            flag_tags_until = at + 1  # still spelling a subdivision flag
        elif not _innocent(line, at, at_file_start):
            hits.append(at)
    return hits


def describe(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def strip_hidden(text: str) -> str:
    """The text without any character ``hidden_characters`` would flag (for rendering)."""
    return _ANY.sub("", text)


def _is_tag(char: str) -> bool:
    return "\U000e0000" <= char <= "\U000e007f"


def _innocent(text: str, at: int, at_file_start: bool) -> bool:
    char = text[at]
    if char == "\ufeff":
        return at == 0 and at_file_start
    if char in _JOINERS:
        before = text[at - 1] if at else " "
        after = text[at + 1] if at + 1 < len(text) else " "
        return not (before.isascii() or after.isascii())
    return False

"""Characters that hide text from a human reviewer but not from an agent reading the file.

Bidirectional controls reorder what an editor shows (Trojan Source); zero-width, filler and
other default-ignorable characters, Unicode tags and runs of variation selectors carry text
nobody sees (prompt smuggling into agent memory); ANSI escape sequences and other control
characters rewrite what a terminal shows (``cat``, ``git diff``, ``less -R``).

Flagged: every control character but tab, LF and CR (C0, DEL, C1 — so ESC and the 8-bit
CSI); U+2028 and U+2029, line breaks for some tools and nothing for others; every format
character (Unicode category Cf) but the prepended concatenation marks, which are visible
(U+0600..U+0605, U+06DD, U+070F, U+0890, U+0891, U+08E2, U+110BD, U+110CD); every
default-ignorable code point (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the Khmer
inherent vowels, the variation selectors, the unassigned U+2065, U+FFF0..U+FFF8,
U+E0000..U+E0FFF); and U+2800 BRAILLE PATTERN BLANK. Some of them are needed where they
stand, and are innocent there:

- a byte-order mark at the very start of the file;
- ZWJ, ZWNJ and the combining grapheme joiner between two non-ASCII characters (emoji
  sequences, Persian and Indic words);
- tag characters spelling a subdivision flag after U+1F3F4 WAVING BLACK FLAG;
- one variation selector after a visible non-ASCII character (an emoji's presentation, an
  ideograph's variant), or U+FE0E/U+FE0F after the 0-9, ``#`` or ``*`` of a keycap;
- the braille blank next to another braille pattern;
- Mongolian free variation selectors after a Mongolian letter, and the Mongolian vowel
  separator between two.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_SEPARATORS = "\u2028\u2029"
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_ZERO_WIDTH = "\u200b\u2060-\u2065\u206a-\u206f\ufeff"
_JOINERS = "\u200c\u200d\u034f"
_FORMAT = "\u00ad\u180e\ufff0-\ufffb\U00013430-\U0001343f\U0001bca0-\U0001bca3"
_MUSIC = "\U0001d173-\U0001d17a"
_FILLERS = "\u115f\u1160\u3164\uffa0\u17b4\u17b5\u2800"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180d\u180f"
_TAGS = "\U000e0000-\U000e00ff\U000e01f0-\U000e0fff"
_ANY = re.compile(
    f"[{_CONTROLS}{_SEPARATORS}{_BIDI}{_ZERO_WIDTH}{_JOINERS}{_FORMAT}{_MUSIC}{_FILLERS}"
    f"{_SELECTORS}{_TAGS}]"
)
_BREAKING = re.compile(f"[{_CONTROLS}{_SEPARATORS}]")
_LINE_END = re.compile(r"\r\n|\r|\n")
_FLAG = "\U0001f3f4"  # a black flag followed by tag characters is a subdivision flag emoji
_KEYCAP = "0123456789#*"
_NAMES = {
    "\x00": "NULL",
    "\x07": "BELL",
    "\x08": "BACKSPACE",
    "\x1b": "ESCAPE (starts an ANSI escape sequence)",
    "\x7f": "DELETE",
    "\x9b": "CONTROL SEQUENCE INTRODUCER",
}


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
    name = unicodedata.name(char, "") or _NAMES.get(char) or _kind(char)
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def _kind(char: str) -> str:
    category = unicodedata.category(char)
    return {"Cc": "control character", "Cn": "unassigned"}.get(category, "")


def strip_hidden(text: str) -> str:
    """The text without any character ``hidden_characters`` would flag, wherever it stands
    (for rendering): controls and line separators become spaces, the others go."""
    return _ANY.sub(lambda match: " " if _BREAKING.match(match[0]) else "", text)


def _is_tag(char: str) -> bool:
    return "\U000e0000" <= char <= "\U000e007f"


def _innocent(text: str, at: int, at_file_start: bool) -> bool:
    char = text[at]
    before = text[at - 1] if at else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    if char == "\ufeff":
        return at == 0 and at_file_start
    if char in _JOINERS:
        return not (before.isascii() or after.isascii())
    if "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef":
        return _visible_base(before) or (char in "\ufe0e\ufe0f" and before in _KEYCAP)
    if char == "\u2800":
        return _braille(before) or _braille(after)
    if char == "\u180e":
        return _mongolian(before) and _mongolian(after)
    if "\u180b" <= char <= "\u180f":
        return _mongolian(before)
    return False


def _visible_base(char: str) -> bool:
    """A character a variation selector may follow: visible, and not ASCII."""
    return not char.isascii() and _ANY.match(char) is None and not char.isspace()


def _braille(char: str) -> bool:
    return "\u2801" <= char <= "\u28ff"


def _mongolian(char: str) -> bool:
    return "\u1820" <= char <= "\u1878" or "\u1880" <= char <= "\u18aa"

"""JSONC read as JSON: Gemini's and VS Code's settings allow ``//`` and ``/* */`` comments
and trailing commas. ``blank`` turns them, and a byte-order mark, into spaces of the same
length (line breaks kept), so ``json`` reads the result and reports errors at the file's own
line and column, and every offset in it is the file's. The gate reads agents' settings with
it; ``install.jsonedit`` edits them on the same offsets. Pure.
"""

from __future__ import annotations


def blank(text: str) -> str:
    """``text`` with comments, trailing commas and a byte-order mark as spaces (newlines kept)."""
    return scan(text)[0]


def scan(text: str) -> tuple[str, frozenset[int]]:
    """``blank(text)``, and where the trailing commas it blanked were."""
    out = list(text)
    if text.startswith("\ufeff"):
        out[0] = " "
    i, n = 0, len(text)
    commas: set[int] = set()
    last_comma = -1  # a comma outside strings not yet followed by anything but space
    while i < n:
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            last_comma = -1
            continue
        if text.startswith(("//", "/*"), i):
            line = text[i + 1] == "/"
            end = text.find("\n" if line else "*/", i + 2)
            end = n if end < 0 else end + (0 if line else 2)
            for j in range(i, end):
                if out[j] not in "\r\n":
                    out[j] = " "
            i = end
            continue
        if c == ",":
            last_comma = i
        elif c in "}]" and last_comma >= 0:
            out[last_comma] = " "
            commas.add(last_comma)
            last_comma = -1
        elif c not in " \t\r\n":
            last_comma = -1
        i += 1
    return "".join(out), frozenset(commas)


def _string_end(text: str, i: int) -> int:
    """The index after the string starting at ``text[i]`` (its end, if it is unterminated)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    return len(text)

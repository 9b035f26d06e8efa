"""The options and operands of a command the gate reads, getopt-style. Pure."""

from __future__ import annotations

from memkeeper.shell.parse import Word

DOT = Word(".", True)  # the command's own directory, for ``place``


def options(
    args: tuple[Word, ...], valued: frozenset[str], attached: frozenset[str] = frozenset()
) -> tuple[list[Word], dict[str, Word]]:
    """Operands and options (``name -> value``; flags get an empty value), getopt-style:
    ``valued`` options take a value (attached or next word), ``attached`` ones an optional
    value only when attached (``sed -i.bak``); ``--`` ends the options."""
    operands: list[Word] = []
    found: dict[str, Word] = {}
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        text = word.text
        if text == "--":
            operands += args[i:]
            break
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if not eq and name in valued and i < len(args):
                found[name], i = args[i], i + 1
            else:
                found[name] = Word(value, word.plain)
        elif text.startswith("-") and len(text) > 1:
            i = _cluster(args, i, word, valued | attached, valued, found)
        else:
            operands.append(word)
    return operands, found


def _cluster(
    args: tuple[Word, ...],
    i: int,
    word: Word,
    with_value: frozenset[str],
    valued: frozenset[str],
    found: dict[str, Word],
) -> int:
    """Read ``-abc`` into ``found``; the index of the next word."""
    text = word.text
    for at, char in enumerate(text[1:], start=1):
        if char in with_value:
            rest = text[at + 1 :]
            if not rest and char in valued and i < len(args):
                found[char] = args[i]
                return i + 1
            found[char] = Word(rest, word.plain)
            return i
        found[char] = Word("", True)
    return i


def given(opts: dict[str, Word], *names: str) -> Word | None:
    """The value of the first of ``names`` among ``opts`` (short and long spellings)."""
    return next((opts[n] for n in names if n in opts), None)

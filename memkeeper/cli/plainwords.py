"""``read`` and ``patch`` in their plain forms, read without argparse: the calls agents make
most, each paying the CLI's start-up. Argparse, with gettext and locale, is a tenth of what a
``read`` executes.

``plain_args`` reads a command line of exactly these words — the common options (``--root V``,
``--agent V``, ``--json``, ``--debug``) before or after the verb, the verb, one ``PATH[#KEY]``
and the verb's own options each written whole as ``--option VALUE`` — into what argparse makes
of it (``cli.parser``; tests/cli/test_plainwords.py compares the two). Anything else (help, an
abbreviated or repeated option, ``--opt=V``, a value starting with ``-``, a number that is not
plain digits, a mistake) gives None, and argparse reads the line and explains it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Sequence
else:  # what the verbs read of it: attributes (argparse's own is not loaded here)
    from types import SimpleNamespace as Namespace

_COMMON = {"root": None, "agent": None, "json": False, "debug": False}
# Each verb's options: (what it takes — a flag, a text, a whole number —, its default);
# ``required`` are the ones argparse insists on, ``exclusive`` the ones it allows one of.
_OPTIONS: dict[str, dict[str, tuple[str, object]]] = {
    "read": {"--rev": ("number", None)},
    "patch": {
        "--expect-rev": ("number", None),
        "--expect-file-hash": ("text", None),
        "--claim": ("text", None),
        "--merge": ("flag", False),
        "--body-file": ("text", None),
        "--dmp-file": ("text", None),
    },
}
_REQUIRED = {"read": (), "patch": ("--expect-rev",)}
_ONE_OF = {"read": (), "patch": ("--body-file", "--dmp-file")}
_COMMON_KINDS = {"--root": "text", "--agent": "text", "--json": "flag", "--debug": "flag"}


def plain_args(words: Sequence[str]) -> Namespace | None:
    """What argparse makes of ``words`` when they are a plain ``read`` or ``patch`` (module
    docstring); None for any other command line."""
    verb: str | None = None
    given: dict[str, object] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        kind = _COMMON_KINDS.get(word) or (_OPTIONS[verb].get(word, ("", None))[0] if verb else "")
        if kind:
            if word in given:
                return None
            if kind == "flag":
                given[word] = True
            else:
                if i + 1 == len(words):
                    return None
                value = _value(kind, words[i + 1])
                if value is None:
                    return None
                given[word] = value
                i += 1
        elif word.startswith("-"):
            return None
        elif verb is None:
            if word not in _OPTIONS:
                return None
            verb = word
        else:
            positional.append(word)
        i += 1
    if verb is None or len(positional) != 1 or not _complete(verb, given):
        return None
    fields: dict[str, object] = {**_COMMON, "command": verb, "ref": positional[0]}
    for option, (_, default) in _OPTIONS[verb].items():
        fields[option[2:].replace("-", "_")] = default
    for option, value in given.items():
        fields[option[2:].replace("-", "_")] = value
    return Namespace(**fields)


def _value(kind: str, text: str) -> object:
    """An option's value as argparse takes it: a text that does not start with ``-`` (or is
    ``-``, stdin), a whole number the stores keep written in plain digits; None otherwise."""
    if text.startswith("-") and text != "-":
        return None
    if kind == "text":
        return text
    from memkeeper.limits import MAX_INT

    if not (text.isascii() and text.isdigit()) or int(text) > MAX_INT:
        return None
    return int(text)


def _complete(verb: str, given: dict[str, object]) -> bool:
    """Whether the verb's required options are there, and exactly one of its alternatives."""
    if not all(option in given for option in _REQUIRED[verb]):
        return False
    chosen = [option for option in _ONE_OF[verb] if option in given]
    return len(chosen) == 1 if _ONE_OF[verb] else True

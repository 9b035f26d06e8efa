"""The files a verb reads its input from (``--body-file``, ``--entry-file`` …), ``-`` for stdin."""

from __future__ import annotations

import sys

from memkeeper.errors import Invalid


def read_input(name: str) -> bytes:
    """A verb's input file, or stdin for ``-``; ``Invalid`` naming the file if unreadable."""
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        with open(name, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise Invalid(
            f"{name}: cannot read ({exc.strerror}) — give an existing file or '-'", path=name
        ) from None


def read_text(name: str) -> str:
    """A verb's input file as UTF-8 text (``Invalid`` naming the file if it is not)."""
    raw = read_input(name)
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise Invalid(f"{name}: not UTF-8 text — give a text file", path=name) from None


def whole_number(text: str) -> int:
    """argparse's ``type`` for an id, a rev or a count: a whole number the stores can keep."""
    return _number(text, signed=False)


def signed_number(text: str) -> int:
    """argparse's ``type`` for a priority: a whole number, maybe negative, within 64 bits."""
    return _number(text, signed=True)


def _number(text: str, *, signed: bool) -> int:
    import argparse

    from memkeeper.limits import MAX_INT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    low = -MAX_INT if signed else 0
    if not low <= value <= MAX_INT:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number from {low} to {MAX_INT}")
    return value

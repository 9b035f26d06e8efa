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

"""The one exit boundary: every exception a verb raises becomes an exit code and a message.

A ``MemkeeperError`` maps onto its exit code (docs/reference.md §6) and prints as JSON or
for people. Anything else is a bug: exit 1, status ``error``, and the full traceback goes to
``.memkeeper/error.log`` under the root (or to stderr with ``--debug``, or when there is no
memory home to write to) — the message says where, as pre-commit's error handler does.
"""

from __future__ import annotations

import json
import os
import sys

from memkeeper import names
from memkeeper.errors import MemkeeperError, Usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.records import Violation


def fail(exc: MemkeeperError, as_json: bool) -> int:
    """Print an expected error (JSON on stdout, or a message on stderr); its exit code."""
    if as_json:
        print(json.dumps(exc.to_json(), ensure_ascii=False))
        return exc.exit_code
    # A usage error's message already names the command: `memkeeper patch: …`.
    told = exc.message if isinstance(exc, Usage) else f"memkeeper: {exc.message}"
    print(told, file=sys.stderr)
    violations: Sequence[Violation] = getattr(exc, "violations", None) or ()
    for item in violations:
        where = f"{item.path}:{item.line}" if item.line else item.path
        line = f"  {where or '-'}: [{item.rule}] {item.message} (fix: {item.fix})"
        print(line, file=sys.stderr)
    recover = getattr(exc, "recover", None)
    if recover:
        print(f"next: {recover}", file=sys.stderr)
    return exc.exit_code


def crash(exc: BaseException, argv: Sequence[str], root: str | None, debug: bool) -> int:
    """An unexpected exception: log its traceback, say where, exit 1."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    where = None if debug else _log(text, argv, root)
    summary = f"internal error: {type(exc).__name__}: {exc}"
    if where is None:
        sys.stderr.write(text)
        told = f"{summary} — this is a bug in memkeeper; please report it with the traceback above"
    else:
        told = (
            f"{summary} — this is a bug in memkeeper; the traceback is in {where} "
            "(or run again with --debug); please report it with that traceback"
        )
    as_json = "--json" in argv
    return fail(MemkeeperError(told, log=where), as_json)


def _log(text: str, argv: Sequence[str], root: str | None) -> str | None:
    """Append the traceback to the memory home's error log; ``None`` if there is no home."""
    if root is None:
        return None
    home = names.home_of(root)
    if not os.path.isdir(home):  # a read-only command creates no state where there is none
        return None
    import time

    path = os.path.join(home, names.ERROR_LOG)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    header = f"### {stamp} pid {os.getpid()}: memkeeper {' '.join(argv)}\n"
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(header + text + "\n")
    except OSError:
        return None
    return path

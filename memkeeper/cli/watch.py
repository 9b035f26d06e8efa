"""The streaming verbs of the CLI: ``watch`` (the daemon), ``events --follow`` and ``emit``.

``watch`` and ``events --follow`` print one line per outcome or event as it happens (one JSON
object per line with ``--json``, each with ``status``) and run until SIGINT or SIGTERM, which
stop them cleanly with exit 0. ``events --follow`` works from any process, daemon or not: it
reads the store when the store moves (``daemon.wakeups``: a watch, no polling). Cheap to
import: watchfiles and the daemon load only when ``watch`` or ``events --follow`` runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    import argparse
    import threading
    from collections.abc import Callable, Iterator
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare ``watch`` and ``emit`` with ``verb(name, help)`` (which adds the common options)."""
    watch = verb("watch", "the file-watch daemon, in the foreground until SIGINT/SIGTERM")
    watch.add_argument("--debounce-ms", type=_millis, default=50, metavar="MS", help="(50)")
    watch.add_argument("--step-ms", type=_millis, default=20, metavar="MS", help="(20)")
    emit = verb("emit", "record a coordination event from outside (a completion, a risk)")
    emit.add_argument("type", metavar="TYPE", help="e.g. task.completed")
    emit.add_argument("--data", metavar="JSON", help="a JSON object (default {})")


def _millis(text: str) -> int:
    """A whole number of milliseconds, 0 or more (argparse reports the error)."""
    import argparse

    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of milliseconds >= 0")
    return int(text)


def cmd_watch(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.daemon.loop import WatchfilesSource, instance_lock, run

    source = WatchfilesSource(debounce_ms=args.debounce_ms, step_ms=args.step_ms)
    with stop_on_signals() as stop, instance_lock(memory.home), _served(memory, args.json):
        for outcome in run(memory.workspace, source, stop):
            if not _print_line("watch", outcome.to_json(), args.json):
                stop.set()
    return {}


@contextlib.contextmanager
def _served(memory: Memory, as_json: bool) -> Iterator[None]:
    """Serve the gate over HTTP while the block runs, when ``install-hooks claude-code
    --served`` configured it for this memory home (its ``gate.json``)."""
    from memkeeper.daemon.plan import Outcome
    from memkeeper.errors import EnvironmentFailure, Invalid
    from memkeeper.fs import gateconfig

    with contextlib.ExitStack() as stack:
        # Any failure to serve is said, and the daemon watches on: the command hook answers.
        outcome = None
        try:
            config = gateconfig.load(memory.home)
            if config is not None:
                from memkeeper.gate.served import serving

                stack.enter_context(serving(memory.home, config, _log))
                what = f"the gate at {config.url('claude-code')} (Claude Code's http hooks)"
                outcome = Outcome("serving", None, what)
        except (EnvironmentFailure, Invalid) as exc:
            outcome = Outcome("error", None, f"the gate is not served: {exc.message}")
        if outcome is not None:
            _print_line("watch", outcome.to_json(), as_json)
        yield


def _log(line: str) -> None:
    """A line of the served gate's own (a failure it allowed a call through on) on stderr."""
    with contextlib.suppress(OSError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def cmd_emit(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops.emit import parse_data

    return memory.emit(args.type, parse_data(args.data)).to_json()


def follow_events(
    memory: Memory, since: int, as_json: bool, **filters: str | None
) -> dict[str, Any]:
    """Print events after ``since`` (those ``filters`` keep: ``path``, ``type``, ``actor``,
    as ``views.select_events`` reads them) as they are recorded, woken by the store's
    movement (``daemon.wakeups``), until a signal; nothing is left for the caller to print."""
    from memkeeper.daemon.wakeups import store_moves
    from memkeeper.ops.views import select_events

    def show() -> bool:
        nonlocal since
        fresh = memory.events(since=since)
        since = fresh[-1].id if fresh else since
        lines = (e.to_json() for e in select_events(fresh, **filters))
        return all(_print_line("events", line, as_json) for line in lines)

    with stop_on_signals() as stop:
        for _ in store_moves(memory.workspace, stop):
            if not show():
                return {"events": []}
        show()  # what was recorded before the signal
    return {"events": []}


def _print_line(command: str, payload: dict[str, Any], as_json: bool) -> bool:
    """Print one streamed line now; ``False`` once nobody reads stdout any more."""
    if as_json:
        line = json.dumps({"status": "ok", **payload}, ensure_ascii=False) + "\n"
    else:
        from memkeeper.cli import output as humane

        line = humane.render(command, {"events": [payload]} if command == "events" else payload)
    try:
        sys.stdout.write(line)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: stop quietly, and let the exit flush go nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return False
    return True


@contextlib.contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event that SIGINT and SIGTERM set (instead of killing us) while the block runs."""
    import signal
    import threading

    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # only the main thread may install handlers: stop by other means
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in signals}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "watch": cmd_watch,
    "emit": cmd_emit,
}

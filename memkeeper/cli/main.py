"""The ``memkeeper`` command: argparse, one function per verb, one boundary for exit codes.

``--root``, ``--agent`` and ``--json`` work before or after the command name. Each verb
returns a JSON-able payload; the boundary prints it (JSON or for people) and maps
``MemkeeperError`` subclasses onto the exit codes of docs/reference.md §6. Only ``main`` exits.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys

from memkeeper.errors import MemkeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

    from memkeeper.api import Memory


_HOOK_OPTIONS = ("--root", "--agent", "--event")


def hook_words(words: Sequence[str]) -> tuple[str, str | None, str | None, str | None] | None:
    """``hook AGENT`` with its options (``--root``, ``--agent``, ``--event``, as ``--opt V``
    or ``--opt=V``; ``--json`` and ``--debug`` change nothing) read as argparse reads them:
    ``(AGENT, root, agent, event)``; None for any other command line, which argparse then
    reads (and explains when wrong)."""
    found: dict[str, str | None] = {"root": None, "agent": None, "event": None}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if name == "--event" and not positional:
            return None  # an option of `hook` only, as argparse has it
        if name in _HOOK_OPTIONS and eq:
            found[name[2:]] = value
        elif word in _HOOK_OPTIONS and i + 1 < len(words) and not words[i + 1].startswith("-"):
            found[word[2:]] = words[i + 1]
            i += 1
        elif word in ("--json", "--debug"):
            pass
        elif word.startswith("-"):
            return None
        else:
            positional.append(word)
        i += 1
    if len(positional) != 2 or positional[0] != "hook":
        return None  # every other command: the agents' names are not even loaded
    from memkeeper.gate.agents import AGENTS

    if positional[1] not in AGENTS:
        return None
    return positional[1], found["root"], found["agent"], found["event"]


def console() -> NoReturn:
    """The ``memkeeper`` executable: ``main``, then exit without interpreter teardown.

    Every transaction is committed (and synced) before ``main`` returns, so skipping the
    teardown and SQLite's checkpoint-on-close saves an agent several milliseconds per call.
    """
    try:
        code = main(keep_open=True)
        sys.stdout.flush()
    except BrokenPipeError:  # `memkeeper events | head`: the reader left; that is not an error
        code = 0
    with contextlib.suppress(BrokenPipeError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None, *, keep_open: bool = False) -> int:
    """Run one command; return its exit code. ``keep_open`` leaves the store to process exit."""
    words = sys.argv[1:] if argv is None else list(argv)
    as_json, opened = "--json" in words, _Opened()
    try:
        hook = hook_words(words)
        if hook is not None:  # every agent's every tool call: no argparse (see hook_words)
            from memkeeper.gate.hook import run

            streams = (sys.stdin.buffer, sys.stdout, sys.stderr)
            kind, root, agent, event = hook
            return run(kind, root, agent, *streams, event=event)
        if len(words) == 3 and words[:2] == ["filter", "clean"]:  # git's, on every git add
            from memkeeper.cli.gitfilter import run_clean

            return run_clean(words[2], sys.stdin.buffer, sys.stdout.buffer)
        from memkeeper.cli.plainwords import plain_args

        args = plain_args(words)  # an agent's plain read or patch: no argparse (see plainwords)
        if args is None:
            from memkeeper.cli.parser import parse_args

            args = parse_args(words)
        as_json = args.json
        if args.command == "hook":  # the agent's protocol on stdin/stdout; always 0
            from memkeeper.cli.hooks import run_hook

            return run_hook(args)
        if args.command == "filter":  # stdout is git's
            from memkeeper.cli.hooks import run_filter

            return run_filter(args)
        if args.command == "mcp":  # stdout is the protocol's
            from memkeeper.cli.servers import run_mcp

            return run_mcp(args)
        if args.command == "serve":  # runs until stopped; its URL is its only output
            from memkeeper.cli.servers import run_serve

            return run_serve(args)
        _emit(args.command, _dispatch(args, keep_open, opened), as_json)
    except MemkeeperError as exc:
        from memkeeper.cli.boundary import fail

        return fail(exc, as_json)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the boundary: an unexpected failure is exit 1, logged
        from memkeeper.cli.boundary import crash

        return crash(exc, words, opened.root, "--debug" in words)
    return 0


class _Opened:
    """The root a command ran under, once known (where the boundary logs a crash)."""

    root: str | None = None


def _dispatch(args: argparse.Namespace, keep_open: bool, opened: _Opened) -> dict[str, Any]:
    from memkeeper.api import Memory

    memory = Memory.open(args.root, args.agent)
    opened.root = memory.workspace.top
    try:
        return _command(args.command)(memory, args)
    finally:
        ws = memory.workspace
        if not keep_open:
            ws.close()
        elif ws.store_opened:
            ws.store.trim_log()


def _emit(command: str, payload: dict[str, Any], as_json: bool) -> None:
    if command == "watch":  # streamed its lines as they happened
        return
    if as_json:
        if command == "events":
            for event in payload["events"]:
                print(json.dumps({"status": "ok", **event}, ensure_ascii=False))
        else:
            print(json.dumps({"status": "ok", **payload}, ensure_ascii=False))
        return
    from memkeeper.cli import output as humane

    sys.stdout.write(humane.render(command, payload))


# -- verbs ------------------------------------------------------------------------------------


def cmd_init(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops.setup import init

    return init(memory.workspace, args.preset, add_howto=args.howto)


def cmd_status(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.status(full=args.full)


def cmd_sections(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    rel = memory.workspace.relpath(args.path)
    return {"path": rel, "sections": [s.to_json() for s in memory.sections(args.path)]}


def cmd_read(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    if args.rev is not None:
        return memory.read_at(args.ref, args.rev)
    return memory.read(args.ref).to_json()


def cmd_patch(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.cli.inputs import read_input

    body = read_input(args.body_file) if args.body_file is not None else None
    dmp = None
    if args.dmp_file is not None:
        from memkeeper.markdown.patchrules import text_bytes

        dmp = text_bytes(read_input(args.dmp_file), args.dmp_file)
    result = memory.patch(
        args.ref,
        body,
        expect_rev=args.expect_rev,
        expect_file_hash=args.expect_file_hash,
        dmp=dmp,
        claim=args.claim,
        merge=args.merge,
    )
    return result.to_json()


def cmd_events(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    actor = args.actor
    rel = memory.workspace.relpath(args.path) if args.path else None
    if args.follow:
        from memkeeper.cli.watch import follow_events

        return follow_events(memory, args.since, args.json, path=rel, type=args.type, actor=actor)
    found = memory.events(since=args.since)
    if not found or found[0].id > args.since + 1:
        _compacted_notice(memory, args.since)
    if args.path or args.type or actor:
        from memkeeper.ops.views import select_events

        found = select_events(found, path=rel, type=args.type, actor=actor)
    return {"events": [e.to_json() for e in found]}


def _compacted_notice(memory: Memory, since: int) -> None:
    """On stderr, when events asked for were compacted away (reference §8 "Compaction")."""
    if not memory.workspace.has_store:
        return
    from memkeeper.ops.compact import compacted_through

    compacted = compacted_through(memory.workspace)
    if compacted > since:
        sys.stderr.write(
            f"memkeeper: events up to {compacted} were compacted into a checkpoint; "
            f"the log starts at event {compacted + 1}\n"
        )


def cmd_verify(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.verify(full=args.full)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "init": cmd_init,
    "status": cmd_status,
    "sections": cmd_sections,
    "read": cmd_read,
    "patch": cmd_patch,
    "events": cmd_events,
    "verify": cmd_verify,
}


def _command(name: str) -> Callable[[Memory, argparse.Namespace], dict[str, Any]]:
    if name in COMMANDS:
        return COMMANDS[name]
    from memkeeper.cli.parser import VERB_GROUPS

    module = next(m for m, verbs in VERB_GROUPS.items() if name in verbs)
    found: Callable[[Memory, argparse.Namespace], dict[str, Any]]
    found = importlib.import_module(module).COMMANDS[name]
    return found

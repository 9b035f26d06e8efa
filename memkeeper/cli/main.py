"""The ``memkeeper`` command: argparse, one function per verb, one boundary for exit codes.

``--root``, ``--agent`` and ``--json`` work before or after the command name. Each verb
returns a JSON-able payload; the boundary prints it (JSON or for people) and maps
``MemkeeperError`` subclasses onto the exit codes of docs/reference.md §6. Only ``main`` exits.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys

from memkeeper.errors import Invalid, MemkeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

    from memkeeper.api import Memory


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized without importing shutil (argparse builds one per option)."""

    def __init__(self, prog: str) -> None:
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):
            width = int(os.environ.get("COLUMNS", "") or 80)
        super().__init__(prog, width=max(width - 2, 40))


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise Invalid(f"{self.prog}: {message} — see {self.prog} --help")


def _common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument("--root", default=default, help="memory root (default: git main worktree)")
    parser.add_argument("--agent", default=default, help="who is acting ($MEMKEEPER_AGENT)")
    parser.add_argument(
        "--json",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="print one JSON object",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="print the traceback of an internal error (else: .memkeeper/error.log)",
    )


class _Skipped:
    """What ``verb`` gives for a verb the command line does not name: declaring its options
    would cost argparse's gettext lookups on every call of an agent's hot path."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Skipped:
        return self


def build_parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``wanted``, only that verb is declared (and only its group imported)."""
    parser = _Parser(prog="memkeeper", description="Safe shared memory files for AI agents.")
    _common(parser, top=True)
    verbs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def verb(name: str, help: str) -> argparse.ArgumentParser:
        if wanted is not None and name != wanted:
            return _Skipped()  # type: ignore[return-value]  # it takes what add_verbs declares
        sub = verbs.add_parser(name, help=help, description=help)
        _common(sub, top=False)
        return sub

    init = verb("init", "write .memkeeper.yaml (if absent) and .memkeeper/, index managed files")
    init.add_argument("--preset", help="policy preset to copy (default: default)")
    init.add_argument(
        "--howto",
        action="store_true",
        help="add to CLAUDE.md, AGENTS.md and GEMINI.md a section telling agents how to "
        "change each memory file (or bring it up to date)",
    )
    verb("status", "root, managed files, their classes and section counts")
    verb("sections", "list a file's sections").add_argument("path")
    verb("read", "read a section (PATH#KEY) or a whole file (PATH)").add_argument("ref")
    patch = verb("patch", "compare-and-swap one section's body")
    patch.add_argument("ref", metavar="PATH#KEY")
    patch.add_argument("--expect-rev", type=int, required=True)
    patch.add_argument("--expect-file-hash")
    patch.add_argument("--claim", metavar="ID")
    source = patch.add_mutually_exclusive_group(required=True)
    source.add_argument("--body-file", metavar="F", help="new body ('-' for stdin)")
    source.add_argument("--dmp-file", metavar="F", help="diff-match-patch payload ('-': stdin)")
    events = verb("events", "the event log, oldest first")
    events.add_argument("--since", type=int, default=0, metavar="ID")
    events.add_argument("--follow", action="store_true", help="keep printing new events")
    verb("verify", "check the event log's hash chain and the index against the files")
    for module in _groups_for(wanted):
        module.add_verbs(verb)
    return parser


# Verbs declared by other modules, imported only when one of their verbs runs (or for help and
# unknown verbs): `read` and `patch` pay for none of them. tests/test_cli.py keeps this in sync.
VERB_GROUPS = {
    "memkeeper.cli.claims": ("claim", "renew", "release", "claims", "metrics"),
    "memkeeper.cli.files": ("append", "regen", "reconcile", "check"),
    "memkeeper.cli.watch": ("watch", "emit"),
    "memkeeper.cli.hooks": ("hook", "install-hooks", "uninstall-hooks"),
    "memkeeper.cli.servers": ("mcp",),
}


def _groups_for(wanted: str | None) -> list[Any]:
    return [
        importlib.import_module(name)
        for name, verbs in VERB_GROUPS.items()
        if wanted is None or wanted in verbs
    ]


def _wanted_verb(argv: Sequence[str]) -> str | None:
    """The verb named on the command line if it is a known one; None means "declare all"."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--root", "--agent"):
            skip = True
        elif arg in ("-h", "--help"):
            return None
        elif not arg.startswith("-"):
            known = arg in COMMANDS or any(arg in v for v in VERB_GROUPS.values())
            return arg if known else None
    return None


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
        args = build_parser(_wanted_verb(words)).parse_args(words)
        as_json = args.json
        if args.command == "hook":  # the agent's protocol on stdin/stdout; always 0
            from memkeeper.cli.hooks import run_hook

            return run_hook(args)
        if args.command == "mcp":  # stdout is the protocol's
            from memkeeper.cli.servers import run_mcp

            return run_mcp(args)
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
    from memkeeper.cli.claims import cmd_claims
    from memkeeper.cli.files import open_reconciliations
    from memkeeper.ops.setup import status

    payload = status(memory.workspace)
    payload["reconciliations"] = open_reconciliations(memory)
    payload["claims"] = cmd_claims(memory, args)["claims"]
    return payload


def cmd_sections(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    rel = memory.workspace.relpath(args.path)
    return {"path": rel, "sections": [s.to_json() for s in memory.sections(args.path)]}


def cmd_read(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
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
    )
    return result.to_json()


def cmd_events(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    if args.follow:
        from memkeeper.cli.watch import follow_events

        return follow_events(memory, args.since, args.json)
    return {"events": [e.to_json() for e in memory.events(since=args.since)]}


def cmd_verify(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.verify()


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
    module = next(m for m, verbs in VERB_GROUPS.items() if name in verbs)
    found: Callable[[Memory, argparse.Namespace], dict[str, Any]]
    found = importlib.import_module(module).COMMANDS[name]
    return found

"""The ``memkeeper`` command line's argparse parser: the verbs ``cli.main`` runs, each with
the common options (``--root``, ``--agent``, ``--json``, ``--debug``) before or after its name.

Imported only when a command line is parsed this way: ``memkeeper hook AGENT``, run on every
tool call of every agent, is read without argparse (``cli.main.hook_words``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from memkeeper.errors import Usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn


# Verbs declared by other modules, imported only when one of their verbs runs (or for help and
# unknown verbs): `read` and `patch` pay for none of them. tests/cli/test_main.py keeps this in sync
# with the verbs `build_parser` declares itself (``BASE_VERBS``) and ``cli.main.COMMANDS``.
VERB_GROUPS = {
    "memkeeper.cli.claims": (
        *("claim", "renew", "release", "claims", "metrics", "complete", "abandon"),
        *("suspend", "resume", "takeover"),
    ),
    "memkeeper.cli.files": ("append", "regen", "reconcile", "check"),
    "memkeeper.cli.watch": ("watch", "emit"),
    "memkeeper.cli.hooks": ("hook", "install-hooks", "uninstall-hooks", "filter"),
    "memkeeper.cli.servers": ("mcp", "serve"),
    "memkeeper.cli.proposals": ("proposals",),
    "memkeeper.cli.history": ("log", "revert"),
    "memkeeper.cli.chain": ("compact",),
    "memkeeper.cli.doctor": ("doctor",),
    "memkeeper.cli.keys": ("keys",),
    "memkeeper.cli.mail": ("send", "inbox", "ack", "request-release", "answer"),
    "memkeeper.cli.meetings": ("meeting",),
    "memkeeper.cli.work": ("work",),
}


_VALUED = ("--root", "--agent")  # the options before the verb that take a value


def _wanted_verb(argv: Sequence[str]) -> str | None:
    """The verb named on the command line if it is a known one; None means "declare all"."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif len(arg) > 2 and any(option.startswith(arg) for option in _VALUED):
            skip = True  # --root D, --agent ID, or as argparse abbreviates them (--ro D)
        elif arg in ("-h", "--help"):
            return None
        elif not arg.startswith("-"):
            known = arg in BASE_VERBS or any(arg in v for v in VERB_GROUPS.values())
            return arg if known else None
    return None


BASE_VERBS = ("init", "status", "sections", "read", "patch", "events", "verify")


def whole_number(text: str) -> int:
    """``cli.inputs.whole_number``, loaded once a command line holds a number (a ``read``
    without ``--rev`` never does)."""
    from memkeeper.cli import inputs

    return inputs.whole_number(text)


def parse_args(words: Sequence[str]) -> argparse.Namespace:
    """The command line read; ``Invalid`` (exit 2) saying what is wrong with it."""
    return build_parser(_wanted_verb(words)).parse_args(words)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, sized without importing shutil (argparse builds one per option);
    the examples after the options keep their lines."""

    def __init__(self, prog: str) -> None:
        try:
            width = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = os.environ.get("COLUMNS", "")
            width = int(columns) if columns.isdigit() else 80  # (as argparse: else ignored)
        super().__init__(prog, width=max(width - 2, 40))


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise Usage(f"{self.prog}: {message} — see {self.prog} --help")

    def format_help(self) -> str:
        # The examples are read only now: parsing a command line never pays for them.
        if self.epilog is None:
            from memkeeper.cli.examples import epilog

            self.epilog = epilog(self.prog, self._get_formatter()._width)
        return super().format_help()


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


def common_options(parser: argparse.ArgumentParser) -> None:
    """The common options on a verb's own sub-verb (``meeting show``, …)."""
    _common(parser, top=False)


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
    parser.add_argument(
        "--version", action=_Version, nargs=0, default=argparse.SUPPRESS, help="print the version"
    )
    _common(parser, top=True)
    verbs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def verb(name: str, help: str) -> argparse.ArgumentParser:
        if wanted is not None and name != wanted:
            return _Skipped()  # type: ignore[return-value]  # it takes what add_verbs declares
        sub = verbs.add_parser(name, help=help, description=help)
        _common(sub, top=False)
        return sub

    init = verb("init", "write .memkeeper.yaml (if absent) and .memkeeper/, index managed files")
    init.add_argument(
        "--preset",
        metavar="NAME",
        help="the policy preset to copy when there is no policy yet (default: default; "
        "the presets are listed below)",
    )
    init.add_argument(
        "--howto",
        action="store_true",
        help="add to CLAUDE.md, AGENTS.md and GEMINI.md a section telling agents how to "
        "change each memory file (or bring it up to date)",
    )
    status = verb("status", "root, managed files, their classes and section counts")
    status.add_argument(
        "--full",
        action="store_true",
        help="read every managed file (by default a file whose stat stamp has not moved since "
        "memkeeper last read it is not read again)",
    )
    verb("sections", "list a file's sections").add_argument("path")
    read = verb("read", "read a section (PATH#KEY) or a whole file (PATH)")
    read.add_argument("ref")
    read.add_argument(
        "--rev",
        type=whole_number,
        metavar="N",
        help="the section's body at an earlier revision (the last 100 are kept)",
    )
    patch = verb("patch", "compare-and-swap one section's body")
    patch.add_argument("ref", metavar="PATH#KEY")
    patch.add_argument(
        "--expect-rev",
        type=whole_number,
        required=True,
        metavar="N",
        help="the section's rev you read (`read --json`); another rev now is a conflict (exit "
        "3) that prints the current text",
    )
    patch.add_argument(
        "--expect-file-hash",
        metavar="H",
        help="also require the whole file unchanged since you read it (its file_hash)",
    )
    patch.add_argument(
        "--claim",
        metavar="ID",
        help="write under this claim of yours: refused once it has expired (its fencing token)",
    )
    patch.add_argument(
        "--merge",
        action="store_true",
        help="when --expect-rev is stale, merge your change into the current body (three-way)",
    )
    source = patch.add_mutually_exclusive_group(required=True)
    source.add_argument("--body-file", metavar="F", help="new body ('-' for stdin)")
    source.add_argument("--dmp-file", metavar="F", help="diff-match-patch payload ('-': stdin)")
    events = verb("events", "the event log, oldest first")
    events.add_argument(
        "--since",
        type=whole_number,
        default=0,
        metavar="ID",
        help="only events after this id (0: all)",
    )
    events.add_argument("--follow", action="store_true", help="keep printing new events")
    events.add_argument("--path", metavar="PATH", help="only events about this file")
    events.add_argument("--type", metavar="TYPE", help="only events of this type, e.g. claim.*")
    events.add_argument("--actor", metavar="ID", help="only events by this actor (agent id)")
    verify = verb("verify", "check the event log's hash chain and the index against the files")
    verify.add_argument(
        "--full",
        action="store_true",
        help="walk the whole event chain, not only the events after its last checkpoint, and "
        "read every indexed file, not only those whose stat stamp moved since memkeeper last "
        "read them",
    )
    for module in _groups_for(wanted):
        module.add_verbs(verb)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed package's, looked up only when asked (importlib.metadata
    costs more than a whole ``read``)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("memkeeper")
        except PackageNotFoundError:
            found = "(not installed)"
        print(f"memkeeper {found}")
        parser.exit()


def _groups_for(wanted: str | None) -> list[Any]:
    return [
        importlib.import_module(name)
        for name, verbs in VERB_GROUPS.items()
        if wanted is None or wanted in verbs
    ]

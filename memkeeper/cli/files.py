"""The CLI verbs for history, generated regions and validation (docs/reference.md §4): ``append``,
``regen``, ``reconcile list | show ID | resolve ID``, ``check``. Each returns a JSON-able
payload; ``cli`` prints it and maps errors to exit codes (``check`` fails with exit 6).
Cheap to import: the modules doing the work load only when a verb runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import read_input, whole_number
from memkeeper.errors import Invalid
from memkeeper.ops.reconcile import show

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare the verbs with ``verb(name, help)`` (which adds the common options)."""
    append = verb("append", "add an entry at the end of an append-only file")
    append.add_argument("path")
    entry = append.add_mutually_exclusive_group(required=True)
    entry.add_argument("--text", metavar="T", help="the entry's text")
    entry.add_argument("--entry-file", metavar="F", help="read the entry from F ('-': stdin)")
    regen = verb("regen", "re-render generated regions (one file, or every generated file)")
    regen.add_argument("path", nargs="?")
    reconcile = verb("reconcile", "hand edits of generated regions: list | show ID | resolve ID")
    reconcile.add_argument("action", choices=("list", "show", "resolve"))
    reconcile.add_argument("id", nargs="?", type=whole_number, metavar="ID")
    how = reconcile.add_mutually_exclusive_group()
    how.add_argument("--keep-human", action="store_true", help="keep the edit above the region")
    how.add_argument("--take-generated", action="store_true", help="render over the edit")
    how.add_argument(
        "--keep-local", action="store_true", help="a shared store's: push this root's file"
    )
    how.add_argument(
        "--take-store", action="store_true", help="a shared store's: take the store's version"
    )
    reconcile.add_argument("--all", action="store_true", help="list resolved ones too")
    check = verb("check", "validate files against the policy (for pre-commit and CI)")
    check.add_argument("--staged", action="store_true", help="judge what git would commit")
    check.add_argument(
        "--push", action="store_true", help="judge what git would push (pre-push input on stdin)"
    )
    check.add_argument("--remote", metavar="NAME", help="with --push: the remote pushed to")
    check.add_argument(
        "--full",
        action="store_true",
        help="read and judge every file (by default a file whose stat stamp shows the bytes a "
        "clean check saw is not read again)",
    )
    check.add_argument("paths", nargs="*", metavar="PATH")


def cmd_append(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    text = args.text if args.text is not None else read_input(args.entry_file)
    return memory.append(args.path, text).to_json()


def cmd_regen(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    results = memory.regen(args.path)
    opened = [r.to_json() for r in memory.reconciliations()]
    return {"files": [r.to_json() for r in results], "reconciliations": opened}


def cmd_reconcile(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    if args.action == "list":
        if args.id is not None or _chosen(args):
            raise Invalid("reconcile list takes no ID and no resolution — see --help")
        rows = memory.reconciliations(resolved=args.all)
        return {"action": "list", "reconciliations": [r.to_json() for r in rows]}
    if args.id is None:
        raise Invalid(f"reconcile {args.action} needs an ID — list them with: reconcile list")
    if args.action == "show":
        return {"action": "show", **show(memory.workspace, args.id)}
    chosen = _chosen(args)
    if len(chosen) != 1:
        raise Invalid(
            "reconcile resolve needs one of --keep-human or --take-generated (a generated "
            "region), --keep-local or --take-store (a file and the shared store)"
        )
    return {"action": "resolve", **memory.resolve(args.id, chosen[0]).to_json()}


def _chosen(args: argparse.Namespace) -> list[str]:
    """The resolutions the options name, spelled as ``reconcile.HOW`` spells them."""
    flags = ("keep_human", "take_generated", "keep_local", "take_store")
    return [flag.replace("_", "-") for flag in flags if getattr(args, flag)]


def cmd_check(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.cli.checkpush import run_check

    return run_check(memory, args)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "append": cmd_append,
    "regen": cmd_regen,
    "reconcile": cmd_reconcile,
    "check": cmd_check,
}

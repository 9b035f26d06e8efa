"""The CLI verbs for a section's history (docs/reference.md §4.25 and §4.26): ``log PATH#KEY``
(each revision: who, when, how; ``-p`` the diffs) and ``revert PATH#KEY --to-rev N
--expect-rev M`` (a patch back to an earlier body). ``read --rev N`` is ``read``'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import whole_number

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare ``log`` and ``revert`` with ``verb(name, help)`` (which adds the common
    options)."""
    log = verb("log", "a section's revisions, newest first: rev, who, when, how")
    log.add_argument("ref", metavar="PATH#KEY")
    log.add_argument(
        "-p", "--patch", action="store_true", help="show what each revision changed (a diff)"
    )
    revert = verb("revert", "patch a section back to its body at an earlier revision")
    revert.add_argument("ref", metavar="PATH#KEY")
    revert.add_argument(
        "--to-rev", type=whole_number, required=True, metavar="N", help="the revision to go back to"
    )
    revert.add_argument(
        "--expect-rev",
        type=whole_number,
        required=True,
        metavar="M",
        help="the section's rev now (`memkeeper log`); another is a conflict (exit 3)",
    )


def cmd_log(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.log(args.ref, diff=args.patch)


def cmd_revert(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    done = memory.revert(args.ref, to_rev=args.to_rev, expect_rev=args.expect_rev)
    return {**done.to_json(), "reverted_to": args.to_rev}


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "log": cmd_log,
    "revert": cmd_revert,
}

"""The CLI verb for proposals (docs/reference.md §4 "Merging stale patches"): ``proposals``
(list), ``proposals show ID``, ``proposals apply ID --expect-rev N``, ``proposals drop ID``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import whole_number
from memkeeper.errors import Invalid

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]

ACTIONS = ("list", "show", "apply", "drop")


def add_verbs(verb: Verb) -> None:
    """Declare the verbs with ``verb(name, help)`` (which adds the common options)."""
    proposals = verb(
        "proposals",
        "patches kept when a merge could not land: list | show ID | apply ID --expect-rev N "
        "| drop ID",
    )
    proposals.add_argument("action", nargs="?", choices=ACTIONS, default="list")
    proposals.add_argument("id", nargs="?", type=whole_number, metavar="ID")
    proposals.add_argument(
        "--expect-rev", type=whole_number, metavar="N", help="apply: the section's rev"
    )
    proposals.add_argument("--all", action="store_true", help="list applied and dropped ones too")


def cmd_proposals(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    action, proposal_id = args.action, args.id
    if action == "list":
        if proposal_id is not None or args.expect_rev is not None:
            raise Invalid("proposals (list) takes no ID and no --expect-rev — see --help")
        found = memory.proposals(closed=args.all)
        return {"proposals": [p.to_json() for p in found]}
    if proposal_id is None:
        raise Invalid(f"proposals {action} needs an ID — list them with: memkeeper proposals")
    if action == "apply":
        if args.expect_rev is None:
            raise Invalid(
                f"proposals apply needs --expect-rev N: the rev of the section as you read "
                f"it — see it with: memkeeper proposals show {proposal_id}"
            )
        proposal, result = memory.apply_proposal(proposal_id, expect_rev=args.expect_rev)
        return {**result.to_json(), "proposal": proposal.to_json()}
    if args.expect_rev is not None:
        raise Invalid(f"proposals {action} takes no --expect-rev (only apply does)")
    if action == "show":
        return memory.proposal(proposal_id)
    return {"proposal": memory.drop_proposal(proposal_id).to_json()}


COMMANDS = {"proposals": cmd_proposals}

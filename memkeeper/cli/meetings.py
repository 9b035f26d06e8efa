"""The ``meeting`` verb of the CLI (docs/reference.md §4.32): ``list``, ``show``, ``open``,
``propose``, ``accept`` and ``resolve`` — every change with ``--expect-rev``, the meeting's
revision as ``show`` gave it (stale: exit 3, with the meeting as it is now)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import whole_number
from memkeeper.errors import Invalid

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory
    from memkeeper.ops.meetings import How

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    meeting = verb("meeting", "meetings on overlapping claims: list, show, open, propose, …")
    if not hasattr(meeting, "add_subparsers"):
        return  # another verb runs: nothing here is declared
    from memkeeper.cli.parser import common_options

    actions = meeting.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help)
        common_options(sub)
        return sub

    listing = action("list", help="open and escalated meetings")
    listing.add_argument("--all", action="store_true", help="resolved ones too")
    action("show", help="one meeting").add_argument("id", type=whole_number)
    opening = action("open", help="open a meeting with another agent")
    opening.add_argument("--with", dest="others", action="append", required=True, metavar="ID")
    opening.add_argument("--targets", nargs="+", required=True, metavar="T", help="contested")
    opening.add_argument("--deadline", type=float, metavar="S", help="seconds (policy: 900)")
    opening.add_argument("--reason", default="", metavar="T", help="why")
    propose = action("propose", help="propose a resolution (you accept it)")
    propose.add_argument("id", type=whole_number)
    _rev(propose)
    _plan(propose, required=True)
    propose.add_argument("--note", default="", metavar="T")
    accept = action("accept", help="accept a proposal")
    accept.add_argument("id", type=whole_number)
    accept.add_argument("proposal", type=whole_number, metavar="N")
    _rev(accept)
    resolve = action("resolve", help="resolve: an agreed proposal, or (humans) any")
    resolve.add_argument("id", type=whole_number)
    _rev(resolve)
    how = _plan(resolve, required=True)
    how.add_argument("--proposal", type=whole_number, metavar="N", help="an agreed proposal")
    resolve.add_argument("--note", default="", metavar="T")


def _rev(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expect-rev", type=whole_number, required=True, metavar="N", help="the rev you read"
    )


def _plan(parser: argparse.ArgumentParser, *, required: bool) -> Any:
    how = parser.add_mutually_exclusive_group(required=required)
    how.add_argument(
        "--split", action="append", metavar="AGENT=T[,T…]", help="each participant's part"
    )
    how.add_argument("--serialize", metavar="AGENT", help="AGENT goes first, the others wait")
    how.add_argument("--handoff", metavar="AGENT", help="the contested targets go to AGENT")
    how.add_argument("--join", action="store_true", help="one claim held by all")
    how.add_argument("--escalate", action="store_true", help="a human decides (CODEOWNERS)")
    return how


def _how(args: argparse.Namespace) -> How | None:
    from memkeeper.ops.meetings import How

    if args.split:
        assign: dict[str, list[str]] = {}
        for given in args.split:
            agent, eq, targets = given.partition("=")
            if not eq or not agent or not targets:
                raise Invalid(f"--split {given!r}: write AGENT=TARGET[,TARGET…]")
            assign.setdefault(agent, []).extend(t for t in targets.split(",") if t)
        return How("split", assign, note=args.note)
    if args.serialize or args.handoff:
        kind = "serialize" if args.serialize else "handoff"
        return How(kind, who=args.serialize or args.handoff, note=args.note)
    if args.join or args.escalate:
        return How("join" if args.join else "escalate", note=args.note)
    return None


def cmd_meeting(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import meetings

    ws = memory.workspace
    if args.action == "list":
        found = meetings.listing(ws, resolved=args.all)
        return {"action": "list", "meetings": [m.to_json() for m in found]}
    if args.action == "show":
        m = meetings.show(ws, args.id)
    elif args.action == "open":
        m = meetings.open_meeting(
            ws, args.others, args.targets, deadline_s=args.deadline, reason=args.reason
        )
    elif args.action == "propose":
        how = _how(args)
        assert how is not None
        m = meetings.propose(ws, args.id, args.expect_rev, how)
    elif args.action == "accept":
        m = meetings.accept(ws, args.id, args.expect_rev, args.proposal)
    else:
        proposal = getattr(args, "proposal", None)
        m = meetings.resolve(ws, args.id, args.expect_rev, proposal=proposal, how=_how(args))
    return {"action": args.action, "meeting": m.to_json()}


def render(p: dict[str, Any]) -> str:
    if p["action"] == "list":
        if not p["meetings"]:
            return "no meetings\n"
        return "".join(_head(m) + "\n" for m in p["meetings"])
    m = p["meeting"]
    lines = [_head(m), f"  participants: {', '.join(m['participants'])}"]
    if m["reason"]:
        lines.append(f"  why: {m['reason']}")
    for o in m["proposals"]:
        lines.append(
            f"  [{o['n']}] {o['by']}: {_plan_text(o)} (accepted by {', '.join(o['accepted_by'])})"
        )
    if m["owners"]:
        lines.append(f"  owners (CODEOWNERS): {', '.join(m['owners'])}")
    if m["resolution"]:
        lines.append(f"  resolved by {m['resolved_by']}: {_plan_text(m['resolution'])}")
    if m.get("order"):
        turns = [f"{a}{' (now)' if n == m['turn'] and m['state'] == 'serializing' else ''}"
                 for n, a in enumerate(m["order"])]  # fmt: skip
        lines.append(f"  turns: {' → '.join(turns)}")
        lines += [f"  skipped {s['agent']}: {s['reason']}" for s in m["skipped"]]
    return "\n".join(lines) + "\n"


def _head(m: dict[str, Any]) -> str:
    when = f"deadline {m['deadline']}" if m["state"] == "open" else m["state"]
    return f"meeting {m['id']} rev {m['rev']} ({when}) on {', '.join(m['targets'])}"


def _plan_text(p: dict[str, Any]) -> str:
    if p["kind"] == "split":
        parts = "; ".join(f"{a}: {', '.join(t)}" for a, t in p.get("assign", {}).items())
        return f"split — {parts}"
    if "who" in p:
        return f"{p['kind']} — {p['who']}"
    return str(p["kind"])


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "meeting": cmd_meeting,
}

"""The ``work`` verb of the CLI (docs/reference.md §4.33): ``add``, ``list``, ``show``,
``next``, ``done``, ``fail``, ``return`` and ``wait``. ``next`` with nothing to take is exit 5
(busy), as a claim is; a ``done`` by a worker whose claim ended is refused as the claim verbs
refuse (exit 2 for its own ended claim, exit 4 when another holds or ended the item)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import signed_number, whole_number

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    work = verb("work", "work items: add, list, show, next (claim the next), done, fail, …")
    if not hasattr(work, "add_subparsers"):
        return  # another verb runs: nothing here is declared
    from memkeeper.cli.parser import common_options

    actions = work.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help)
        common_options(sub)
        return sub

    add = action("add", help="add a work item")
    add.add_argument("title", metavar="TITLE")
    add.add_argument("--paths", nargs="+", default=[], metavar="T", help="what its claim covers")
    add.add_argument("--priority", type=signed_number, default=0, metavar="N", help="higher first")
    add.add_argument("--after", nargs="+", type=whole_number, default=[], metavar="ID")
    add.add_argument("--body-file", metavar="F", help="its description ('-': stdin)")
    listing = action("list", help="every work item (--ready: what next would hand out)")
    listing.add_argument("--ready", action="store_true", help="ready ones, in order")
    action("show", help="one work item").add_argument("id", type=whole_number)
    take = action("next", help="claim the next ready item (exit 5: none)")
    take.add_argument("--wait", type=float, metavar="S", help="block up to S seconds for one")
    take.add_argument("--ttl", type=float, metavar="S", help="its claim's TTL")
    done = action("done", help="complete an item's claim with evidence (exit 6: --verify failed)")
    done.add_argument("id", type=whole_number)
    done.add_argument("--verify", action="append", default=[], metavar="CMD", help="run it")
    fail = action("fail", help="the item failed; its claim is released")
    fail.add_argument("id", type=whole_number)
    fail.add_argument("--reason", required=True, metavar="T")
    give = action("return", help="put an item back in the pool; its claim is released")
    give.add_argument("id", type=whole_number)
    for sub in (done, fail, give):
        sub.add_argument("--claim", metavar="CID", help="the claim next gave you (fencing)")
    wait = action("wait", help="block until an item is done or failed (exit 5: timeout)")
    wait.add_argument("id", type=whole_number)
    wait.add_argument("--timeout", type=float, metavar="S")


def cmd_work(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    work = memory.work
    if args.action == "list":
        return {"action": "list", "items": [i.to_json() for i in work.list(ready=args.ready)]}
    if args.action == "add":
        body = ""
        if args.body_file:
            from memkeeper.cli.inputs import read_input

            body = read_input(args.body_file).decode("utf-8", "replace")
        item = work.add(
            args.title, paths=args.paths, priority=args.priority, after=args.after, body=body
        )
    elif args.action == "next":
        from memkeeper.claims.wording import claim_json

        item, claim = work.next(ttl=args.ttl, wait=args.wait)
        payload = {"action": "next", "item": item.to_json()}
        return payload | {"claim": claim_json(claim, memory.claim_now())}
    elif args.action == "done":
        item = work.done(args.id, args.verify, claim=args.claim)
    elif args.action == "fail":
        item = work.fail(args.id, args.reason, claim=args.claim)
    elif args.action == "return":
        item = work.give_back(args.id, claim=args.claim)
    elif args.action == "wait":
        item = work.wait(args.id, args.timeout)
    else:
        item = work.show(args.id)
    return {"action": args.action, "item": item.to_json()}


def render(p: dict[str, Any]) -> str:
    if p["action"] == "list":
        if not p["items"]:
            return "no work items\n"
        return "".join(line(i) + "\n" for i in p["items"])
    out = line(p["item"]) + "\n"
    if p["action"] == "next":
        c = p["claim"]
        out += f"  claim {c['id']} token {c['token']}, {c['seconds_left']} s left\n"
    if p["action"] == "show" and p["item"]["body"]:
        out += "\n" + p["item"]["body"].rstrip("\n") + "\n"
    return out


def line(i: dict[str, Any]) -> str:
    """``#ID [state] pN TITLE`` with who holds it, on what, after what."""
    who = f" by {i['agent']} ({i['claim']})" if i["state"] in ("claimed", "done") else ""
    where = f" on {', '.join(i['paths'])}" if i["paths"] else ""
    after = f" after {', '.join(f'#{d}' for d in i['after'])}" if i["after"] else ""
    why = f" — {i['reason']}" if i["state"] == "failed" and i["reason"] else ""
    return f"#{i['id']} [{i['state']}{who}] p{i['priority']} {i['title']}{where}{after}{why}"


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {"work": cmd_work}

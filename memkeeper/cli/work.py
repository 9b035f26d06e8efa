"""The ``work`` verb of the CLI (docs/reference.md §4.33): ``add``, ``list``, ``show``,
``next``, ``done``, ``fail``, ``return``, ``wait``, ``edit`` and ``retry``; ``list`` and
``show`` say why an open item is blocked (it waits on a failed one). ``next`` with nothing
to take is exit 5 (busy), as a claim is; a ``done`` by a worker whose claim ended is refused
as the claim verbs refuse (exit 2 for its own ended claim, exit 4 when another holds or ended
the item)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import signed_number, whole_number

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory
    from memkeeper.work.blocked import Blocker
    from memkeeper.work.items import Item

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
    edit = action("edit", help="change an item (compare-and-swap on its rev; exit 3: stale)")
    edit.add_argument("id", type=whole_number)
    edit.add_argument("--title", metavar="T")
    edit.add_argument("--priority", type=signed_number, metavar="N")
    edit.add_argument("--paths", nargs="*", metavar="T", help="what its claim covers (none: clear)")
    edit.add_argument("--after", nargs="*", type=whole_number, metavar="ID", help="(none: clear)")
    edit.add_argument("--body-file", metavar="F", help="its description ('-': stdin)")
    edit.add_argument("--expect-rev", type=whole_number, required=True, metavar="N")
    action("retry", help="put a failed item back in the pool").add_argument("id", type=whole_number)
    wait = action("wait", help="block until an item is done or failed (exit 5: timeout)")
    wait.add_argument("id", type=whole_number)
    wait.add_argument("--timeout", type=float, metavar="S")


def cmd_work(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    work = memory.work
    if args.action == "list":
        from memkeeper.work.blocked import blocked_map

        items = work.list(ready=args.ready)
        found = blocked_map(items)
        listed = [_with_blockers(i, found.get(i.id, ())) for i in items]
        return {"action": "list", "items": listed}
    if args.action == "show":
        item = work.show(args.id)
        return {"action": "show", "item": _with_blockers(item, work.blockers(args.id))}
    if args.action == "add":
        body = _body(args.body_file) or ""
        item = work.add(
            args.title, paths=args.paths, priority=args.priority, after=args.after, body=body
        )
    elif args.action == "edit":
        item = work.edit(
            args.id, expect_rev=args.expect_rev, title=args.title, priority=args.priority,
            paths=args.paths, after=args.after, body=_body(args.body_file),
        )  # fmt: skip
    elif args.action == "retry":
        item = work.retry(args.id)
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
    else:
        item = work.wait(args.id, args.timeout)
    return {"action": args.action, "item": item.to_json()}


def _body(body_file: str | None) -> str | None:
    if not body_file:
        return None
    from memkeeper.cli.inputs import read_input

    return read_input(body_file).decode("utf-8", "replace")


def _with_blockers(item: Item, found: tuple[Blocker, ...]) -> dict[str, Any]:
    return {**item.to_json(), "blocked": [b.to_json() for b in found]}


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
    if i.get("blocked"):
        why = " — blocked: " + "; ".join(_blocker_words(b) for b in i["blocked"])
    return f"#{i['id']} [{i['state']}{who}] p{i['priority']} {i['title']}{where}{after}{why}"


def _blocker_words(b: dict[str, Any]) -> str:
    from memkeeper.work.blocked import Blocker

    return Blocker(b["id"], b["reason"], b["through"]).words()


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {"work": cmd_work}

"""The CLI verbs of messages (docs/reference.md §4.28): ``send``, ``inbox``, ``ack``,
``request-release``, ``answer``; with their renderings for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.cli.inputs import read_text, whole_number
from memkeeper.errors import Invalid

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


MAX_WAIT_S = 7 * 24 * 3600.0  # an inbox --wait longer than a week is a mistake


def add_verbs(verb: Verb) -> None:
    send = verb("send", "send a message to an agent's identity (or all): its channel delivers it")
    send.add_argument("--to", required=True, metavar="ID", help="an identity, or all")
    send.add_argument("--about", metavar="WHAT", help="what it concerns: a claim id, FILE#KEY")
    given = send.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", metavar="T", help="the message")
    given.add_argument("--file", metavar="F", help="the message from a file ('-': stdin)")
    inbox = verb("inbox", "the messages for you not yet acknowledged, oldest first")
    inbox.add_argument("--all", action="store_true", help="acknowledged ones too")
    inbox.add_argument(
        "--wait", type=float, metavar="S", help="when none waits, block until one comes or S pass"
    )
    ack = verb("ack", "acknowledge messages: they leave your inbox")
    ack.add_argument("id", type=whole_number, nargs="+", metavar="ID")
    ask = verb("request-release", "ask the holder of a live claim to release it")
    ask.add_argument("id", metavar="CLAIM_ID")
    ask.add_argument("--text", default="", metavar="T", help="why (default: what you wait for)")
    answer = verb("answer", "answer a release request: release the claim, or say why not and when")
    answer.add_argument("id", type=whole_number, metavar="MSG_ID")
    how = answer.add_mutually_exclusive_group(required=True)
    how.add_argument("--release", action="store_true", help="release the claim it asks for")
    how.add_argument("--reason", metavar="T", help="why you keep it for now")
    answer.add_argument("--eta", type=float, metavar="S", help="with --reason: seconds until done")


def cmd_send(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import mail

    text = read_text(args.file) if args.file is not None else args.text
    sent = mail.send(memory.workspace, args.to, text, about=args.about)
    return {"message": sent.to_json()}


def cmd_inbox(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import mail

    if args.wait is not None:
        if args.all:
            raise Invalid("--wait waits for a new message: leave --all out")
        if not args.wait >= 0 or args.wait > MAX_WAIT_S:
            raise Invalid(f"--wait {args.wait}: give seconds from 0 to {MAX_WAIT_S:.0f}")
        from memkeeper.ops import mailwait

        found = mailwait.wait(memory.workspace, args.wait)
    else:
        found = mail.inbox(memory.workspace, acked=args.all)
    return {"identity": memory.agent, "messages": [m.to_json() for m in found]}


def cmd_ack(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import mail

    done = [m.to_json() for m in mail.ack_many(memory.workspace, args.id)]
    return {"message": done[0]} if len(done) == 1 else {"messages": done}


def cmd_request_release(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import mail

    return {"message": mail.request_release(memory.workspace, args.id, args.text).to_json()}


def cmd_answer(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import releases

    if args.eta is not None and args.reason is None:
        raise Invalid("--eta goes with --reason: say why you keep the claim, and until when")
    told = releases.answer(
        memory.workspace, args.id, release=args.release, reason=args.reason, eta=args.eta
    )
    return {"message": told.to_json(), "released": args.release}


def _line(m: dict[str, Any]) -> str:
    about = f" about {m['about']}" if m["about"] else ""
    state = " (acked)" if m["acked_at"] else "" if m["delivered_at"] else " (new)"
    return f"[{m['id']}] {m['sent_at']} {m['kind']} from {m['sender']}{about}{state}"


def render(verb: str, p: dict[str, Any]) -> str:
    if verb == "inbox":
        if not p["messages"]:
            return f"no messages for {p['identity']}\n"
        lines = []
        for m in p["messages"]:
            lines += [_line(m), *(f"    {t}" for t in m["text"].splitlines())]
        return "\n".join(lines) + "\n"
    if verb == "ack":
        done = p.get("messages") or [p["message"]]
        return "".join(f"acknowledged message {m['id']} from {m['sender']}\n" for m in done)
    m = p["message"]
    if verb == "answer":
        return f"answered {m['to']} (message {m['id']}): {m['text']}\n"
    what = "asked " if verb == "request-release" else "sent "
    return f"{what}{m['to']} (message {m['id']}{', about ' + m['about'] if m['about'] else ''})\n"


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "send": cmd_send,
    "inbox": cmd_inbox,
    "ack": cmd_ack,
    "request-release": cmd_request_release,
    "answer": cmd_answer,
}

"""The CLI verb ``keys`` (docs/reference.md, "Who is acting"): ``init``, ``list``, ``trust NAME
KEY [--as IDENTITIES]``, ``revoke NAME``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.errors import Invalid

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]

ACTIONS = ("init", "list", "trust", "revoke")


def add_verbs(verb: Verb) -> None:
    keys = verb("keys", "signing keys: init (make yours), list, trust NAME KEY, revoke NAME")
    keys.add_argument("action", choices=ACTIONS)
    keys.add_argument("name", nargs="?", help="trust, revoke: the signer's name")
    keys.add_argument(
        "key", nargs="?", help="trust: the public key (ed25519:…), or human / machine (yours)"
    )
    keys.add_argument(
        "--as",
        dest="identities",
        metavar="IDS",
        help="trust: the identities it may sign as, comma-separated (human, *:* for every "
        "agent session, claude-code:*); default: human for a human key, *:* otherwise",
    )
    keys.add_argument("--human-name", metavar="NAME", help="init: your human key's name ($USER)")
    keys.add_argument(
        "--machine-name", metavar="NAME", help="init: this machine's key's name (its host name)"
    )


def cmd_keys(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.ops import keys

    ws = memory.workspace
    if args.action in ("init", "list") and (args.name or args.key):
        raise Invalid(f"keys {args.action} takes no NAME or KEY — see memkeeper keys --help")
    if args.action == "init":
        return {"action": "init", **keys.init(ws, args.human_name, args.machine_name)}
    if args.action == "list":
        return {"action": "list", **keys.listing(ws)}
    if args.name is None or (args.action == "trust" and args.key is None):
        need = "NAME KEY" if args.action == "trust" else "NAME"
        raise Invalid(f"keys {args.action} needs {need} — see memkeeper keys --help")
    if args.action == "trust":
        default = "human" if args.key == "human" else "*:*"
        identities = tuple((args.identities or default).split(","))
        return {"action": "trust", **keys.trust(ws, args.name, args.key, identities)}
    if args.key is not None:
        raise Invalid("keys revoke takes one NAME — see memkeeper keys --help")
    return {"action": "revoke", **keys.revoke(ws, args.name)}


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {"keys": cmd_keys}

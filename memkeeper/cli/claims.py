"""The claim verbs of the CLI (docs/reference.md §4): ``claim``, ``renew``, ``release``, ``claims``,
``metrics``. Each returns a JSON-able payload; ``cli`` prints it and maps errors to exit codes
(``Busy`` is exit 5). Cheap to import: the claim modules load only when a verb runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.claims.wording import claim_json
from memkeeper.cli.inputs import signed_number
from memkeeper.errors import Usage

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare the claim verbs with ``verb(name, help)`` (which adds the common options)."""
    claim = verb("claim", "take a claim on paths, globs or PATH#KEY sections")
    claim.add_argument("targets", nargs="+", metavar="TARGET")
    claim.add_argument(
        "--mode", choices=("write", "read"), default="write", help="write (default) or read"
    )
    claim.add_argument("--ttl", type=float, metavar="S", help="seconds (policy default_ttl)")
    claim.add_argument(
        "--priority", type=signed_number, default=0, metavar="P", help="higher goes first"
    )
    claim.add_argument("--strict", action="store_true", help="refuse others' writes under it")
    claim.add_argument("--wait", type=float, metavar="S", help="queue up to S seconds")
    claim.add_argument("--objective", default="", metavar="T", help="what the claim is for")
    renew = verb("renew", "keep a claim alive: it expires TTL seconds from now")
    renew.add_argument("id", metavar="ID")
    renew.add_argument(
        "--ttl", type=float, metavar="S", help="seconds from now (default: the claim's own TTL)"
    )
    verb("release", "give a claim back").add_argument("id", metavar="ID")
    claims = verb("claims", "list live claims and queued requests")
    claims.add_argument(
        "--search",
        metavar="TEXT",
        help="live claims by meaning of their objective (extra: semantic)",
    )
    claims.add_argument(
        "--limit", type=int, metavar="N", help="with --search: at most N (default 10)"
    )
    verb("metrics", "claim counters for the last hour")


def cmd_claim(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:

    claim = memory.claim(
        args.targets,
        mode=args.mode,
        ttl=args.ttl,
        priority=args.priority,
        strict=args.strict,
        wait=args.wait,
        objective=args.objective,
    )
    return {**claim_json(claim, memory.claim_now()), "warnings": list(claim.warnings)}


def cmd_renew(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    claim = memory.renew(args.id, args.ttl)
    return {**claim_json(claim, memory.claim_now()), "warnings": list(claim.warnings)}


def cmd_release(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:

    return {**claim_json(memory.release(args.id), memory.claim_now()), "seconds_left": 0}


def cmd_claims(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    if args.search is None and args.limit is not None:
        raise Usage(
            "memkeeper claims: --limit goes with --search TEXT — see memkeeper claims --help"
        )
    if args.search is None:
        return memory.waiters()
    from memkeeper.claims.similar import match_json

    limit = {} if args.limit is None else {"limit": args.limit}
    found = memory.search_claims(args.search, **limit)
    return {"search": args.search, "matches": [match_json(m, memory.claim_now()) for m in found]}


def cmd_metrics(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.metrics()


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "claim": cmd_claim,
    "renew": cmd_renew,
    "release": cmd_release,
    "claims": cmd_claims,
    "metrics": cmd_metrics,
}

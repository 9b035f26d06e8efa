"""The claim verbs of the CLI (docs/reference.md §4): ``claim`` (and ``claim scope``, ``claim
show``), ``renew``, ``release``, ``complete``, ``abandon``, ``suspend``, ``resume``,
``takeover``, ``claims``, ``metrics``. Each returns a JSON-able payload; ``cli`` prints it
and maps errors to exit codes (``Busy`` is exit 5, a failed ``--verify`` exit 6). Cheap to
import: the claim modules load only when a verb runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.claims.wording import claim_json
from memkeeper.cli.inputs import signed_number, whole_number
from memkeeper.errors import Invalid, Usage

MAX_READ = 1024 * 1024  # of an --evidence file: more is refused by its size anyway

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory
    from memkeeper.claims.decisions import Claim

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
    claim.add_argument("--branch", default="", metavar="B", help="its branch (default: git's)")
    claim.add_argument("--worktree", default="", metavar="DIR", help="(default: the root)")
    claim.add_argument("--base", default="", metavar="COMMIT", help="(default: HEAD)")
    claim.add_argument(
        "--memory", action="append", default=[], metavar="FILE#KEY", help="to change"
    )
    claim.add_argument("--tests", action="append", default=[], metavar="T", help="it answers for")
    claim.add_argument("--add", nargs="+", default=[], metavar="T", help="claim scope ID: add")
    claim.add_argument("--remove", nargs="+", default=[], metavar="T", help="… and remove")
    claim.add_argument("--expect-rev", type=whole_number, metavar="N", help="the record's rev")
    claim.add_argument(
        "--request-release",
        action="store_true",
        help="if refused or queued: ask each holder in the way to release (once per holder)",
    )
    renew = verb("renew", "keep a claim alive: it expires TTL seconds from now")
    renew.add_argument("id", metavar="ID")
    renew.add_argument(
        "--ttl", type=float, metavar="S", help="seconds from now (default: the claim's own TTL)"
    )
    verb("release", "give a claim back").add_argument("id", metavar="ID")
    claims = verb("claims", "list live claims and queued requests (--all: every record)")
    claims.add_argument(
        "--search",
        metavar="TEXT",
        help="live claims by meaning of their objective (extra: semantic)",
    )
    claims.add_argument(
        "--limit", type=int, metavar="N", help="with --search: at most N (default 10)"
    )
    claims.add_argument("--all", action="store_true", help="every claim's record, ended too")
    claims.add_argument("--state", action="append", default=[], metavar="S", help="only these")
    complete = verb("complete", "complete a claim with evidence (exit 6: a --verify failed)")
    complete.add_argument("id", metavar="ID")
    complete.add_argument("--verify", action="append", default=[], metavar="CMD", help="run it")
    complete.add_argument("--evidence", metavar="FILE", help="your own report (self-reported)")
    abandon = verb("abandon", "give a claim up, recording where its work stands")
    abandon.add_argument("id", metavar="ID")
    abandon.add_argument("--reason", required=True, metavar="T", help="why, for a successor")
    note = abandon.add_mutually_exclusive_group()
    note.add_argument("--message", default="", metavar="T", help="to whoever takes it over")
    note.add_argument("--note-file", metavar="F", help="that message from a file ('-': stdin)")
    takeover = verb("takeover", "claim an abandoned or expired claim's targets after it")
    takeover.add_argument("id", metavar="ID")
    takeover.add_argument("--ttl", type=float, metavar="S", help="seconds (policy default_ttl)")
    suspend = verb("suspend", "step out of the live set, keeping the claim's record")
    resume = verb("resume", "bring a suspended claim back (as a new request would be)")
    for parser in (suspend, resume):
        parser.add_argument("id", metavar="ID")
    for parser in (complete, abandon, takeover, suspend, resume):
        parser.add_argument("--expect-rev", type=whole_number, metavar="N", help="the record's rev")
    verb("metrics", "claim counters for the last hour")


def cmd_claim(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    """``claim TARGET…``; ``claim scope ID --add T… --remove T…``; ``claim show ID``."""
    first, rest = args.targets[0], args.targets[1:]
    if first in ("scope", "show") and len(rest) == 1:
        if first == "show":
            from memkeeper.ops.idleclaims import record_json

            return record_json(memory.workspace, memory.claims.record(rest[0]))
        found = memory.claims.scope(
            rest[0], args.add, args.remove, expect_rev=args.expect_rev, wait=args.wait
        )
        return found.to_json()
    from memkeeper.ops import blocked
    from memkeeper.ops.claimlife import ClaimLife, plan_of

    ws = memory.workspace
    plan = plan_of(ws, args.branch, args.worktree, args.base, args.memory, args.tests)

    def take() -> Claim:
        return ClaimLife(ws).claim(
            args.targets, mode=args.mode, ttl=args.ttl, priority=args.priority,
            strict=args.strict, wait=args.wait, objective=args.objective, plan=plan,
        )  # fmt: skip

    claim = blocked.claim(
        ws, take, args.targets, mode=args.mode, strict=args.strict, wait=args.wait,
        request_release=args.request_release,
    )  # fmt: skip
    payload = {**claim_json(claim, memory.claim_now()), "rev": 1, **plan.to_json()}
    return {**payload, "warnings": list(claim.warnings)}


def cmd_complete(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    reported = None
    if args.evidence is not None:
        from memkeeper.claims.evidence import reported_text

        try:
            with open(args.evidence, "rb") as handle:
                data = handle.read(MAX_READ)
        except OSError as exc:
            raise Invalid(f"{args.evidence}: cannot read it ({exc.strerror})") from exc
        reported = reported_text(data, args.evidence)
    done = memory.claims.complete(
        args.id, args.verify, evidence=reported, expect_rev=args.expect_rev
    )
    return done.to_json()


def cmd_abandon(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    message = args.message
    if args.note_file is not None:
        from memkeeper.cli.inputs import read_text

        message = read_text(args.note_file)
    found = memory.claims.abandon(args.id, args.reason, expect_rev=args.expect_rev, message=message)
    return found.to_json()


def cmd_suspend(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.claims.suspend(args.id, expect_rev=args.expect_rev).to_json()


def cmd_resume(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    claim = memory.claims.resume(args.id, expect_rev=args.expect_rev)
    return claim_json(claim, memory.claim_now())


def cmd_takeover(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    """The predecessor's record first (head, reason, evidence — never re-run), then the new
    claim."""
    claim, old = memory.claims.takeover(args.id, ttl=args.ttl, expect_rev=args.expect_rev)
    return {"predecessor": old.to_json(), **claim_json(claim, memory.claim_now())}


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
    if args.search is not None:
        from memkeeper.claims.similar import match_json

        limit = {} if args.limit is None else {"limit": args.limit}
        found = memory.search_claims(args.search, **limit)
        now = memory.claim_now()
        return {"search": args.search, "matches": [match_json(m, now) for m in found]}
    if args.all or args.state:
        return {"records": [r.to_json() for r in memory.claims.records(args.state)]}
    return memory.waiters()


def cmd_metrics(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    return memory.metrics()


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "claim": cmd_claim,
    "renew": cmd_renew,
    "release": cmd_release,
    "claims": cmd_claims,
    "complete": cmd_complete,
    "abandon": cmd_abandon,
    "suspend": cmd_suspend,
    "resume": cmd_resume,
    "takeover": cmd_takeover,
    "metrics": cmd_metrics,
}

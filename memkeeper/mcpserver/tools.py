"""The MCP tools (docs/reference.md §4.21), each a thin call into ``Memory`` answering the CLI's
``--json`` object: ``status`` always present, ``"ok"`` or the error's own (``conflict`` with
``current`` and ``recover``, ``refused``, ``busy`` with ``holders``, ``invalid``…). An error an
agent can act on is an ordinary result, never a protocol error.

No MCP here: plain functions over a ``Memory`` (``memkeeper.mcpserver.server`` registers them
with the SDK), so they are tested, and timed, without a transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.claims.wording import claim_json, waiter_json
from memkeeper.errors import Conflict, Invalid, MemkeeperError

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence
    from typing import Any

    from memkeeper.api import Memory
    from memkeeper.claims.decisions import Claim, Mode

    Payload = dict[str, Any]

EVENTS_LIMIT = 200  # events per memory_events call; page on with ``since``


def answer(call: Callable[[], Payload]) -> Payload:
    """``{"status": "ok", …}``, or a memkeeper error as the same JSON the CLI prints."""
    try:
        return {"status": "ok", **call()}
    except MemkeeperError as exc:
        return exc.to_json()


def invalid_arguments(tool: str, errors: Sequence[Any]) -> Payload:
    """``status: invalid`` for arguments the input schema refused: each one named, with what
    is wrong (pydantic's words), never the values (they are the caller's data)."""
    problems = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    message = f"{tool}: " + "; ".join(problems) + " — see the tool's input schema"
    return Invalid(message).to_json()


def sections(memory: Memory, path: str) -> Payload:
    rel = memory.workspace.relpath(path)
    return {"path": rel, "sections": [s.to_json() for s in memory.sections(path)]}


def read(memory: Memory, ref: str) -> Payload:
    return memory.read(ref).to_json()


def patch(
    memory: Memory,
    ref: str,
    expect_rev: int,
    body: str | None,
    dmp: str | None,
    expect_file_hash: str | None,
    claim: str | None,
    merge: bool = False,
) -> Payload:
    if (body is None) == (dmp is None):
        raise Invalid("memory_patch needs exactly one of body (the new text) or dmp (a patch)")
    try:
        return _patched(memory, ref, expect_rev, body, dmp, expect_file_hash, claim, merge)
    except Conflict as lost:
        # what to do next, as this client does it: the tool, not the command line
        current = lost.fields.get("current")
        if current is not None and lost.fields.get("recover"):
            where = f"{current.path}#{current.key}"
            lost.fields["recover"] = (
                f'memory_patch(ref="{where}", expect_rev={current.rev}, body=...) with your '
                "change merged into current.content"
            )
        raise


def _patched(
    memory: Memory,
    ref: str,
    expect_rev: int,
    body: str | None,
    dmp: str | None,
    expect_file_hash: str | None,
    claim: str | None,
    merge: bool,
) -> Payload:
    done = memory.patch(
        ref,
        body,
        expect_rev=expect_rev,
        expect_file_hash=expect_file_hash,
        dmp=dmp,
        claim=claim,
        merge=merge,
    )
    return done.to_json()


def append(memory: Memory, path: str, text: str) -> Payload:
    return memory.append(path, text).to_json()


def claim(
    memory: Memory,
    targets: Sequence[str],
    mode: str,
    ttl: float | None,
    priority: int,
    strict: bool,
    wait: float | None,
    objective: str,
    cancel: threading.Event | None = None,
    request_release: bool = False,
) -> Payload:
    """``claim``; with ``request_release``, as ``claim --request-release``: refused or queued,
    each holder in the way is asked to release (``ops.blocked``)."""
    from memkeeper.ops import blocked

    if mode not in ("write", "read"):
        raise Invalid(f"mode must be 'write' or 'read', not {mode!r}")
    if not targets:
        raise Invalid("memory_claim needs at least one target (a path, glob or PATH#KEY)")
    how: Mode = "write" if mode == "write" else "read"

    def take() -> Claim:
        return memory.claim(
            list(targets), mode=how, ttl=ttl, priority=priority, strict=strict, wait=wait,
            objective=objective, cancel=cancel,
        )  # fmt: skip

    got = blocked.claim(
        memory.workspace, take, list(targets), mode=how, strict=strict, wait=wait,
        request_release=request_release,
    )  # fmt: skip
    return {**claim_json(got, memory.claim_now()), "warnings": list(got.warnings)}


def renew(memory: Memory, id: str, ttl: float | None) -> Payload:
    got = memory.renew(id, ttl)
    return {**claim_json(got, memory.claim_now()), "warnings": list(got.warnings)}


def release(memory: Memory, id: str) -> Payload:
    return {**claim_json(memory.release(id), memory.claim_now()), "seconds_left": 0}


def search_claims(memory: Memory, text: str, limit: int) -> Payload:
    from memkeeper.claims.similar import match_json

    found = memory.search_claims(text, limit)
    return {"search": text, "matches": [match_json(m, memory.claim_now()) for m in found]}


def claims(memory: Memory) -> Payload:
    from memkeeper.ops.claimviews import live
    from memkeeper.ops.idleclaims import with_marks

    held, waiters, now = live(memory.workspace)
    return {
        "claims": with_marks(memory.workspace, held, [claim_json(c, now) for c in held]),
        "waiters": [waiter_json(w, now) for w in waiters],
    }


def claim_record(memory: Memory, id: str) -> Payload:
    from memkeeper.ops.idleclaims import record_json

    return record_json(memory.workspace, memory.claims.record(id))


def claim_scope(
    memory: Memory, id: str, add: Sequence[str], remove: Sequence[str], expect_rev: int | None
) -> Payload:
    return memory.claims.scope(id, add, remove, expect_rev=expect_rev).to_json()


def complete(
    memory: Memory,
    id: str,
    verify: Sequence[str],
    evidence: str | None,
    expect_rev: int | None,
) -> Payload:
    """``complete``: ``verify`` are the caller's own commands, run in the claim's worktree;
    ``evidence`` is kept as self-reported."""
    if evidence is not None:
        from memkeeper.claims.evidence import reported_text

        evidence = reported_text(evidence.encode("utf-8"), "evidence")
    done = memory.claims.complete(id, verify, evidence=evidence, expect_rev=expect_rev)
    return done.to_json()


def abandon(
    memory: Memory, id: str, reason: str, expect_rev: int | None, message: str = ""
) -> Payload:
    return memory.claims.abandon(id, reason, expect_rev=expect_rev, message=message).to_json()


def takeover(memory: Memory, id: str, ttl: float | None, expect_rev: int | None) -> Payload:
    """The predecessor's record first, then the new claim."""
    claim, old = memory.claims.takeover(id, ttl=ttl, expect_rev=expect_rev)
    return {"predecessor": old.to_json(), **claim_json(claim, memory.claim_now())}


def events(memory: Memory, since: int, limit: int) -> Payload:
    if not 1 <= limit <= EVENTS_LIMIT:
        raise Invalid(f"limit must be between 1 and {EVENTS_LIMIT}, not {limit}")
    found = memory.events(since=since, limit=limit)
    return {"events": [e.to_json() for e in found], "next_since": found[-1].id if found else since}


def emit(memory: Memory, type: str, data: dict[str, Any] | None) -> Payload:
    return memory.emit(type, data).to_json()


def check(memory: Memory, paths: Sequence[str]) -> Payload:
    return memory.check(list(paths))


def inbox(memory: Memory, ack: Sequence[int]) -> Payload:
    """Acknowledge ``ack``, then what is waiting for this identity — each message marked
    delivered — and the notices not given before (a claim of yours about to expire)."""
    from memkeeper.ops import mail

    ws = memory.workspace
    for message_id in ack:
        mail.ack(ws, message_id)
    _, notices = mail.deliver(ws, "mcp")
    waiting = mail.inbox(ws)
    return {
        "identity": memory.agent,
        "messages": [m.to_json() for m in waiting],
        "notices": notices,
    }


def with_notices(memory: Memory, payload: Payload) -> Payload:
    """``payload`` with ``notices``: what has come for this identity since it was last told
    (``ops.mail.deliver``: each thing once), when there is something."""
    from memkeeper.mail.messages import line
    from memkeeper.ops import mail

    told, notices = mail.deliver(memory.workspace, "mcp")
    said = [line(m) for m in told] + [f"- {text}" for text in notices]
    if said:
        return {**payload, "notices": [*said, "memory_inbox lists messages until you ack them"]}
    return payload

"""Messages to agents and their delivery (docs/reference.md §4.28): ``send`` posts one (event
``message.sent``), ``inbox`` lists what is waiting for this identity, ``ack`` acknowledges one
(``message.acked``), ``request_release`` asks a claim's holder to release it; ``start`` is what
an agent is told when its session starts, and ``deliver`` the channel's step — what a hook or
an MCP result tells the agent now: messages not yet delivered, claims of its own about to
expire and sections it read that others changed since, each marked delivered in the same
transaction, so two hooks at once never tell one thing twice (``message.delivered``).
"""

from __future__ import annotations

import functools
import os

from memkeeper import limits
from memkeeper.errors import Invalid
from memkeeper.events import iso_utc
from memkeeper.mail import messages, reads
from memkeeper.ops.posting import post

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.coordination import Message, StaleRead
    from memkeeper.ops.workspace import Workspace


# Acknowledgements one transaction commits: an etcd transaction holds at most 128 operations
# and an ack is about three (its delivery key, its event and the event's indexes).
ACKS_AT_ONCE = 25


def send(
    ws: Workspace, to: str, text: str, *, kind: str = "message", about: str | None = None
) -> Message:
    """Post a message from this identity to ``to`` (an identity, or ``all``); the ``about``
    of a message or a handoff must name something there is (``subject``)."""
    to, text, kind = messages.recipient(to), messages.text(text), messages.kind(kind)
    if about is not None:
        about = limits.text(about.strip(), "--about", limit=limits.MAX_TARGET_CHARS) or None
    if about is not None and kind in ("message", "handoff"):
        about = subject(ws, about)

    def once() -> Message:
        with ws.store.writing():
            return post(ws, ws.agent, to, kind, about, text)

    sent: Message = ws.again(once)  # its message.sent pokes the recipient's waiters
    return sent


def hand_over(ws: Workspace, to: str, about: str, text: str) -> Message:
    """Hand ``about`` (a claim id, a work item ``work:ID``) to ``to`` with this identity's
    words for it: a ``handoff`` message, which its channel delivers with the item (once) and
    its inbox keeps until acknowledged. The one call for whatever hands work over."""
    return send(ws, to, text, kind="handoff", about=about)


def subject(ws: Workspace, about: str) -> str:
    """``about`` if it names something there is: a claim (live or on record), a section
    ``FILE#KEY`` or a file of this root, or a work item (``work:ID``, not looked up)."""
    if about.startswith(messages.WORK_PREFIX) and len(about) > len(messages.WORK_PREFIX):
        return about
    if ws.has_store and (ws.store.claim_row(about) or ws.store.claim_record(about)):
        return about
    from memkeeper.markdown.refs import resolve_key, split_ref

    path, key = split_ref(about)
    rel = ws.relpath(path)
    if os.path.isfile(os.path.join(ws.top, rel)):
        if key is not None:  # unknown or ambiguous: Invalid, naming the candidates
            from memkeeper.ops.read import present_rows

            resolve_key(rel, key, [(row.key, row.base) for row in present_rows(ws, rel)])
        return about
    raise Invalid(
        f"--about {about}: no claim, file or section of that name here — name a claim id "
        "(memkeeper claims), FILE#KEY, or a work item as work:ID"
    )


def inbox(ws: Workspace, *, acked: bool = False) -> list[Message]:
    """What is waiting for this identity, oldest first (acknowledged ones too with ``acked``)."""
    if not ws.has_store:
        return []
    return ws.store.mail.messages_for(ws.agent, acked=acked)


def ack(ws: Workspace, message_id: int) -> Message:
    """Acknowledge a message sent to this identity: it leaves the inbox."""
    return ack_many(ws, [message_id])[0]


def ack_many(ws: Workspace, message_ids: Sequence[int]) -> list[Message]:
    """Acknowledge messages sent to this identity, ``ACKS_AT_ONCE`` a transaction (one
    ``message.acked`` each that was not acknowledged before); any that is not this
    identity's: ``Invalid``, none acknowledged."""
    found = []
    for message_id in dict.fromkeys(message_ids):
        message = ws.store.mail.message(message_id) if ws.has_store else None
        if message is None or not messages.addressed_to(message, ws.agent):
            raise Invalid(
                f"there is no message {message_id} for {ws.agent} — list yours with: "
                "memkeeper inbox"
            )
        found.append(message)

    def once(some: list[Message]) -> list[bool]:
        fresh = []
        with ws.store.writing():
            for message in some:
                fresh.append(ws.store.mail.ack_message(ws.agent, message.id, iso_utc(ws.now())))
                if fresh[-1]:
                    ws.record("message.acked", None, None, {"message": message.id})
        return fresh

    fresh: list[bool] = []
    for start in range(0, len(found), ACKS_AT_ONCE):
        fresh += ws.again(functools.partial(once, found[start : start + ACKS_AT_ONCE]))
    at = iso_utc(ws.now())
    before = (
        {} if all(fresh) else {m.id: m for m in ws.store.mail.messages_for(ws.agent, acked=True)}
    )
    return [
        m._replace(delivered_at=at, acked_at=at) if new else before.get(m.id, m)
        for m, new in zip(found, fresh, strict=True)
    ]


def request_release(ws: Workspace, claim_id: str, text: str = "") -> Message:
    """Ask the holder of a live claim to release it: a ``release-request`` message to it."""
    now = ws.claim_now()
    held = next((c for c in ws.store.claim_rows() if c.id == claim_id), None)
    if held is None or not held.is_live(now):
        raise Invalid(f"there is no live claim {claim_id} — list them with: memkeeper claims")
    if held.agent == ws.agent:
        raise Invalid(
            f"claim {claim_id} is your own — release it with: memkeeper release {claim_id}"
        )
    reason = text.strip() or f"{ws.agent} is waiting for {', '.join(held.targets)}"
    return send(ws, held.agent, reason, kind="release-request", about=claim_id)


def deliver(ws: Workspace, via: str) -> tuple[list[Message], list[str]]:
    """What to tell this identity's agent now, each thing once: ``(messages, notices)``."""
    if not ws.has_store:
        return [], []
    # A meeting past its deadline escalates now: its people hear here.
    if ws.store.meetings.meetings():
        from memkeeper.ops.meetings import settle

        settle(ws)
    me, now, claims_now = ws.agent, ws.now(), ws.claim_now()
    waiting = [m for m in ws.store.mail.messages_for(me) if m.delivered_at is None]
    mine = [c for c in ws.store.claim_rows() if c.agent == me and c.is_live(claims_now)]
    computed = messages.expiring(mine, claims_now)
    marks = [f"m:{m.id}" for m in waiting] + [key for key, _ in computed]
    stale = ws.store.stale_reads(me)
    if not marks and not stale:  # the common case: no write, no lock
        return [], []
    changes = [(s, _changed(ws, s)) for s in stale]

    def once() -> tuple[list[Message], list[str]]:
        with ws.store.writing():
            fresh = set(ws.store.mail.mark_delivered(me, marks, iso_utc(now)))
            told = [m for m in waiting if f"m:{m.id}" in fresh]
            if told:
                data = {"messages": [m.id for m in told], "via": via}
                ws.record("message.delivered", None, None, data)
            known = []
            for stale, text in changes:  # each change once
                if text is None:  # its own change: it knows that rev as if it had read it
                    ws.store.record_reads(me, stale.path, {stale.key: stale.rev})
                elif ws.store.tell_read(me, stale.path, stale.key, stale.rev):
                    known.append(text)
        return told, [text for key, text in computed if key in fresh] + known

    result: tuple[list[Message], list[str]] = ws.again(once)
    return result


def _changed(ws: Workspace, stale: StaleRead) -> str | None:
    """The notice that a section this identity read has changed (None: only by itself)."""
    events = ws.store.events_of(stale.path, stale.key, reads.CHANGES_LOOKED_AT)
    return reads.changed(stale, reads.changers(events, stale.told_rev, stale.rev), ws.agent)


def start(ws: Workspace, program: str, mcp: bool, via: str) -> str:
    """The session-start context for this identity's agent (``mail.briefing``), delivering
    what is waiting for it; ``program``: how its shell runs memkeeper; ``mcp``: whether it has
    memkeeper's MCP server."""
    from memkeeper.fs.walk import managed_files
    from memkeeper.mail.briefing import briefing
    from memkeeper.policy.loader import parse_policy, policy_bytes

    files: dict[str, list[str]] = {}
    for rel, rule in managed_files(parse_policy(policy_bytes(ws.top)), ws.top):
        files.setdefault(rule.file_class, []).append(rel)
    now = ws.now()  # the claims' clock (reference §4 "Expiry") where there are claims
    others = []
    if ws.has_store:
        now = ws.claim_now()
        others = [c for c in ws.store.claim_rows() if c.agent != ws.agent and c.is_live(now)]
    told, notices = deliver(ws, via)
    return briefing(ws.agent, program, mcp, files, others, now, told, notices)

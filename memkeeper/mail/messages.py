"""Messages to agents: who may be written to, what a message may hold, and how the notices a
hook or an MCP result carries read to the model (docs/reference.md §4.28). Pure.

A notice is said once: a message is marked delivered to its recipient when a hook or
``memory_inbox`` gives it to the recipient's agent; a computed notice (a claim about to
expire) is remembered by its key, so the same expiry is never announced twice.
"""

from __future__ import annotations

from memkeeper import limits
from memkeeper.errors import Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Sequence

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.coordination import Message

ALL = "all"  # the recipient that is every identity (but the sender)
WORK_PREFIX = "work:"  # what a message about a work item names it by: work:ID
KINDS = (
    "message",
    "release-request",
    "release-answer",
    "meeting",
    "handoff",
    "overlap",
    "changed",
    "expiring",
    "idle",
)
MAX_TEXT_CHARS = 16 * 1024
MAX_RECIPIENT_CHARS = 256
MAX_SHOWN = 20  # messages one notice carries; the rest wait for the next
# A claim is "about to expire" when less than this share of its TTL (and at most this many
# seconds) is left: told once, so its holder renews or releases it in time.
EXPIRING_SHARE = 0.25
EXPIRING_MAX_S = 300.0
# The bound on kept messages: one its recipient was given (delivered or acknowledged) is
# dropped a week after it was sent, and beyond the newest KEEP_GIVEN of them whatever its age;
# one to all (each agent session being an identity of its own) a week after it was sent; one
# its recipient was not given yet, never.
KEEP_S = 7 * 24 * 3600.0
KEEP_GIVEN = 1000


def recipient(to: str) -> str:
    """``to`` if it names someone a message can reach: an identity or ``all``."""
    to = limits.text(to.strip(), "the recipient (--to)", limit=MAX_RECIPIENT_CHARS)
    if not to or not to.isprintable() or any(c.isspace() for c in to):
        raise Invalid(
            f"the recipient {to!r} is not an identity: name one as memkeeper claims shows it "
            "(e.g. claude-code:SESSION, human), or all"
        )
    return to


def text(body: str) -> str:
    """``body`` if it is a message's text: not empty, at most ``MAX_TEXT_CHARS``."""
    body = limits.text(body, "the message", limit=MAX_TEXT_CHARS)
    if not body.strip():
        raise Invalid("the message is empty — give its text (--text T, or --file F)")
    return body


def kind(name: str) -> str:
    if name not in KINDS:
        raise Invalid(f"unknown message kind {name!r}: one of {', '.join(KINDS)}")
    return name


def addressed_to(message: Message, identity: str) -> bool:
    """Whether ``identity`` receives ``message``: named, or ``all`` and not its sender."""
    if message.to == ALL:
        return message.sender != identity
    return message.to == identity


def expiring(claims: Iterable[Claim], now: float) -> list[tuple[str, str]]:
    """``(key, notice)`` for each of ``claims`` about to expire: less than a quarter of the
    time it was granted for (and at most five minutes) left."""
    out = []
    for claim in claims:
        left = claim.expires_at - now
        window = min(EXPIRING_MAX_S, (claim.expires_at - claim.granted_at) * EXPIRING_SHARE)
        if 0 < left <= window:
            key = f"expiring:{claim.id}:{claim.expires_at:.3f}"
            targets = ", ".join(claim.targets)
            out.append(
                (
                    key,
                    f"your claim {claim.id} on {targets} expires in {left:.0f} s: renew it "
                    f"(memkeeper renew {claim.id}) or release it (memkeeper release {claim.id})",
                )
            )
    return out


def to_trim(
    kept: Sequence[tuple[int, str, str, bool, str, str | None]],
    before: str,
    keep: int,
    waiting: Collection[str] | None = None,
) -> list[int]:
    """The messages to drop, of ``kept`` — ``(id, to, sent_at, given, kind, about)`` oldest
    first, ``given`` when its named recipient was given it: those given (every one to all
    counts as given) sent before ``before`` (an ``iso_utc`` stamp), and those given beyond the
    newest ``keep``; with ``waiting`` (the ids of the requests queued now), the ``overlap``
    notices not yet given about a request that no longer waits — they would tell a holder of
    a wait that is over, and the queue bounds them; never the newest message (SQLite would
    hand its id out again)."""
    older = kept[:-1]
    given = [(row[0], row[2]) for row in older if row[3] or row[1] == ALL]
    drop = {mid for mid, sent_at in given if sent_at < before}
    drop.update(mid for mid, _ in given[: max(0, len(given) - keep)])
    if waiting is not None:
        drop.update(
            row[0] for row in older if row[4] == "overlap" and not row[3] and row[5] not in waiting
        )
    return sorted(drop)


def overlaps(request: Request, live: Iterable[Claim]) -> list[tuple[str, str]]:
    """``(holder, text)``: one ``overlap`` message to each other identity whose live claims
    ``request`` overlaps (``claims.decisions.conflicts``) and so queued behind, naming who,
    what, how and why. (A claim is never granted over another's that it conflicts with: a
    request that overlaps one is refused, or queued.)"""
    from memkeeper.claims.decisions import conflicts

    theirs: dict[str, list[Claim]] = {}
    for claim in live:
        if conflicts(claim, request):
            theirs.setdefault(claim.agent, []).append(claim)
    how = f"{request.mode}, {'strict' if request.strict else 'advisory'}"
    why = f" for: {request.objective}" if request.objective else ""
    out = []
    for holder, claims in theirs.items():
        yours = "; ".join(f"{c.id} on {', '.join(c.targets)}" for c in claims)
        out.append(
            (
                holder,
                f"{request.agent} waits for {', '.join(request.targets)} ({how}){why}, behind "
                f"your claim {yours}: release it when you are done (memkeeper release ID)",
            )
        )
    return out


def line(message: Message) -> str:
    """One message as a notice's line: who, what it is about, its text, how to answer."""
    about = f" about {message.about}" if message.about else ""
    head = {
        "release-request": f"{message.sender} asks you to release your claim{about}",
        "handoff": f"{message.sender} hands you{about or ' work'}",
        "release-answer": f"{message.sender} answers your release request{about}",
        "meeting": f"{message.about or 'a meeting'}",
    }.get(message.kind, f"{message.kind} from {message.sender}{about}")
    return f"- [{message.id}] {head}: {message.text.strip()}"


def notice(messages: Sequence[Message], computed: Sequence[str]) -> str:
    """What a hook adds to the agent's context: new messages and computed notices, or "" when
    there is nothing to say."""
    if not messages and not computed:
        return ""
    lines = ["memkeeper — for you:"]
    lines += [line(m) for m in messages[:MAX_SHOWN]]
    lines += [f"- {text}" for text in computed]
    if len(messages) > MAX_SHOWN:
        lines.append(f"- … and {len(messages) - MAX_SHOWN} more: memkeeper inbox")
    if any(m.kind == "release-request" for m in messages):
        lines.append(
            "Answer a release request [N]: memkeeper answer N --release (releases the claim), "
            "or memkeeper answer N --reason '…' --eta SECONDS (why not yet, and when)."
        )
    if any(m.kind == "meeting" for m in messages):
        lines.append(
            "Meetings: memkeeper meeting show ID (its rev, proposals, deadline); propose, "
            "accept or resolve with --expect-rev REV."
        )
    lines.append("These were delivered once; memkeeper inbox lists them until you ack them.")
    return "\n".join(lines)

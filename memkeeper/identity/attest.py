"""What the signers file says of each event's signature (``verify``, the dashboard), and of a
checkpoint's (``checkpoints``). Pure."""

from __future__ import annotations

from memkeeper import checkpoints
from memkeeper.identity import keys, signers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.checkpoints import Checkpoint
    from memkeeper.records import Event


def judge(event: Event, trusted: tuple[signers.Signer, ...]) -> str | None:
    """What is wrong with ``event``'s signature, or None when a trusted key signed it as its
    actor: unsigned, a bad signature, an unknown or revoked key, a key not trusted for it."""
    if event.signer is None or event.sig is None:
        return "it is not signed"
    if not keys.valid(event.signer, event.hash, event.sig):
        return (
            f"its signature by {keys.short(event.signer)} does not verify: it was forged or altered"
        )
    standing, name = signers.standing(trusted, event.signer, event.actor)
    if standing == "unknown":
        return f"it is signed by {keys.short(event.signer)}, a key the signers file does not list"
    if standing == "revoked":
        return f"it is signed by {name}, whose key was revoked"
    if standing == "not-allowed":
        return f"it is signed by {name}, whose key may not sign as {event.actor}"
    return None


def problems(
    events: Iterable[Event], trusted: tuple[signers.Signer, ...]
) -> list[tuple[Event, str]]:
    """``(event, what is wrong)`` for every event whose signature does not hold."""
    return [(e, what) for e in events if (what := judge(e, trusted)) is not None]


def judge_checkpoint(cp: Checkpoint, trusted: tuple[signers.Signer, ...]) -> str | None:
    """What is wrong with a checkpoint's signature, or None when it holds: a checkpoint must
    be signed, and its signature must verify; once there is a signers file, by a key trusted
    for its actor (before that, any key: nobody is trusted yet, as for events)."""
    if cp.signer is None or cp.sig is None:
        return "it is not signed"
    if not keys.valid(cp.signer, checkpoints.message(cp), cp.sig):
        return f"its signature by {keys.short(cp.signer)} does not verify: it was forged or altered"
    if not trusted:
        return None
    standing, name = signers.standing(trusted, cp.signer, cp.actor)
    if standing == "trusted":
        return None
    if standing == "unknown":
        return f"it is signed by {keys.short(cp.signer)}, a key the signers file does not list"
    if standing == "revoked":
        return f"it is signed by {name}, whose key was revoked"
    return f"it is signed by {name}, whose key may not sign as {cp.actor}"

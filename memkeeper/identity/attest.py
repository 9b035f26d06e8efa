"""What the signers file says of each event's signature (``verify``, the dashboard). Pure."""

from __future__ import annotations

from memkeeper.identity import keys, signers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

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

"""The event log's records and hash chain (docs/reference.md §8): pure functions, no storage.

``hash = sha256(prev + canonical JSON of the event without its hash)``, so editing,
deleting or reordering any stored event breaks every hash after it.
"""

from __future__ import annotations

import json
import sys
import time

from memkeeper.records import Event

TYPE_CHECKING = False
# CPython's built-in sha256 loads in microseconds, OpenSSL's in ~3 ms: memory files are small.
if TYPE_CHECKING:
    from hashlib import sha256 as _small_sha256  # the same interface, typed
elif sys.version_info >= (3, 12):
    from _sha2 import sha256 as _small_sha256
else:
    from _sha256 import sha256 as _small_sha256

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Sign = Callable[[str], tuple[str, str]]  # a chain hash → (public key, signature)

GENESIS = "sha256:" + "0" * 64
CHAINED = Event.__slots__[:8]  # the fields an event's hash covers, with the one before it
_SMALL = 256 * 1024


def digest(data: bytes) -> str:
    """The hash form of docs/reference.md §3: ``sha256:`` and the hex digest."""
    loaded = sys.modules.get("hashlib")  # OpenSSL's sha256: ~5x faster per byte, ~3 ms to
    if loaded is None and len(data) > _SMALL:  # load — worth it for a big file, and free
        import hashlib as loaded  # once anything has loaded it (every write does)
    if loaded is not None:
        return "sha256:" + loaded.sha256(data).hexdigest()  # type: ignore[no-any-return]
    return "sha256:" + _small_sha256(data).hexdigest()


def iso_utc(seconds: float) -> str:
    """UTC ISO-8601 with milliseconds, e.g. ``2026-11-29T13:27:07.120Z``."""
    whole, millis = divmod(round(seconds * 1000), 1000)  # round: 1.001 is 1.00099999…
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def parse_utc(stamp: str) -> float:
    """Seconds since the epoch of an ``iso_utc`` stamp (``ValueError`` for anything else)."""
    import calendar

    whole, _, rest = stamp.partition(".")
    if not rest.endswith("Z") or len(rest) != 4:
        raise ValueError(f"not a memkeeper timestamp: {stamp!r}")
    moment = time.strptime(whole, "%Y-%m-%dT%H:%M:%S")
    return calendar.timegm(moment) + int(rest[:3]) / 1000


# One encoder for every event: ``json.dumps`` with these options builds a new one per call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(fields: dict[str, Any]) -> bytes:
    return _CANONICAL.encode(fields).encode()


def chain_hash(
    id: int,
    ts: str,
    actor: str,
    type: str,
    path: str | None,
    section: str | None,
    data: dict[str, Any],
    prev: str,
) -> str:
    """The hash of an event: over ``prev`` and the canonical JSON of every field but ``hash``
    (the fields of ``Event``, in its order)."""
    values = (id, ts, actor, type, path, section, data, prev)
    body = dict(zip(CHAINED, values, strict=True))
    return digest(prev.encode() + canonical(body))


def make_event(
    prev_event: Event | None,
    ts: str,
    actor: str,
    type: str,
    path: str | None,
    section: str | None,
    data: dict[str, Any],
) -> Event:
    """The next event after ``prev_event`` (``None`` for the first), with its chain hash."""
    tail = None if prev_event is None else (prev_event.id, prev_event.hash)
    return next_event(tail, ts, actor, type, path, section, data)


def next_event(
    tail: tuple[int, str] | None,
    ts: str,
    actor: str,
    type: str,
    path: str | None,
    section: str | None,
    data: dict[str, Any],
    sign: Sign | None = None,
) -> Event:
    """The next event after the one whose id and hash are ``tail`` (``None``: the first),
    its hash signed with ``sign`` (None: unsigned)."""
    event_id, prev = (1, GENESIS) if tail is None else (tail[0] + 1, tail[1])
    hashed = chain_hash(event_id, ts, actor, type, path, section, data, prev)
    signer, sig = (None, None) if sign is None else sign(hashed)
    return Event(event_id, ts, actor, type, path, section, data, prev, hashed, signer, sig)


def chain_breaks(
    events: Iterable[Event], after: tuple[int, str] = (0, GENESIS)
) -> list[tuple[int, str]]:
    """``(event id, what is wrong)`` for every link of the chain that does not hold, the
    first event coming after the one whose id and hash are ``after`` (a checkpoint's; by
    default the start of the log)."""
    problems: list[tuple[int, str]] = []
    expected_id, prev = after[0] + 1, after[1]
    for event in events:
        if event.id != expected_id:
            problems.append(
                (event.id, f"expected event id {expected_id}: an event is missing or reordered")
            )
        if event.prev != prev:
            problems.append((event.id, "its prev does not match the previous event's hash"))
        if chain_hash(*event[: len(CHAINED)]) != event.hash:
            problems.append((event.id, "its hash does not match its content: the event was edited"))
        expected_id, prev = event.id + 1, event.hash
    return problems

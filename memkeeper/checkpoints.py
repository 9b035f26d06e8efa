"""Checkpoints of the event chain (docs/reference.md §8 "Checkpoints"): a signed record of one
point of the chain — an event's id and hash — that verification starts from. Pure.

The store keeps two: ``verified``, the last head a ``verify`` found intact (a routine verify
walks only the events after it), and ``compacted``, where the log starts now (the events up to
it were removed; the first one kept has its hash as ``prev``). Each is signed by the process
that wrote it over ``message``: the digest of its fields behind a tag no event's hash starts
with, so a checkpoint's signature can never stand for an event's, nor an event's for one.
"""

from __future__ import annotations

import json

from memkeeper.events import canonical, digest
from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.events import Sign

VERIFIED, COMPACTED = "verified", "compacted"
KINDS = (VERIFIED, COMPACTED)
TAG = "memkeeper checkpoint "
SIGNED = ("kind", "seq", "hash", "ts", "actor", "signers")  # the fields the signature covers


class Unreadable(ValueError):
    """A stored checkpoint that is not one (the message says what is wrong)."""


class Checkpoint(Record):
    """The event ``seq`` had hash ``hash`` when ``actor`` wrote this ``kind`` of checkpoint at
    ``ts``, judging signatures by the signers file whose digest is ``signers`` (None: there
    was none); ``signer`` (a public key) signed ``message`` of it as ``sig``."""

    __slots__ = ("kind", "seq", "hash", "ts", "actor", "signers", "signer", "sig")
    kind: str
    seq: int
    hash: str
    ts: str
    actor: str
    signers: str | None
    signer: str | None
    sig: str | None

    def __init__(
        self,
        kind: str,
        seq: int,
        hash: str,
        ts: str,
        actor: str,
        signers: str | None,
        signer: str | None = None,
        sig: str | None = None,
    ) -> None:
        self._fill(kind, seq, hash, ts, actor, signers, signer, sig)

    @property
    def point(self) -> tuple[int, str]:
        """``(seq, hash)``: where a walk of the chain goes on from."""
        return self.seq, self.hash


def message(cp: Checkpoint) -> str:
    """What a checkpoint's signature is over: the tag, then the digest of its signed fields."""
    fields = {name: getattr(cp, name) for name in SIGNED}
    return TAG + digest(canonical(fields))


def make(
    kind: str,
    point: tuple[int, str],
    ts: str,
    actor: str,
    signers: str | None,
    sign: Sign,
) -> Checkpoint:
    """A checkpoint of ``kind`` at ``point`` (an event's id and hash), signed with ``sign``."""
    unsigned = Checkpoint(kind, point[0], point[1], ts, actor, signers)
    signer, sig = sign(message(unsigned))
    return unsigned._replace(signer=signer, sig=sig)


def encode(cp: Checkpoint) -> str:
    """A checkpoint as the stores keep it: compact JSON of every field."""
    return json.dumps(cp._asdict(), sort_keys=True, separators=(",", ":"))


def decode(text: str | bytes) -> Checkpoint:
    """A stored checkpoint (``Unreadable`` for anything that is not one)."""
    try:
        fields: Any = json.loads(text)
    except ValueError:
        raise Unreadable("it is not JSON") from None
    if not isinstance(fields, dict) or set(fields) != set(Checkpoint.__slots__):
        raise Unreadable(f"its fields are not {', '.join(Checkpoint.__slots__)}")
    if fields["kind"] not in KINDS:
        raise Unreadable(f"its kind {fields['kind']!r} is none of {', '.join(KINDS)}")
    seq = fields["seq"]
    if type(seq) is not int or seq < 1:
        raise Unreadable(f"its seq {seq!r} is not an event id")
    texts = ("hash", "ts", "actor")
    optional = ("signers", "signer", "sig")
    if not all(isinstance(fields[name], str) for name in texts) or not all(
        fields[name] is None or isinstance(fields[name], str) for name in optional
    ):
        raise Unreadable("a field that must be text is not")
    return Checkpoint(*(fields[name] for name in Checkpoint.__slots__))

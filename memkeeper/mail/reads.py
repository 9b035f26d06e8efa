"""The notice that a section an identity read has changed since (docs/reference.md §4.28):
which reads a ``read`` must write down, who changed a section between two revs, and how the
notice reads. Pure.

A read is written down as the rev read, per identity, path and key; the channel compares those
with the sections' current revs and tells the reader once per change it did not make itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from memkeeper.coordination import StaleRead
    from memkeeper.records import Event

EXTERNAL = "external"  # the actor of a change memkeeper noticed but did not make
CLASSES = ("section-owned",)  # whose reads are written down: the files changed by section
CHANGES_LOOKED_AT = 20  # the last events of a section read to name who changed it


def to_record(held: Mapping[str, int], read: Mapping[str, int]) -> dict[str, int]:
    """The reads to write down: ``read`` (key → rev) where it is newer than ``held`` — a read
    the store already holds costs no write."""
    return {key: rev for key, rev in read.items() if rev > held.get(key, 0)}


def changers(events: Iterable[Event], after: int, upto: int) -> list[str]:
    """Who made the section's revs ``after`` (exclusive) to ``upto``, oldest first, each once —
    from its events (any, newest first, that carries a ``rev``)."""
    found = []
    for event in events:
        rev = event.data.get("rev")
        if isinstance(rev, int) and after < rev <= upto:
            found.append(event.actor)
    return list(dict.fromkeys(reversed(found)))


def changed(stale: StaleRead, by: Sequence[str], reader: str) -> str | None:
    """The notice for ``reader`` that the section it read changed (``by``: who changed it;
    None when only the reader itself did — it knows)."""
    others = [who for who in by if who != reader]
    if by and not others:
        return None
    ref = f"{stale.path}#{stale.key}"
    revs = f"rev {stale.read_rev} → {stale.rev}"
    names = [("an edit outside memkeeper" if who == EXTERNAL else who) for who in others]
    who = f" by {', '.join(names)}" if names else ""
    if not stale.present:
        return f"{ref} was removed since you read it ({revs}){who}"
    return (
        f"{ref} changed since you read it ({revs}){who}: read it again before you change it "
        f"(memkeeper read {ref})"
    )

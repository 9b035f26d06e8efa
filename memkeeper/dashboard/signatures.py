"""What the dashboard says of each event's signature (docs/reference.md §4.24): once the
repository has a signers file, every event it shows carries ``signature_problem`` — None when a
trusted key signed it as its actor, else what ``verify`` would say of it (unsigned, unknown or
revoked key, a key not trusted for the actor, a signature that does not verify).

Events never change, so each is judged once per version of the signers file (a check costs
~0.2 ms, and the page asks for up to 500 events at a time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memkeeper.identity import attest

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.api import Memory
    from memkeeper.identity.signers import Signer
    from memkeeper.records import Event

KEEP = 20_000  # judgements kept before the cache starts again


class Marks:
    """Events as the dashboard sends them, each with its signature's standing."""

    def __init__(self) -> None:
        self._trusted: tuple[Signer, ...] = ()
        self._judged: dict[int, str | None] = {}

    def shown(self, memory: Memory, events: Iterable[Event]) -> list[dict[str, Any]]:
        trusted = memory.workspace.signing.trusted_signers()
        if trusted != self._trusted:
            self._trusted, self._judged = trusted, {}
        return [self._mark(event) for event in events]

    def _mark(self, event: Event) -> dict[str, Any]:
        shown = event.to_json()
        if not self._trusted:  # no signers file: nothing is judged, as verify judges nothing
            return shown
        if event.id not in self._judged:
            if len(self._judged) >= KEEP:
                self._judged.clear()
            self._judged[event.id] = attest.judge(event, self._trusted)
        shown["signature_problem"] = self._judged[event.id]
        return shown

"""The daemon's compaction of the event log (docs/reference.md §8 "Compaction", §4.18): once
the policy's ``events:`` bounds the log, ``memkeeper watch`` compacts what the bound lets go
(``ops.compact``) at its first look and every ``EVERY_S`` after — at most ``SHARE`` events a
look, so that a first compaction of a long log never holds up the files' changes: while more
is due it looks again at the next batch (a quiet tick included)."""

from __future__ import annotations

from memkeeper.daemon.plan import Outcome
from memkeeper.errors import MemkeeperError
from memkeeper.ops.compact import compact_to
from memkeeper.store.errors import StoreUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy

EVERY_S = 3600.0  # between two looks once nothing more is due
SHARE = 10_000  # events compacted at most by one look (about a second here)


class Compaction:
    """When the daemon next looks; ``step`` on every batch."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.next_at = float("-inf")  # on the daemon's clock

    def step(self, policy: Policy) -> list[Outcome]:
        """Compact, if the policy bounds the log and a look is due: what was compacted, or
        the error that stopped it (looked at again in ``EVERY_S``)."""
        keep_days, keep = policy.event_keep_days, policy.event_keep
        now = self.ws.now()
        if (keep_days is None and keep is None) or now < self.next_at:
            return []
        self.next_at = now + EVERY_S
        try:
            done = compact_to(self.ws, keep_days, keep, limit=SHARE)
        except StoreUnavailable:
            raise
        except MemkeeperError as exc:
            return [Outcome("error", None, f"compaction: {exc.message}")]
        if done["more"]:
            self.next_at = now
        if not done["removed"]:
            return []
        what = f"{done['removed']} event(s): the log starts after event {done['compacted']}"
        return [Outcome("compacted", None, what)]

"""The daemon's watchdog (docs/reference.md §4.18): it gathers, for every live claim, when it
last moved on the ground — a file under its targets changed (the change source's batches),
a commit on its branch or in its worktree (git's files, read), its holder wrote through
memkeeper (the event log) — and does what ``claims.idle`` decides: ``claim.idle`` and a
message to the holder, ``claim.active``, or a release (``ops.idleclaims``).

It looks at least every ``min(idle_after / 4, 60 s)``, and at the moment a verdict is due;
git or the local store moving (a commit, a new claim) makes it look within a second. A
daemon that starts counts its start as movement (it did not see what came before), and
takes the idle marks the log holds as they are. With a shared store, the claims it judges
are this root's (their worktree is in it): another machine's tree and branches are not seen
from here.
"""

from __future__ import annotations

import os

from memkeeper.claims import idle
from memkeeper.claims.plan import Plan
from memkeeper.claims.targets import covers
from memkeeper.daemon.plan import Outcome
from memkeeper.errors import MemkeeperError
from memkeeper.events import parse_utc
from memkeeper.fs.gitrefs import tips
from memkeeper.ops import idleclaims
from memkeeper.store.errors import StoreUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy

MAX_DIRS = 1024  # directories watched for claims' targets, at most
SHRINK_S = 300.0  # directories no claim needs any more are still watched up to this long
MAX_CHANGES = 4096  # changed paths remembered between two looks; more: look now
STIRRED_S = 1.0  # git or the store moved: the watchdog looks within this long
EPSILON_S = 1e-6  # two clocks' difference, added and taken away again


class Watchdog:
    """The watchdog's memory between looks; ``step`` on every batch."""

    def __init__(self, ws: Workspace, root: str) -> None:
        self.ws, self.root = ws, root
        self.dirs: frozenset[str] = frozenset()  # root-relative, for claims' targets
        self.next_at = float("-inf")  # the next look, on the daemon's clock
        self.changes: dict[str, float] = {}  # path → when it last changed, since the last look
        self.watched: dict[str, idle.Watched] = {}
        self.tips: dict[str, tuple[str, str]] = {}  # claim → (branch's commit, HEAD's)
        self.cursor: int | None = None  # the last event read (None: not started)
        self.started = 0.0  # the first look, on the claims' clock
        self.shrink_at = float("-inf")  # when ``dirs`` may next lose directories

    def step(self, paths: Iterable[str], stirred: bool, policy: Policy) -> list[Outcome]:
        """One batch: ``paths`` changed; ``stirred``: git or the store moved (a commit, a
        new claim may be there: look within a second)."""
        rule = idle.IdleRule(policy.idle_after, policy.idle_release_after)
        if not rule.on:  # turned on again later: a fresh start, as when the daemon starts
            self.dirs, self.watched, self.changes, self.tips = frozenset(), {}, {}, {}
            self.shrink_at = float("-inf")
            self.cursor, self.next_at = None, float("-inf")
            return []
        now = self.ws.now()
        for path in paths:
            self.changes[path] = now
        if stirred:
            self.next_at = min(self.next_at, now + STIRRED_S)
        if now < self.next_at - EPSILON_S and len(self.changes) < MAX_CHANGES:
            return []
        try:
            return self._look(rule, policy, now)
        except StoreUnavailable:
            raise
        except MemkeeperError as exc:
            self.next_at = now + rule.check_s
            return [Outcome("error", None, f"watchdog: {exc.message}")]

    def _look(self, rule: idle.IdleRule, policy: Policy, now: float) -> list[Outcome]:
        claim_now = self.ws.claim_now()
        offset = claim_now - now  # the claims' clock less the daemon's
        claims = [c for c in self.ws.store.claim_rows() if c.is_live(claim_now) and self._ours(c)]
        fresh = self._events(claims, claim_now, rule)
        done: list[Outcome] = []
        for claim in claims:
            w = self._moved(claim, fresh, offset, claim_now)
            done += self._act(claim, w, idle.judge(w, claim_now, rule), claim_now)
        live = {c.id for c in claims}
        self.watched = {k: w for k, w in self.watched.items() if k in live}
        self.tips = {k: t for k, t in self.tips.items() if k in live}
        self.changes = {}
        self._watch_dirs(self._dirs([c for c in claims if c.id in self.watched], policy), now)
        self.next_at = idle.next_look(self.watched.values(), claim_now, rule) - offset
        return done

    def _watch_dirs(self, wanted: frozenset[str], now: float) -> None:
        """Watch ``wanted`` from now on. Directories no claim needs any more are dropped only
        every ``SHRINK_S``: a new watch set costs the daemon a rewatch and a look at every
        managed file, and claims come and go far more often than that."""
        if now >= self.shrink_at or len(self.dirs | wanted) > MAX_DIRS:
            self.dirs, self.shrink_at = wanted, now + SHRINK_S
        elif not wanted <= self.dirs:
            self.dirs = self.dirs | wanted

    def _events(
        self, claims: list[Claim], claim_now: float, rule: idle.IdleRule
    ) -> list[tuple[str, float]]:
        """``(actor, when)`` of the events since the last look that are work for whoever
        recorded them (``idle.is_work``); on the first look, the idle marks the log holds are
        taken as they are."""
        store = self.ws.store
        if self.cursor is None:
            last = store.last_event()
            self.cursor, self.started = (0 if last is None else last.id), claim_now
            for claim_id in idleclaims.idle_marks(self.ws, claims):
                quiet = claim_now - rule.idle_after  # no movement known before the mark
                self.watched[claim_id] = idle.Watched(claim_id, quiet, claim_now)
            return []
        found = store.events(since=self.cursor)
        if found:
            self.cursor = found[-1].id
        return [(e.actor, parse_utc(e.ts)) for e in found if e.type not in idle.NOT_WORK]

    def _moved(
        self, claim: Claim, fresh: list[tuple[str, float]], offset: float, claim_now: float
    ) -> idle.Watched:
        """The claim's facts brought up to this look."""
        seen = self.watched.get(claim.id)
        if seen is None:
            seen = idle.Watched(claim.id, max(claim.granted_at, self.started))
        paths = [idle.target_path(t) for t in claim.targets]
        changed = [t for p, t in self.changes.items() if any(covers(g, p) for g in paths)]
        worked = [t for actor, t in fresh if actor == claim.agent]
        tip = self._tip(claim)
        committed = claim_now if self.tips.setdefault(claim.id, tip) != tip else None
        self.tips[claim.id] = tip
        wall = max(changed + worked, default=None)
        moved_at = idle.moved(seen.moved_at, committed, None if wall is None else wall + offset)
        return idle.Watched(claim.id, moved_at, seen.idle_since)

    def _act(
        self, claim: Claim, w: idle.Watched, verdict: idle.Verdict, now: float
    ) -> list[Outcome]:
        self.watched[claim.id] = w
        on = f"claim {claim.id} of {claim.agent} on {', '.join(claim.targets)}"
        if verdict == "idle":
            quiet = now - w.moved_at
            event = idleclaims.mark_idle(self.ws, claim, quiet, w.moved_at)
            self.watched[claim.id] = idle.Watched(claim.id, w.moved_at, now)
            what = f"{on}: no movement for {idle.minutes(quiet)}, its holder told"
            return [Outcome("idle", None, what, None if event is None else event.id)]
        if verdict == "active":
            assert w.idle_since is not None
            event = idleclaims.mark_active(self.ws, claim, now - w.idle_since)
            self.watched[claim.id] = idle.Watched(claim.id, w.moved_at)
            return [
                Outcome("active", None, f"{on}: moving again", None if event is None else event.id)
            ]
        if verdict == "release":
            assert w.idle_since is not None
            gone = idleclaims.release_idle(self.ws, claim.id, now - w.idle_since)
            del self.watched[claim.id]
            if gone is not None:
                return [Outcome("released", None, f"{on}: idle too long, its holder told")]
        return []

    def _tip(self, claim: Claim) -> tuple[str, str]:
        plan = self._plan(claim)
        return tips(plan.worktree or self.root, plan.branch)

    def _ours(self, claim: Claim) -> bool:
        """Every claim of a local store; a shared store's whose worktree is in this root."""
        if not self.ws.shared:
            return True
        where = os.path.abspath(self._plan(claim).worktree or self.root)
        return where == self.root or where.startswith(self.root + os.sep)

    def _plan(self, claim: Claim) -> Plan:
        """Where the claim said it works: its grant's plan, else its record's."""
        if claim.plan is not None:
            return claim.plan
        record = self.ws.store.claim_record(claim.id)
        return Plan() if record is None else record.plan

    def _dirs(self, claims: list[Claim], policy: Policy) -> frozenset[str]:
        """The directories to watch for these claims' targets: each target's literal base
        (its directory, for a file), with the directories below it a walk enters."""
        found: set[str] = set()
        for base in sorted({idle.literal_base(t) for c in claims for t in c.targets}):
            full = os.path.join(self.root, base) if base else self.root
            if not os.path.isdir(full):
                base = os.path.dirname(base)
                full = os.path.join(self.root, base) if base else self.root
                if os.path.isdir(full):
                    found.add(base)
                continue
            for here, subdirs, _ in os.walk(full):
                rel = os.path.relpath(here, self.root).replace(os.sep, "/")
                found.add("" if rel == "." else rel)
                subdirs[:] = sorted(d for d in subdirs if policy.walks_into(d))
                if len(found) >= MAX_DIRS:
                    return frozenset(found)
        return frozenset(found)

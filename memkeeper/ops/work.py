"""Work items (docs/reference.md §4.33): the shell that stores what ``work.rules`` decides.

Every operation is one claims transaction (``ClaimTable``'s: expired claims swept first, the
queue served after) that also reads the items not done once (``unfinished``: done ones are
not read again) and settles them: a claimed
item whose claim is no longer live goes back to the pool (``work.returned``, the reason being
how the claim ended) — or, its claim completed with ``memkeeper complete``, is done. So an item
comes back lazily, at the next ``work`` operation of anyone, judged by the claims' one clock,
as claim expiry is; no daemon needs to run.

``next`` is the one place work becomes owned: in that one transaction (SQLite: one ``BEGIN
IMMEDIATE``; etcd: one transaction whose commit compares everything it read, the items' range
and the claims included) it picks the highest-priority ready item whose claim could be granted
now, grants that claim through the claims' own grant (its fencing token, record and
``claim.granted``) and marks the item claimed by it (``work.claimed``). Two workers can never
both get one item, nor overlapping paths: the second transaction sees the first's grant, or
(etcd) fails at its commit and starts over.

``done``, ``fail`` and ``give_back`` (``work return``) require the caller to hold the item's
live claim (``rules.check_holder``): ``done`` completes it with evidence exactly as ``memkeeper
complete`` does (the ``--verify`` commands run before the transaction), ``fail`` and
``give_back`` release it. Every ``work.keeping.TRIM_EVERY``-th ``add`` also drops, in its
transaction, the ended items beyond the policy's ``work:`` bound (``_trim``); editing and
retrying are ``ops.workedits``. Waiting (``next --wait``, ``wait``) blocks on a FIFO of the waiter's
own (``fs.wakeups``) that every work change pokes, and every claim ended by other means
(``ops.wakes``), once its command commits — with a shared store also through a watch on the
items and the claims (``store.etcd.wakewatch``), which a change on any machine moves; else
they look at the soonest expiry, at least every ``WAKE_CAP_S`` (``SHARED_CAP_S``).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memkeeper import limits
from memkeeper.claims import decisions as claim_rules
from memkeeper.claims import lifecycle as life
from memkeeper.claims.wording import holder_json
from memkeeper.errors import Busy, Invalid
from memkeeper.events import iso_utc
from memkeeper.fs import wakeups as waiting
from memkeeper.ops.claimlife import ClaimLife, plan_of
from memkeeper.ops.claimwaits import CANCEL_POLL_S, next_look, watching
from memkeeper.ops.wakes import poke_work
from memkeeper.work import keeping, rules
from memkeeper.work.items import ENDED

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.claimwaits import Cancel
    from memkeeper.ops.workspace import Workspace
    from memkeeper.store.protocol import StateStore
    from memkeeper.work.items import Item, State

VERBS = {"done": "complete", "failed": "fail", "open": "return"}
WATCHER = "work-{pid}-{n}"  # a waiter's FIFO (``wait/work-….fifo``): every work change pokes it


class WorkQueue(ClaimLife):
    """The work operations of one ``Memory``; each public call is one transaction (or a few,
    with a wait)."""

    def __init__(self, ws: Workspace) -> None:
        super().__init__(ws)
        self.items: list[Item] = []
        self.moved = False

    @contextlib.contextmanager
    def round(self) -> Iterator[float]:
        """A claims transaction that reads and settles the items first; waiters are poked
        after its commit when an item changed."""
        self.moved = False
        try:
            with self.transaction() as now:
                self.items = unfinished(self.store)
                self._settle_items(now)
                yield now
        finally:
            if self.moved:
                poke_watchers(self.ws.home)

    # -- reading -----------------------------------------------------------------------------

    def listing(self, *, ready: bool = False) -> list[Item]:
        """Every item by id, or the ready ones in the order ``next`` hands them out."""

        def once() -> list[Item]:
            with self.round():
                return rules.ready_list(self.items) if ready else self.store.work.work_items()

        return self.ws.again(once)

    def show(self, item_id: int) -> Item:
        def once() -> Item:
            with self.round():
                return self._item(item_id)

        return self.ws.again(once)

    # -- adding, taking ----------------------------------------------------------------------

    def add(
        self,
        title: str,
        *,
        paths: Sequence[str] = (),
        priority: int = 0,
        after: Sequence[int] = (),
        body: str = "",
    ) -> Item:
        """A new open item (``Invalid``, nothing stored, for bad input)."""
        from memkeeper.ops.claimwrites import resolve_target

        resolved = [resolve_target(self.ws, p) for p in paths]

        def once() -> Item:
            with self.round() as now:
                known = {i.id: i for i in self.items}
                for dep in set(after) - set(known):  # a done item: read alone
                    found = self.store.work.work_item(dep)
                    if found is not None:
                        known[dep] = found
                draft = rules.added(
                    0, title, self.ws.agent, now, paths=resolved, priority=priority,
                    after=after, body=body, known=known,
                )  # fmt: skip
                item = self.store.work.add_work(draft)
                self._log("work.added", item, {"after": list(item.after)})
                if keeping.due(item.id):
                    self._trim([*self.items, item], now)
                return item

        return self.ws.again(once)

    def take(
        self, ttl: float | None = None, wait: float | None = None, cancel: Cancel | None = None
    ) -> tuple[Item, Claim]:
        """The highest-priority ready item whose paths can be claimed now, and its claim;
        ``Busy`` (exit 5) if there is none — after ``wait`` seconds, with one."""
        if wait is not None and not wait >= 0:
            raise Invalid(f"--wait must be a number of seconds, not {wait} — pass --wait 30")
        ttl = self.default_ttl if ttl is None else ttl
        plan = plan_of(self.ws, "", "", "", (), ())
        inbox = None
        if wait:
            watcher = WATCHER.format(pid=os.getpid(), n=id(self))
            inbox = waiting.Inbox(self.ws.home, watcher)  # before the first look: no lost poke
        try:
            with watching(self.ws, inbox, None) if inbox else contextlib.nullcontext():
                return self._taking(ttl, plan, inbox, wait or 0, cancel)
        finally:
            if inbox is not None:
                inbox.close()

    def _taking(
        self, ttl: float, plan: Any, inbox: waiting.Inbox | None, wait: float, cancel: Cancel | None
    ) -> tuple[Item, Claim]:
        """``take``'s looks, blocking on ``inbox`` between them for up to ``wait`` seconds."""
        start: float | None = None
        while True:
            outcome, now = self.ws.again(lambda: self._take(ttl, plan))
            if not isinstance(outcome, Busy):
                return outcome
            start = now if start is None else start
            if inbox is None or now >= start + wait or (cancel and cancel.is_set()):
                raise outcome
            sleep = next_look(start + wait, self.held, now, shared=self.ws.shared)
            inbox.block(min(sleep, CANCEL_POLL_S) if cancel else sleep)

    def _take(self, ttl: float, plan: Any) -> tuple[tuple[Item, Claim] | Busy, float]:
        with self.round() as now:
            live, queued = self._table()
            # the newest arrival: behind every queued request it conflicts with
            found = rules.pick(self.items, live, queued, self.ws.agent, ttl, limits.MAX_INT)
            if found is None:
                return self._nothing(now), now
            item, probe = found
            arrival = self.store.bump("request")
            request = replace(probe, id=f"c{arrival}", arrival=arrival, plan=plan)
            claim = self._grant(request, now)
            item = self._put(rules.claimed(item, claim))
            data = {"token": claim.token, "expires_at": iso_utc(claim.expires_at)}
            self._log("work.claimed", item, data)
            return (item, claim), now

    def _nothing(self, now: float) -> Busy:
        """Why ``next`` found nothing to take: ready items behind live claims (``held``), or
        none ready (``queued``) — with the counts a worker loop stops on."""
        ready = rules.ready_list(self.items)
        counts = {s: sum(1 for i in self.items if i.state == s) for s in ("open", "claimed")}
        holders: dict[str, Claim] = {}
        for item in ready:
            probe = rules.request_for(item, self.ws.agent, 1.0, limits.MAX_INT)
            holders |= {c.id: c for c in claim_rules.blockers(self.held, probe)}
        if ready:
            names = ", ".join(sorted({c.agent for c in holders.values()})) or "waiting requests"
            message = (
                f"none of the {len(ready)} ready work items can be claimed now: their paths "
                f"are claimed by {names} — wait for one with: memkeeper work next --wait 60"
            )
        elif counts["open"] or counts["claimed"]:
            message = (
                f"no work item is ready: {counts['open']} open wait on items not done yet, "
                f"{counts['claimed']} are claimed — wait with: memkeeper work next --wait 60"
            )
        else:
            message = "no work items left — add one with: memkeeper work add TITLE"
        return Busy(
            message, reason="held" if ready else "queued",
            holders=[holder_json(c, now) for c in holders.values()],
            ready=len(ready), open=counts["open"], claimed=counts["claimed"],
        )  # fmt: skip

    # -- ending --------------------------------------------------------------------------------

    def done(self, item_id: int, verify: Sequence[str] = (), claim_id: str | None = None) -> Item:
        """Complete the item's claim with evidence, as ``memkeeper complete`` does: any failed
        ``verify`` command refuses it (``Failed``, exit 6) and the item stays claimed."""
        cid = rules.check_holder(self._peek(item_id), self.ws.agent, claim_id, "complete")
        before = self._holding(cid, "completed", None)
        found = self.proven(
            before, verify, None, f"work item {item_id} not done",
            "it stays claimed by you; fix them and run work done again",
        )  # fmt: skip
        extra = {"head": found.head, "checks": len(found.checks), "changed": found.changed_count}
        extra["work"] = item_id
        return self.ws.again(
            lambda: self._close(item_id, cid, before.rev, "done", extra, evidence=found)
        )

    def fail(self, item_id: int, reason: str, claim_id: str | None = None) -> Item:
        """The item failed (``reason`` kept); its claim is released."""
        reason = rules.reason_text(reason)
        cid = rules.check_holder(self._peek(item_id), self.ws.agent, claim_id, "fail")
        return self.ws.again(lambda: self._close(item_id, cid, None, "failed", {}, why=reason))

    def give_back(self, item_id: int, claim_id: str | None = None) -> Item:
        """Back to the pool (``work return``); its claim is released."""
        item = self._peek(item_id)
        if item.state == "failed":
            raise Invalid(
                f"work item {item_id} failed — work return gives back a claimed item; to put "
                f"a failed one back in the pool run: memkeeper work retry {item_id}",
                reason="failed",
            )
        cid = rules.check_holder(item, self.ws.agent, claim_id, "return")
        return self.ws.again(lambda: self._close(item_id, cid, None, "open", {}, why="returned"))

    def _close(
        self,
        item_id: int,
        cid: str,
        rev: int | None,
        to: State,
        extra: dict[str, Any],
        why: str = "",
        **changes: Any,
    ) -> Item:
        with self.round() as now:
            item = self._item(item_id)
            rules.check_holder(item, self.ws.agent, cid, VERBS[to])
            held = self._held(cid)
            assert held is not None  # the settle returned the item had its claim ended
            if to == "done":
                life.check_rev(self.record_of(held), rev)
                self._end(held, now, "completed", extra, **changes)
                item = self._put(rules.ended(item, "done", now))
            elif to == "failed":
                self._drop(held, now, f"work item {item_id} failed")
                item = self._put(rules.ended(item, "failed", now, why))
            else:
                self._drop(held, now, f"work item {item_id} returned")
                item = self._put(rules.returned(item, why))
            self._log(f"work.{'returned' if to == 'open' else to}", item, {"reason": why})
            return item

    # -- waiting for an item -------------------------------------------------------------------

    def wait(self, item_id: int, timeout: float | None = None) -> Item:
        """Block until the item is done or failed (``Busy``, reason ``timeout``, after
        ``timeout`` seconds): woken by the change, not by polling."""
        if timeout is not None and not timeout >= 0:
            raise Invalid(f"--timeout must be a number of seconds, not {timeout}")
        inbox = waiting.Inbox(self.ws.home, WATCHER.format(pid=os.getpid(), n=id(self)))
        try:
            with watching(self.ws, inbox, None):
                return self._awaiting(item_id, inbox, timeout)
        finally:
            inbox.close()

    def _awaiting(self, item_id: int, inbox: waiting.Inbox, timeout: float | None) -> Item:
        """``wait``'s looks, blocking on ``inbox`` between them."""
        start: float | None = None
        while True:
            item, now = self.ws.again(lambda: self._look(item_id))
            if item.state in ENDED:
                return item
            start = now if start is None else start
            deadline = float("inf") if timeout is None else start + timeout
            if now >= deadline:
                raise Busy(
                    f"work item {item_id} is still {item.state} after {timeout} s — wait "
                    f"longer with --timeout, or look with: memkeeper work show {item_id}",
                    reason="timeout", holders=[], item=item.to_json(),
                )  # fmt: skip
            inbox.block(next_look(deadline, self.held, now, shared=self.ws.shared))

    def _look(self, item_id: int) -> tuple[Item, float]:
        with self.round() as now:
            return self._item(item_id), now

    # -- the items, in the store and in the copy alike -----------------------------------------

    def _settle_items(self, now: float) -> None:
        """Items whose claim ended: back to the pool, or done if it was completed."""
        for item in rules.stale(self.items, (c.id for c in self.held)):
            assert item.claim is not None
            record = self.store.claim_record(item.claim)
            how = "ended" if record is None else record.state
            if how == "completed":
                moved = self._put(rules.ended(item, "done", now))
                self._log("work.done", moved, {"reason": "claim completed"})
            else:
                moved = self._put(rules.returned(item, how))
                self._log("work.returned", moved, {"reason": how})

    def _trim(self, unfinished: list[Item], now: float) -> None:
        """Keep the ended items within the policy's ``work:`` bound (``work.keeping``)."""
        keep_days, keep = self.ws.work_settings()
        failed = [(i.id, i.ended_at) for i in unfinished if i.state == "failed"]
        drop = keeping.to_trim(
            [*self.store.work.done_work(), *failed], unfinished, now, keep_days, keep
        )
        if drop:
            self.store.work.drop_work(drop)
            self.items = [i for i in self.items if i.id not in set(drop)]

    def _put(self, item: Item) -> Item:
        self.store.work.put_work(item)
        self.items = [item if i.id == item.id else i for i in self.items]
        self.moved = True
        return item

    def _peek(self, item_id: int) -> Item:
        """The item as stored, outside a transaction: what a verb checks before its work
        (``done``'s evidence); its transaction checks again, settled."""
        self.items = []
        return self._item(item_id)

    def _item(self, item_id: int) -> Item:
        found = next((i for i in self.items if i.id == item_id), None)
        found = found or self.store.work.work_item(item_id)  # a done one: read alone
        if found is None:
            raise Invalid(
                f"no work item {item_id} — list them with: memkeeper work list",
                reason="unknown_item",
            )
        return found

    def _log(self, type: str, item: Item, extra: dict[str, Any], actor: str | None = None) -> None:
        data: dict[str, Any] = {"id": item.id, "title": item.title, "paths": list(item.paths)}
        data |= {"priority": item.priority, "state": item.state, "rev": item.rev}
        if item.claim is not None:
            data["claim"] = item.claim
        self.ws.record(type, None, None, {**data, **extra}, actor or item.agent or self.ws.agent)
        self.moved = True


def unfinished(store: StateStore) -> list[Item]:
    """Every item not done — open, claimed, failed: all readiness needs, since an item it
    does not hold is done (``rules.ready``) — what every work operation reads, however many
    items were done before."""
    return store.work.work_items(("open", "claimed", "failed"))


def poke_watchers(home: str) -> None:
    """Wake everyone waiting on work (``next --wait``, ``wait``): a byte into each FIFO."""
    poke_work(home)

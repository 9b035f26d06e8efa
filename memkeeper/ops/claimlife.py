"""A claim's life after its grant (docs/reference.md §4 "Claim records"): scope changes,
completion with evidence, abandon, suspend and resume, takeover. Each is one transaction of
the claim table (``ClaimTable``: settle, act, settle) that checks the record's revision
(``--expect-rev``) and leaves one event; the rules are ``claims.lifecycle``'s.

Evidence is gathered before the transaction — git in the claim's worktree, the memory
revisions its holder wrote, the ``--verify`` commands run there with the policy's timeout —
so a test run of ten minutes never holds the store's lock; the transaction then checks that
the record is still at the revision the evidence was gathered for.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from memkeeper.claims import decisions as rules
from memkeeper.claims import evidence as proofs
from memkeeper.claims import lifecycle as life
from memkeeper.claims.plan import Plan, make_plan
from memkeeper.claims.targets import normalize_target
from memkeeper.errors import Busy, Conflict, Failed, Invalid, MemkeeperError
from memkeeper.events import iso_utc
from memkeeper.ops.claims import ClaimTable, _again
from memkeeper.ops.claimwrites import resolve_target
from memkeeper.ops.posting import handoff
from memkeeper.records import Violation

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from memkeeper.claims.decisions import Claim, Mode
    from memkeeper.claims.lifecycle import ClaimRecord, State
    from memkeeper.ops.workspace import Workspace

WRITES = ("section.patched", "section.merged", "entry.appended")


class ClaimLife(ClaimTable):
    """The lifecycle verbs of one ``Memory``; each public call is one transaction."""

    # -- reading --------------------------------------------------------------------------

    def record(self, claim_id: str) -> ClaimRecord:
        found = self.store.claim_record(claim_id)
        if found is not None:
            return found
        live = self.store.claim_row(claim_id)
        if live is None:
            raise Invalid(
                f"no claim {claim_id!r} — list them with: memkeeper claims --all",
                reason="unknown_claim",
            )
        return self.record_of(live)

    def records(self, states: Sequence[str] = ()) -> list[ClaimRecord]:
        """The records in ``states`` (none named: all), oldest grant first: those stored and
        those of live claims not changed since their grant."""
        unknown = [s for s in states if s not in life.STATES]
        if unknown:
            raise Invalid(f"unknown claim state {unknown[0]!r} — one of {', '.join(life.STATES)}")
        self.sweep()  # a claim past its expiry shows as expired
        found = self.store.claim_records(states)
        if not states or "active" in states:
            kept = {r.id for r in found}
            fresh = [c for c in self.store.claim_rows() if c.id not in kept]
            found += [self.record_of(c) for c in fresh]
            found.sort(key=lambda r: (r.granted_at, r.token))
        return found

    # -- scope -------------------------------------------------------------------------------

    def scope(
        self,
        claim_id: str,
        add: Iterable[str],
        remove: Iterable[str],
        expect_rev: int | None,
        wait: float | None = None,
    ) -> ClaimRecord:
        """Add and remove targets. Added ones are checked as a new request would be: another
        agent's live claim or a conflicting waiter ahead refuses the change (``Busy``, exit 5)
        and nothing changes — or, with ``wait``, the added targets queue as a request of their
        own, merged into the claim once granted; a change that adds gets a fresh token."""
        added = [resolve_target(self.ws, t) for t in add]
        dropped = {normalize_target(resolve_target(self.ws, t)) for t in remove}
        if not added and not dropped:
            raise Invalid("claim scope needs --add TARGET or --remove TARGET")
        if wait is not None and not wait >= 0:
            raise Invalid(f"--wait must be a number of seconds, not {wait} — pass --wait 30")
        outcome = self.ws.again(lambda: self._scope(claim_id, added, dropped, expect_rev))
        if isinstance(outcome, tuple):
            busy, ask, rev = outcome
            if not wait:
                raise busy
            return self._scope_queued(claim_id, ask, dropped, rev, wait)
        return outcome

    def _scope(
        self, claim_id: str, added: list[str], dropped: set[str], expect_rev: int | None
    ) -> ClaimRecord | tuple[Busy, rules.Request, int]:
        with self.transaction() as now:
            held = self._live(claim_id, now)
            record = self.record_of(held)
            life.check_rev(record, expect_rev)
            kept = [t for t in held.targets if t not in dropped]
            probe = rules.make_request(
                "scope", held.agent, [*kept, *added], mode=held.mode, priority=held.priority,
                strict=held.strict, ttl=1.0, objective=held.objective, arrival=0,
            )  # fmt: skip
            new = tuple(t for t in probe.targets if t not in held.targets)
            if new:
                ask = replace(probe, targets=new, arrival=self.store.bump("request"))
                ask = replace(ask, id=f"c{ask.arrival}", ttl=float(self.default_ttl))
                live, queued = self._table()
                if not rules.grantable(live, queued, ask):
                    return self._busy(ask, now, "held"), ask, record.rev
            token = self.store.bump("token") if new else held.token
            return self._rescope(held, record, probe.targets, token, {})

    def _rescope(
        self,
        held: Claim,
        record: ClaimRecord,
        targets: tuple[str, ...],
        token: int,
        extra: dict[str, Any],
    ) -> ClaimRecord:
        claim = replace(held, targets=targets, token=token)
        self.store.put_claim(claim)
        self.held = [claim if c.id == claim.id else c for c in self.held]
        record = life.rescope(record, targets, token, at=iso_utc(self.ws.now()))
        self.store.put_claim_record(record)
        new = [t for t in targets if t not in held.targets]
        gone = [t for t in held.targets if t not in targets]
        self._event(
            "claim.scoped", claim, {"rev": record.rev, "added": new, "removed": gone, **extra}
        )
        self.changed = self.freed = True
        return record

    def _scope_queued(
        self, claim_id: str, ask: rules.Request, dropped: set[str], rev: int, wait: float
    ) -> ClaimRecord:
        """Queue the added targets as a request of their own (``claim --wait``'s queue: its
        place in line, deadlocks, wake-ups); once granted, merge that grant into the claim."""

        def make(arrival: int) -> rules.Request:
            return replace(ask, id=f"c{arrival}", arrival=arrival)

        request, outcome, inbox, first = self.ws.again(lambda: self._begin(make, wait))
        if inbox is not None:
            outcome = self._wait(request, inbox, None, first)
        if isinstance(outcome, Busy):
            raise outcome
        assert outcome is not None
        part = outcome
        merged = self.ws.again(lambda: self._merge(claim_id, part, dropped, rev))
        if isinstance(merged, MemkeeperError):
            raise merged
        return merged

    def _merge(
        self, claim_id: str, part: Claim, dropped: set[str], rev: int
    ) -> ClaimRecord | MemkeeperError:
        """The queued part's grant becomes the claim's (its targets, its fresh token); if the
        claim ended or changed meanwhile, the part is released and that is the answer."""
        with self.transaction() as now:
            got, held = self._held(part.id), self._held(claim_id)
            record = None if held is None else self.record_of(held)
            if got is None or held is None or record is None or record.rev != rev:
                if got is not None:
                    self._drop(got, now, f"scope of {claim_id} not merged")
                try:
                    found = self._find(claim_id) if held is None else held
                    life.check_rev(record or self.record_of(found), rev)
                except (Invalid, Conflict) as exc:
                    return exc
                return Invalid(f"the grant of {part.id} ended before it was merged — try again")
            self._end(got, now, "released", {"reason": f"merged into {claim_id}"})
            targets = tuple(
                dict.fromkeys([*(t for t in held.targets if t not in dropped), *got.targets])
            )
            return self._rescope(held, record, targets, got.token, {"queued_as": got.id})

    # -- complete, abandon --------------------------------------------------------------------

    def complete(
        self,
        claim_id: str,
        verify: Sequence[str] = (),
        reported: str | None = None,
        expect_rev: int | None = None,
    ) -> ClaimRecord:
        """Complete with the evidence ``proven`` gathers: the claim stays active if refused."""
        before = self._holding(claim_id, "completed", expect_rev)
        found = self.proven(
            before, verify, reported, f"claim {claim_id} not completed",
            "the claim stays active; fix them and run complete again",
        )  # fmt: skip
        extra = {"head": found.head, "checks": len(found.checks), "changed": found.changed_count}
        return self._finish(claim_id, before.rev, "completed", extra, evidence=found)

    def proven(
        self, before: ClaimRecord, verify: Sequence[str], note: str | None, refused: str, then: str
    ) -> proofs.Evidence:
        """Evidence, each ``verify`` run; one failing: ``Failed`` (exit 6), ``refused — then``."""
        if len(verify) > proofs.MAX_CHECKS:
            raise Invalid(f"{len(verify)} --verify commands; at most {proofs.MAX_CHECKS}")
        found = self.gather(before, verify, note)
        if found.failed:
            raise Failed(
                f"{refused}: {len(found.failed)} of {len(found.checks)} --verify commands "
                f"failed — {then}",
                violations=[_violation(check) for check in found.failed],
                evidence=found.to_json(),
            )
        return found

    def abandon(
        self, claim_id: str, reason: str, expect_rev: int | None = None, message: str = ""
    ) -> ClaimRecord:
        """Record head, diff summary and memory revisions with ``reason`` (and ``message``, for
        whoever takes it over), then let go."""
        reason, message = life.reason_text(reason), life.note_text(message)
        before = self._holding(claim_id, "abandoned", expect_rev)
        found = self.gather(before, (), message or None)
        extra = {"head": found.head, "reason": reason, "changed": found.changed_count}
        return self._finish(claim_id, before.rev, "abandoned", extra, evidence=found, reason=reason)

    def suspend(self, claim_id: str, expect_rev: int | None = None) -> ClaimRecord:
        """Step out of the live set, keeping the record (its targets are free meanwhile)."""
        before = self._holding(claim_id, "suspended", expect_rev)
        return self._finish(claim_id, before.rev, "suspended", {})

    def gather(
        self, record: ClaimRecord, verify: Sequence[str], reported: str | None
    ) -> proofs.Evidence:
        """What memkeeper can verify itself about ``record``'s work, now."""
        from memkeeper.fs.checks import run_check
        from memkeeper.fs.git import Git, head_of

        worktree = record.plan.worktree or str(self.ws.top)
        head = head_of(worktree)[1] or None
        changed: tuple[str, ...] = ()
        count, stat = 0, ""
        if head and record.plan.base:
            git = Git(Path(worktree))
            changed, count = proofs.bounded_changed(git.changed_since(record.plan.base))
            stat = proofs.bounded_diffstat(git.diffstat(record.plan.base))
        timeout = self.ws.lease_settings()[3]
        checks = tuple(run_check(command, worktree, timeout) for command in verify)
        memory = self._memory_revisions(record)
        at = iso_utc(self.ws.now())
        return proofs.Evidence(
            head, record.plan.base, changed, count, stat, memory, checks, at, reported
        )

    def _memory_revisions(self, record: ClaimRecord) -> tuple[proofs.MemoryRev, ...]:
        events = self.store.events_typed(WRITES, record.granted_at)
        return tuple(
            proofs.MemoryRev(
                e.path or "", e.section, e.data.get("rev"), e.id, e.data.get("claim") == record.id
            )
            for e in events
            if e.actor == record.agent
        )

    @_again
    def _finish(
        self, claim_id: str, rev: int, to: State, extra: dict[str, Any], **changes: Any
    ) -> ClaimRecord:
        with self.transaction() as now:
            held = self._held(claim_id)
            if held is not None:
                life.check_rev(self.record_of(held), rev)
                self._end(held, now, to, extra, **changes)
                return self.record(claim_id)
            record = self.record(claim_id)
            life.check_move(record, to)  # an expiry meanwhile is no conflict: it ended it
            life.check_rev(record, rev)
            return self._move(record, to, now, extra, **changes)

    # -- resume, takeover ---------------------------------------------------------------------

    @_again
    def resume(
        self, claim_id: str, ttl: float | None = None, expect_rev: int | None = None
    ) -> Claim:
        """Bring a suspended claim back, as a new request on its targets would be granted
        (``Busy`` if another agent holds one now); a fresh fencing token."""
        with self.transaction() as now:
            record = self.record(claim_id)
            life.check_holder(record, self.ws.agent, "resume")
            life.check_rev(record, expect_rev)
            life.check_move(record, "active")
            request = self._request(record, claim_id, ttl)
            live, queued = self._table()
            if not rules.grantable(live, queued, request):
                busy = self._busy(request, now, "held")
            else:
                claim = rules.grant(request, self.store.bump("token"), now, self.max_ttl)
                self.store.put_claim(claim)
                self.held.append(claim)
                self._move(record, "active", now, {}, token=claim.token)
                return claim
        raise busy

    def takeover(
        self, claim_id: str, ttl: float | None = None, expect_rev: int | None = None
    ) -> tuple[Claim, ClaimRecord]:
        """A new claim on an abandoned or expired claim's targets, after the policy's grace
        period: it names its predecessor and gets a fresh fencing token; the predecessor
        becomes ``taken-over``. Nothing of the predecessor's is run again."""
        outcome = self.ws.again(lambda: self._takeover(claim_id, ttl, expect_rev))
        if isinstance(outcome, Busy):
            raise outcome
        return outcome

    def _takeover(
        self, claim_id: str, ttl: float | None, expect_rev: int | None
    ) -> tuple[Claim, ClaimRecord] | Busy:
        with self.transaction() as now:
            old = self.record(claim_id)
            life.check_rev(old, expect_rev)
            life.check_takeover(old, self.ws.agent, now, self.ws.lease_settings()[2])
            arrival = self.store.bump("request")
            request = self._request(old, f"c{arrival}", ttl, agent=self.ws.agent)
            request = replace(request, arrival=arrival)
            claim = self._enter(request, now)
            if claim is None:
                return self._busy(request, now, "held")
            new = replace(self.record_of(claim), predecessor=old.id)
            self.store.put_claim_record(new)
            old = self._move(old, "taken-over", now, {"successor": claim.id}, successor=claim.id)
            handoff(self.ws, old, claim.id)  # the predecessor's words, with the item
        return claim, old

    # -- helpers --------------------------------------------------------------------------------

    def _request(
        self, record: ClaimRecord, id: str, ttl: float | None, agent: str | None = None
    ) -> rules.Request:
        plan = record.plan
        if record.evidence is not None and record.evidence.head:
            plan = replace(plan, base=record.evidence.head)  # the work goes on from there
        return rules.make_request(
            id, agent or record.agent, record.targets, mode=cast("Mode", record.mode),
            ttl=self.default_ttl if ttl is None else ttl, objective=record.objective,
            arrival=0, plan=plan,
        )  # fmt: skip

    def _holding(self, claim_id: str, to: State, expect_rev: int | None) -> ClaimRecord:
        """The record of a claim of this agent's that may move to ``to``."""
        record = self.record(claim_id)
        life.check_holder(record, self.ws.agent, life.EVENTS[to].removeprefix("claim."))
        life.check_rev(record, expect_rev)
        life.check_move(record, to)
        return record

    def _live(self, claim_id: str, now: float) -> Claim:
        held = self._find(claim_id)
        rules.check_release(held, self.ws.agent)
        if not held.is_live(now):
            raise rules.expired_error(held, now)
        return held

    def _move(
        self, record: ClaimRecord, to: State, now: float, extra: dict[str, Any], **changes: Any
    ) -> ClaimRecord:
        """Move a record with no live claim (suspended, abandoned, expired) and record it."""
        at, by = iso_utc(self.ws.now()), self.ws.agent
        moved = life.move(record, to, at=at, by=by, ended_at=now, **changes)
        self.store.put_claim_record(moved)
        data = {"id": moved.id, "token": moved.token, "mode": moved.mode}
        data |= {"targets": list(moved.targets), "objective": moved.objective}
        self.ws.record(life.EVENTS[to], None, None, {**data, "rev": moved.rev, **extra}, by)
        self.changed = True
        return moved


def plan_of(
    ws: Workspace, branch: str, worktree: str, base: str, memory: Iterable[str],
    tests: Iterable[str],
) -> Plan:  # fmt: skip
    """A plan with git's defaults filled in: the worktree (default: the root), its branch and
    its ``HEAD`` commit, read from git's files (no ``git`` process on a claim's path)."""
    from memkeeper.fs.git import head_of

    place = os.path.abspath(worktree) if worktree else ws.top
    here_branch, here_head = head_of(place)
    sections = [resolve_target(ws, ref) for ref in memory]
    return make_plan(branch or here_branch, place, base or here_head, sections, tests)


def _violation(check: proofs.Check) -> Violation:
    how = "timed out" if check.timed_out else f"exited {check.exit_code}"
    return Violation(None, None, "verify", f"{check.command!r} {how}", "fix it, then complete")

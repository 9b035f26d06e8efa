"""``Memory``: the Python API (docs/reference.md §9), a thin façade over the operations.

Each method is one call into ``memkeeper.ops``, on this memory's ``Workspace`` (the root,
the agent, the clock and the store the operations share). The CLI, the gate and the daemon
call the same operations; orchestrators and tests import this class."""

from __future__ import annotations

import os

from memkeeper import names
from memkeeper.fs import root as roots
from memkeeper.ops import read as reading
from memkeeper.ops.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path
    from typing import Any

    from memkeeper.claimbook import Claims
    from memkeeper.claims.decisions import Claim, Mode
    from memkeeper.claims.similar import Match
    from memkeeper.clock import Clock
    from memkeeper.coordination import Proposal, Reconciliation
    from memkeeper.identity.sessions import Session
    from memkeeper.mailbox import Mailbox
    from memkeeper.meetingroom import MeetingRoom
    from memkeeper.ops.append import AppendResult
    from memkeeper.ops.claims import ClaimTable
    from memkeeper.ops.claimwaits import Cancel
    from memkeeper.ops.commitguard import Pushed
    from memkeeper.ops.regen import RegenResult
    from memkeeper.records import Event, PatchResult, SectionInfo, SectionText
    from memkeeper.workqueue import Work


class Memory:
    """Shared memory files under one root, seen by one agent."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        agent: str,
        clock: Clock | None = None,
        session: Session | None = None,
    ) -> None:
        self.workspace = Workspace(root, agent, clock, session)

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        clock: Clock | None = None,
    ) -> Memory:
        """Find the root like the CLI does; the agent defaults to ``$MEMKEEPER_AGENT``, else
        the agent session this process runs in (``identity.sessions``), else ``human``."""
        from memkeeper.identity import sessions

        chosen, session = sessions.chosen(agent, os.environ, names.DEFAULT_AGENT)
        return cls(roots.find_root(root), chosen, clock, session)

    def close(self) -> None:
        self.workspace.close()

    @property
    def root(self) -> Path:
        """The memory root (resolved)."""
        return self.workspace.root

    @property
    def agent(self) -> str:
        return self.workspace.agent

    @property
    def mail(self) -> Mailbox:
        """Messages to and from this identity (``memkeeper.mailbox``)."""
        from memkeeper.mailbox import Mailbox

        return Mailbox(self.workspace)

    @property
    def meetings(self) -> MeetingRoom:
        """Meetings on overlapping claims, and answers to release requests."""
        from memkeeper.meetingroom import MeetingRoom

        return MeetingRoom(self.workspace)

    @property
    def work(self) -> Work:
        """Work items with an atomic claim-next (``memkeeper.workqueue``)."""
        from memkeeper.workqueue import Work

        return Work(self)

    @property
    def home(self) -> str:
        """The memory home, ``ROOT/.memkeeper``."""
        return self.workspace.home

    def now(self) -> float:
        """The time on this memory's clock (seconds since the epoch)."""
        return self.workspace.now()

    def claim_now(self) -> float:
        """The time claims are judged by (``expires_at``): see reference §4 "Expiry"."""
        return self.workspace.claim_now()

    # -- reading ---------------------------------------------------------------------------

    def sections(self, path: str) -> list[SectionInfo]:
        return reading.sections(self.workspace, self.workspace.relpath(path))

    def read(self, ref: str) -> SectionText:
        """A section (``PATH#KEY``) or a whole file (``PATH``) with its revisions."""
        return reading.read(self.workspace, ref)

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        if not self.workspace.has_store:  # none yet: no events, and no store created
            return []
        return self.workspace.store.events(since, limit)

    # -- writing -----------------------------------------------------------------------------

    def patch(
        self,
        ref: str,
        body: str | bytes | None = None,
        *,
        expect_rev: int,
        expect_file_hash: str | None = None,
        dmp: str | None = None,
        claim: str | None = None,
        merge: bool = False,
    ) -> PatchResult:
        """Compare-and-swap one section's body; see docs/reference.md "Patch rules". With
        ``merge``, a stale ``expect_rev`` merges three ways: ``result.merged`` when it
        landed, else a ``Conflict`` whose ``proposal`` keeps the body (§4 "Merging")."""
        from memkeeper.ops.patch import patch

        return patch(
            self.workspace,
            ref,
            body,
            expect_rev=expect_rev,
            expect_file_hash=expect_file_hash,
            dmp=dmp,
            claim=claim,
            merge=merge,
        )

    def append(self, path: str, text: str | bytes) -> AppendResult:
        """Add an entry at the end of an append-only file, in the policy's entry_template."""
        from memkeeper.ops.append import append

        return append(self.workspace, self.workspace.relpath(path), text)

    def emit(self, type: str, data: dict[str, Any] | None = None) -> Event:
        """Record a coordination event from outside (``task.completed``, ``risk.found`` …);
        ``Invalid`` for a type memkeeper itself uses or data that is not a JSON object."""
        from memkeeper.ops.emit import emit

        return emit(self.workspace, type, data)

    # -- claims ------------------------------------------------------------------------------

    def claim(
        self,
        targets: str | Iterable[str],
        mode: Mode = "write",
        ttl: float | None = None,
        priority: int = 0,
        strict: bool = False,
        wait: float | None = None,
        objective: str = "",
        cancel: Cancel | None = None,
    ) -> Claim:
        """Take a claim on paths, globs or ``PATH#KEY`` sections; ``Busy`` if not granted
        (within ``wait`` seconds, when given) or aborted to break a deadlock. A wait ends
        with ``WaitCancelled`` once ``cancel`` (a ``threading.Event``, say) is set."""
        scope = [targets] if isinstance(targets, str) else list(targets)
        return self._claims().claim(
            scope,
            mode=mode,
            ttl=ttl,
            priority=priority,
            strict=strict,
            wait=wait,
            objective=objective,
            cancel=cancel,
        )

    def renew(self, id: str, ttl: float | None = None) -> Claim:
        """Extend a claim of this agent's to ``now + ttl`` (the policy's default TTL)."""
        return self._claims().renew(id, ttl)

    def release(self, id: str) -> Claim:
        """Give back a claim of this agent's; returns it as it was."""
        return self._claims().release(id)

    @property
    def claims(self) -> Claims:
        """Claims and their records (``memkeeper.claimbook``); ``claims()`` lists the live
        claims of every agent, oldest grant first."""
        from memkeeper.claimbook import Claims

        return Claims(self.workspace)

    def search_claims(self, text: str, limit: int = 10) -> list[Match]:
        """The live claims whose objective is closest in meaning to ``text``, best first (each
        a ``Match``: ``claim`` and ``score``); ``Invalid`` without the ``semantic`` extra."""
        from memkeeper.ops.claimsearch import search

        return search(self.workspace, text, limit)

    def metrics(self) -> dict[str, Any]:
        """Claim counters for the last hour (claims held, queue depth, deadlocks, …)."""
        from memkeeper.ops.claimviews import metrics

        return metrics(self.workspace)

    def sweep_claims(self) -> list[Claim]:
        """Expire the claims that are due (each leaves ``claim.expired``); the daemon's tick."""
        return self._claims().sweep()

    def _claims(self) -> ClaimTable:
        from memkeeper.ops.claims import ClaimTable

        return ClaimTable(self.workspace)

    # -- generated regions and validation ------------------------------------------------------

    def regen(self, path: str | None = None) -> list[RegenResult]:
        """Re-render the generated regions of one file, or of every generated file."""
        from memkeeper.ops.regen import regen

        return regen(self.workspace, None if path is None else self.workspace.relpath(path))

    def reconciliations(self, *, resolved: bool = False) -> list[Reconciliation]:
        """Open reconciliations (hand edits of generated regions); all with ``resolved``."""
        from memkeeper.ops import views

        return views.list_reconciliations(self.workspace, resolved=resolved)

    def resolve(self, rec_id: int, how: str) -> Reconciliation:
        """Resolve a reconciliation: ``keep-human`` or ``take-generated``."""
        from memkeeper.ops.reconcile import resolve

        return resolve(self.workspace, rec_id, how)

    # -- views: what `status`, `claims` and the dashboard show (ops/views.py) ------------------

    def status(self, *, full: bool = False) -> dict[str, Any]:
        """Root, policy, managed files, open reconciliations and live claims (``status``)."""
        from memkeeper.ops import views

        return views.status(self.workspace, full=full)

    def waiters(self) -> dict[str, Any]:
        """Live claims and waiters, each waiter with its ``position`` and ``blocked_by``."""
        from memkeeper.ops import views

        return views.waiters(self.workspace)

    def queue(self) -> dict[str, Any]:
        """Deprecated: the old name of :meth:`waiters` (the word *queue* is kept for the work
        queue); removed in the next release."""
        import warnings

        warnings.warn(
            "Memory.queue() is deprecated, use Memory.waiters()", DeprecationWarning, stacklevel=2
        )
        return self.waiters()

    def files(self) -> list[dict[str, Any]]:
        """Managed files with their sections, and who changed each last (private: none)."""
        from memkeeper.ops import views

        return views.files(self.workspace)

    def file(self, path: str) -> dict[str, Any] | None:
        """One managed file as ``files`` lists it (None: not managed), reading only it."""
        from memkeeper.ops import views

        return views.file(self.workspace, self.workspace.relpath(path))

    def log(self, ref: str, *, diff: bool = False) -> dict[str, Any]:
        """A section's revisions, newest first: rev, actor, ts, type (with ``diff``, what
        each changed); see ``memkeeper log``."""
        from memkeeper.ops.history import log

        return log(self.workspace, ref, diff=diff)

    def read_at(self, ref: str, rev: int) -> dict[str, Any]:
        """A section's body at an earlier revision (``read --rev``), while it is kept."""
        from memkeeper.ops.history import body_at

        return body_at(self.workspace, ref, rev)

    def revert(self, ref: str, *, to_rev: int, expect_rev: int) -> PatchResult:
        """Patch a section back to its body at ``to_rev``, if it is still at ``expect_rev``."""
        from memkeeper.ops.history import revert

        return revert(self.workspace, ref, to_rev=to_rev, expect_rev=expect_rev)

    def history(self, ref: str, limit: int = 50) -> dict[str, Any]:
        """One section's text (as ``read``) and its events, newest first."""
        from memkeeper.ops import views

        return views.history(self.workspace, ref, limit)

    def reconciliation_diffs(self) -> list[dict[str, Any]]:
        """The open reconciliations, each with its diff (as ``reconcile show``)."""
        from memkeeper.ops import views

        return views.reconciliations(self.workspace)

    def contention(self) -> list[dict[str, Any]]:
        """Who waited for a claim on whom, for how long, how it ended (the last hour)."""
        from memkeeper.ops import views

        return views.contention(self.workspace)

    def proposals(self, *, closed: bool = False) -> list[Proposal]:
        """Open proposals (bodies of merges that did not land); all with ``closed``."""
        from memkeeper.ops.proposals import list_proposals

        return list_proposals(self.workspace, closed=closed)

    def proposal(self, proposal_id: int) -> dict[str, Any]:
        """One proposal with its body, the section as it is now and a diff between them."""
        from memkeeper.ops.proposals import show

        return show(self.workspace, proposal_id)

    def apply_proposal(self, proposal_id: int, *, expect_rev: int) -> tuple[Proposal, PatchResult]:
        """Patch a proposal's section with its body (compare-and-swap at ``expect_rev``)."""
        from memkeeper.ops.proposals import apply

        return apply(self.workspace, proposal_id, expect_rev=expect_rev)

    def drop_proposal(self, proposal_id: int) -> Proposal:
        """Forget an open proposal."""
        from memkeeper.ops.proposals import drop

        return drop(self.workspace, proposal_id)

    def check(
        self,
        paths: Iterable[str] = (),
        *,
        staged: bool = False,
        push: Sequence[Pushed] | None = None,
        remote: str | None = None,
        full: bool = False,
    ) -> dict[str, Any]:
        """Validate managed files against the policy; committing (``staged``) or pushing, also
        other identities' claims (``ops.checking``). ``Failed`` lists the violations."""
        from memkeeper.ops.checking import check_here

        return check_here(self.workspace, paths, staged=staged, push=push, remote=remote, full=full)

    def verify(self, *, full: bool = False) -> dict[str, Any]:
        """The chain and the files against the index (``full``: every event and every file)."""
        from memkeeper.ops.verify import verify

        return verify(self.workspace, full=full)

"""``Memory.claims``: claims and their records, the Python API's sub-façade over
``ops.claims`` and ``ops.claimlife`` (docs/reference.md §9). Calling it — ``mem.claims()`` —
still lists the live claims, as it always has."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from memkeeper.claims.decisions import Claim, Mode
    from memkeeper.claims.lifecycle import ClaimRecord
    from memkeeper.ops.claimlife import ClaimLife
    from memkeeper.ops.workspace import Workspace


class Claims:
    """The claims of the identity a ``Memory`` acts as, and every claim's record."""

    def __init__(self, workspace: Workspace) -> None:
        self._ws = workspace

    def __call__(self) -> list[Claim]:
        """The live claims of every agent, oldest grant first."""
        from memkeeper.ops.claimviews import live

        return live(self._ws)[0]

    def take(
        self,
        targets: str | Iterable[str],
        *,
        mode: Mode = "write",
        ttl: float | None = None,
        wait: float | None = None,
        objective: str = "",
        branch: str = "",
        worktree: str = "",
        base: str = "",
        memory: Iterable[str] = (),
        tests: Iterable[str] = (),
    ) -> Claim:
        """Take a claim announcing its plan (``base`` defaults to the worktree's ``HEAD``)."""
        from memkeeper.ops.claimlife import plan_of

        plan = plan_of(self._ws, branch, worktree, base, memory, tests)
        scope = [targets] if isinstance(targets, str) else list(targets)
        return self._life().claim(
            scope, mode=mode, ttl=ttl, priority=0, strict=False, wait=wait,
            objective=objective, plan=plan,
        )  # fmt: skip

    def record(self, id: str) -> ClaimRecord:
        return self._life().record(id)

    def records(self, states: Sequence[str] = ()) -> list[ClaimRecord]:
        """Every claim's record (those in ``states``), oldest first: ended ones too."""
        return self._life().records(states)

    def scope(
        self,
        id: str,
        add: Iterable[str] = (),
        remove: Iterable[str] = (),
        *,
        expect_rev: int | None = None,
        wait: float | None = None,
    ) -> ClaimRecord:
        """Change a live claim's targets; added ones are checked as a new request (``Busy``,
        or with ``wait`` queued for up to that many seconds)."""
        return self._life().scope(id, add, remove, expect_rev, wait)

    def complete(
        self, id: str, verify: Sequence[str] = (), *, evidence: str | None = None,
        expect_rev: int | None = None,
    ) -> ClaimRecord:  # fmt: skip
        """Complete with the evidence memkeeper gathers, after running each ``verify``
        command; ``evidence`` is the caller's own, kept as self-reported."""
        return self._life().complete(id, verify, evidence, expect_rev)

    def abandon(
        self, id: str, reason: str, *, expect_rev: int | None = None, message: str = ""
    ) -> ClaimRecord:
        """Give a claim up with ``reason``; ``message``: words for whoever takes it over
        (its takeover hands them to the taker as a ``handoff`` message)."""
        return self._life().abandon(id, reason, expect_rev, message)

    def suspend(self, id: str, *, expect_rev: int | None = None) -> ClaimRecord:
        return self._life().suspend(id, expect_rev)

    def resume(self, id: str, *, expect_rev: int | None = None) -> Claim:
        return self._life().resume(id, None, expect_rev)

    def takeover(
        self, id: str, *, ttl: float | None = None, expect_rev: int | None = None
    ) -> tuple[Claim, ClaimRecord]:
        """A new claim on an abandoned or expired claim's targets: (it, the predecessor)."""
        return self._life().takeover(id, ttl, expect_rev)

    def _life(self) -> ClaimLife:
        from memkeeper.ops.claimlife import ClaimLife

        return ClaimLife(self._ws)

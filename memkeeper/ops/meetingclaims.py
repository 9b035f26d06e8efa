"""A meeting's resolution applied to the claims (docs/reference.md §4.32): the one place a
meeting changes a claim. Everything happens in one claims transaction (``ClaimTable``'s:
expired claims swept first, the queue served after), with the meeting's own write, so the
claims never show a resolution half done.

The claim store calls it makes: ``put_claim`` (a claim narrowed to what it keeps: same id,
same fencing token, same expiry) with ``put_claim_record`` (its record rescoped, one rev
more), and through ``ClaimTable``'s own steps ``bump("request")`` with ``bump("token")`` and
``put_claim`` (a grant: ``_grant``) and ``drop_claim`` (a claim left with nothing: ``_drop``,
reason ``meeting``). Each leaves its event: ``claim.narrowed``, ``claim.granted``,
``claim.released``.
"""

from __future__ import annotations

from dataclasses import replace

from memkeeper.claims import decisions as claim_rules
from memkeeper.claims import lifecycle as life
from memkeeper.claims.wording import claim_data
from memkeeper.errors import Invalid
from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memkeeper.claims.decisions import Claim
    from memkeeper.meetings.effects import Effects
    from memkeeper.ops.claims import ClaimTable
    from memkeeper.ops.workspace import Workspace


def resolve_with(
    ws: Workspace,
    decide: Callable[[list[Claim]], tuple[int, Effects]],
    commit: Callable[[], None],
) -> None:
    """``decide`` (given the live claims: the meeting's id and what its resolution changes;
    ``Invalid`` before anything is written), then ``commit`` (the meeting's write), then the
    changes — all in one claims transaction."""
    from memkeeper.ops.claims import ClaimTable

    table = ClaimTable(ws)

    def once() -> None:
        with table.transaction() as now:
            meeting_id, fx = decide(list(table.held))
            asks = _checked(table, fx)
            commit()
            for n in fx.narrow:
                _narrow(table, n.claim_id, n.targets, meeting_id, now)
            for g in fx.grant:
                request = claim_rules.make_request(
                    f"c{table.store.bump('request')}", g.agent, g.targets, strict=g.strict,
                    ttl=table.default_ttl, objective=f"meeting {meeting_id}", arrival=0,
                )  # fmt: skip
                assert request.targets == asks.pop(0)
                table._grant(request, now)

    ws.again(once)


def _checked(table: ClaimTable, fx: Effects) -> list[tuple[str, ...]]:
    """The grants' targets, each checked against the claims as the narrowing leaves them: one
    a third agent's claim stands in the way of is ``Invalid`` before anything is written."""
    after = {n.claim_id: n.targets for n in fx.narrow}
    held = [replace(c, targets=after.get(c.id, c.targets)) for c in table.held]
    out = []
    for g in fx.grant:
        request = claim_rules.make_request(
            "check", g.agent, g.targets, strict=g.strict, ttl=table.default_ttl, arrival=0
        )
        stopping = claim_rules.blockers([c for c in held if c.targets], request)
        if stopping:
            raise Invalid(
                f"{', '.join(g.targets)} for {g.agent} is under "
                f"{'; '.join(claim_rules.describe(c, 0.0) for c in stopping)} — resolve "
                "once it is released, or bring its holder into a meeting"
            )
        out.append(request.targets)
    return out


def _narrow(table: ClaimTable, claim_id: str, targets: tuple[str, ...], m: int, now: float) -> None:
    claim = table._held(claim_id)
    if claim is None:
        return
    if not targets:
        table._drop(claim, now, "meeting")
        return
    narrowed = replace(claim, targets=targets)
    table.store.put_claim(narrowed)
    table.held = [narrowed if c.id == claim_id else c for c in table.held]
    # a scope change of the claim's record, one rev more: its holder's --expect-rev goes stale
    record = life.rescope(table.record_of(claim), targets, claim.token, at=iso_utc(now))
    table.store.put_claim_record(record)
    data = {**claim_data(narrowed), "rev": record.rev, "previous_targets": list(claim.targets)}
    data["meeting"] = m
    table.ws.record("claim.narrowed", None, None, data, claim.agent)
    table.changed = table.freed = True

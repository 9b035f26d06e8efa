"""The rules of work items (docs/reference.md §4.33), pure: what a new item may be, when one is
ready (every ``after`` item done), the order ready items are handed out in (priority, then
age), which one ``work next`` takes given the live claims (the claims' own overlap rules:
``claims.decisions.grantable``), and each change of state.

An item's claim covers its paths; an item without paths is claimed on ``WORK_TARGET`` of its
id, a path under the memory home nobody writes, so it still has a claim, a fencing token and
a record like any other.
"""

from __future__ import annotations

from dataclasses import replace

from memkeeper import limits
from memkeeper.claims import decisions as claim_rules
from memkeeper.claims.targets import normalize_target
from memkeeper.errors import Invalid, Refused
from memkeeper.work.items import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from memkeeper.claims.decisions import Claim, Request
    from memkeeper.work.items import State

WORK_TARGET = ".memkeeper/work/{id}"
MAX_AFTER = 256
MAX_REASON_CHARS = 4096


def added(
    id: int,
    title: str,
    by: str,
    now: float,
    *,
    paths: Sequence[str] = (),
    priority: int = 0,
    after: Sequence[int] = (),
    body: str = "",
    known: Mapping[int, Item],
) -> Item:
    """A new open item, or ``Invalid`` saying what is wrong (nothing is stored then)."""
    title = title.strip()
    if not title:
        raise Invalid("a work item needs a title — say what is to be done: work add 'Fix X'")
    limits.text(title, "the title", limit=limits.MAX_OBJECTIVE_CHARS)
    limits.text(body, "the body", limit=limits.MAX_BODY_BYTES)
    limits.whole(priority, "the priority", signed=True)
    if len(paths) > limits.MAX_TARGETS:
        raise Invalid(f"{len(paths):,} paths; at most {limits.MAX_TARGETS} — name a directory")
    norm = tuple(dict.fromkeys(normalize_target(p) for p in paths))
    deps = tuple(dict.fromkeys(after))
    if len(deps) > MAX_AFTER:
        raise Invalid(f"{len(deps):,} --after items; at most {MAX_AFTER}")
    for dep in deps:
        if dep not in known:
            raise Invalid(
                f"--after {dep}: no work item {dep} — list them with: memkeeper work list",
                reason="unknown_item",
            )
    item = Item(id, 1, title, "open", by, now, norm, priority, deps, body)
    check_acyclic({**known, id: item})
    return item


def check_acyclic(items: Mapping[int, Item]) -> None:
    """``Invalid`` naming a cycle of ``after`` dependencies, if there is one (an item on a
    cycle could never be ready)."""
    state: dict[int, int] = {}  # 1: on the path being walked, 2: done
    for start in sorted(items):
        stack: list[tuple[int, list[int]]] = [(start, list(items[start].after))]
        if start in state:
            continue
        state[start] = 1
        while stack:
            node, todo = stack[-1]
            if not todo:
                state[node] = 2
                stack.pop()
                continue
            dep = todo.pop()
            if state.get(dep) == 1:
                cycle = [n for n, _ in stack][[n for n, _ in stack].index(dep) :]
                shown = " → ".join(str(n) for n in [*cycle, dep])
                raise Invalid(
                    f"work items {shown} wait on each other — drop one --after",
                    reason="cycle",
                )
            if dep in items and dep not in state:
                state[dep] = 1
                stack.append((dep, list(items[dep].after)))


def targets(item: Item) -> tuple[str, ...]:
    """What the item's claim covers."""
    return item.paths or (WORK_TARGET.format(id=item.id),)


def ready(item: Item, by_id: Mapping[int, Item]) -> bool:
    """Open, and every item it waits on done. ``by_id`` holds at least every item not done
    (the operations read no more): an item it lacks is done (ids are checked at ``added``)."""
    if item.state != "open":
        return False
    return all(by_id[dep].state == "done" for dep in item.after if dep in by_id)


def in_order(items: Iterable[Item]) -> list[Item]:
    """Highest priority first, then oldest (then lowest id)."""
    return sorted(items, key=lambda i: (-i.priority, i.created_at, i.id))


def ready_list(items: Iterable[Item]) -> list[Item]:
    """The ready items, in the order ``work next`` hands them out."""
    listed = list(items)
    by_id = {i.id: i for i in listed}
    return in_order(i for i in listed if ready(i, by_id))


def request_for(item: Item, agent: str, ttl: float, arrival: int) -> Request:
    """The claim ``work next`` asks for on ``item``'s behalf: its targets, its title."""
    return claim_rules.make_request(
        f"c{arrival}", agent, targets(item), ttl=ttl, objective=item.title, arrival=arrival,
        priority=item.priority,
    )  # fmt: skip


def pick(
    items: Iterable[Item],
    live: tuple[Claim, ...],
    queued: tuple[Request, ...],
    agent: str,
    ttl: float,
    arrival: int,
) -> tuple[Item, Request] | None:
    """The first ready item whose claim could be granted now, with that claim's request."""
    for item in ready_list(items):
        request = request_for(item, agent, ttl, arrival)
        if claim_rules.grantable(live, queued, request):
            return item, request
    return None


def stale(items: Iterable[Item], live_ids: Iterable[str]) -> list[Item]:
    """Claimed items whose claim is no longer live."""
    alive = set(live_ids)
    return [i for i in items if i.state == "claimed" and i.claim not in alive]


# -- changes of state (each raises ``rev``) ------------------------------------------------------


def claimed(item: Item, claim: Claim) -> Item:
    return replace(
        item, rev=item.rev + 1, state="claimed", claim=claim.id, agent=claim.agent,
        claimed_at=claim.granted_at, reason="",
    )  # fmt: skip


def returned(item: Item, reason: str) -> Item:
    """Back to the pool; ``claim`` and ``agent`` keep naming the claim that ended."""
    return replace(item, rev=item.rev + 1, state="open", reason=reason, returns=item.returns + 1)


def ended(item: Item, to: State, now: float, reason: str = "") -> Item:
    return replace(item, rev=item.rev + 1, state=to, ended_at=now, reason=reason)


def reason_text(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise Invalid("--reason needs text: say why the item failed")
    return limits.text(reason, "the reason", limit=MAX_REASON_CHARS)


def check_holder(item: Item, agent: str, claim_id: str | None, verb: str) -> str:
    """The id of the live claim through which ``agent`` may ``verb`` ``item`` (its fencing:
    only the holder of the item's current claim may), else the error a claim that is no
    longer one's own gets: ``Refused`` (``not_holder``, exit 4) when another holds or ended
    the item, ``Invalid`` (the ended claim's reason, exit 2) when one's own claim ended."""
    theirs = item.agent is not None and item.agent != agent
    other_claim = claim_id is not None and item.claim != claim_id
    if item.state == "claimed" and not theirs and not other_claim:
        assert item.claim is not None
        return item.claim
    yours = f"your claim {claim_id}" if claim_id else "your claim"
    if item.state == "claimed" or (item.state in ("done", "failed") and (theirs or other_claim)):
        how = "claimed" if item.state == "claimed" else item.state
        raise Refused(
            f"work item {item.id} is {how} by {item.agent} (claim {item.claim}), not by "
            f"{agent}{' through ' + claim_id if claim_id else ''} — only the holder of its live "
            f"claim may {verb} it ({yours}, if you had one, ended); take other work: "
            "memkeeper work next",
            reason="not_holder",
        )
    if item.state in ("done", "failed"):
        raise Invalid(
            f"work item {item.id} is already {item.state} (claim {item.claim}) — nothing to {verb}",
            reason=item.state,
        )
    raise Invalid(
        f"work item {item.id} is open: its claim {item.claim or '(none)'} ended"
        f"{' (' + item.reason + ')' if item.reason else ''} and it went back to the pool — "
        "take it again with: memkeeper work next",
        reason="expired" if item.reason == "expired" else "returned",
    )

"""The rules of work items: what a new item may be (a title, paths a claim could take,
dependencies that exist and form no cycle); readiness (every dependency done); the order
items are handed out in (priority, then age); which one ``work next`` takes given the live
claims — never one whose paths overlap another agent's live claim; and who may end one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memkeeper.claims import decisions as claim_rules
from memkeeper.errors import Invalid, Refused
from memkeeper.work import rules
from memkeeper.work.items import Item

NOW = 1_700_000_000.0


def item(id: int, *, after: tuple[int, ...] = (), state: str = "open", **kw: object) -> Item:
    base = Item(id, 1, f"item {id}", "open", "a", NOW + id, after=after)
    return replace(base, state=state, **kw)  # type: ignore[arg-type]


def claim(id: str, agent: str, *targets: str) -> claim_rules.Claim:
    request = claim_rules.make_request(id, agent, targets, ttl=60, arrival=1)
    return claim_rules.grant(request, 1, NOW, 3600)


def test_a_new_item_is_open_with_normalized_paths_and_known_dependencies() -> None:
    known = {1: item(1)}
    new = rules.added(
        0, "  Fix the build ", "w1", NOW, paths=["./src//a.py", "src/a.py"], priority=3,
        after=[1, 1], known=known,
    )  # fmt: skip
    assert (new.title, new.state, new.paths, new.after, new.priority) == (
        "Fix the build", "open", ("src/a.py",), (1,), 3,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("title", "paths", "after", "match"),
    [
        (" ", (), (), "needs a title"),
        ("t", ("/etc/passwd",), (), "is absolute"),
        ("t", ("../up",), (), "climbs out"),
        ("t", (), (7,), "no work item 7"),
        ("t\x00", (), (), "NUL"),
    ],
)
def test_bad_input_is_refused_naming_what_to_fix(
    title: str, paths: tuple[str, ...], after: tuple[int, ...], match: str
) -> None:
    with pytest.raises(Invalid, match=match):
        rules.added(0, title, "w1", NOW, paths=paths, after=after, known={1: item(1)})


def test_a_dependency_cycle_is_named() -> None:
    known = {1: item(1, after=(3,)), 2: item(2, after=(1,)), 3: item(3, after=(2,))}
    with pytest.raises(Invalid, match="wait on each other") as cycle:
        rules.check_acyclic(known)
    assert cycle.value.reason == "cycle"


@given(st.lists(st.lists(st.integers(0, 30), max_size=4), min_size=1, max_size=30))
def test_dependencies_on_earlier_items_never_form_a_cycle_and_a_back_edge_always_does(
    deps: list[list[int]],
) -> None:
    dag = {
        i + 1: item(i + 1, after=tuple(d % (i + 1) for d in ds if d % (i + 1)))
        for i, ds in enumerate(deps)
    }
    rules.check_acyclic(dag)  # every edge points at a lower id
    chain = [n for n in dag if dag[n].after]
    if chain:
        top = chain[-1]
        low = dag[top].after[0]
        looped = {**dag, low: replace(dag[low], after=(*dag[low].after, top))}
        with pytest.raises(Invalid, match="wait on each other"):
            rules.check_acyclic(looped)


def test_ready_means_open_with_every_dependency_done_and_order_is_priority_then_age() -> None:
    items = [
        item(1, state="done"),
        item(2, after=(1,)),
        item(3, after=(4,)),
        item(4, state="failed"),
        item(5, priority=9),
        item(6, state="claimed"),
    ]
    assert [i.id for i in rules.ready_list(items)] == [5, 2]


claims_st = st.lists(
    st.tuples(st.sampled_from(["w1", "w2", "w3"]), st.sampled_from(["a/", "a/x.py", "b.py", "c/"])),
    max_size=4,
)
items_st = st.lists(
    st.tuples(st.integers(-2, 2), st.lists(st.sampled_from(["a/x.py", "b.py", "c/d", "e"]))),
    min_size=1,
    max_size=8,
)


@given(claims_st, items_st)
def test_next_takes_the_first_ready_item_no_other_agents_live_claim_overlaps(
    held: list[tuple[str, str]], specs: list[tuple[int, list[str]]]
) -> None:
    live = tuple(claim(f"c{n}", agent, target) for n, (agent, target) in enumerate(held))
    items = [replace(item(n + 1), priority=p, paths=tuple(ps)) for n, (p, ps) in enumerate(specs)]
    found = rules.pick(items, live, (), "me", 60, 99)
    fits = [
        i for i in rules.ready_list(items)
        if not claim_rules.blockers(live, rules.request_for(i, "me", 60, 99))
    ]  # fmt: skip
    assert (found[0] if found else None) == (fits[0] if fits else None)
    if found is not None:
        granted = claim_rules.grant(found[1], 2, NOW, 3600)
        assert not any(claim_rules.conflicts(granted, c) for c in live if c.agent != "me")
        assert found[1].objective == found[0].title


def test_an_item_without_paths_is_claimed_on_its_own_target() -> None:
    assert rules.targets(item(4)) == (".memkeeper/work/4",)


def test_a_claimed_item_whose_claim_is_gone_is_stale() -> None:
    items = [item(1, state="claimed", claim="c1"), item(2, state="claimed", claim="c2")]
    assert [i.id for i in rules.stale(items, ["c2"])] == [1]


def test_only_the_holder_of_the_items_live_claim_may_end_it() -> None:
    mine = item(1, state="claimed", claim="c5", agent="w1")
    assert rules.check_holder(mine, "w1", None, "complete") == "c5"
    assert rules.check_holder(mine, "w1", "c5", "complete") == "c5"
    with pytest.raises(Refused, match="claimed by w1 \\(claim c5\\), not by w2") as theirs:
        rules.check_holder(mine, "w2", None, "complete")
    assert theirs.value.reason == "not_holder"
    with pytest.raises(Refused, match="through c3"):
        rules.check_holder(mine, "w1", "c3", "complete")
    back = rules.returned(mine, "expired")
    with pytest.raises(Invalid, match="went back to the pool") as ended:
        rules.check_holder(back, "w1", "c5", "complete")
    assert (ended.value.reason, ended.value.exit_code) == ("expired", 2)
    done = rules.ended(replace(mine, claim="c9", agent="w2"), "done", NOW)
    with pytest.raises(Refused, match="done by w2"):
        rules.check_holder(done, "w1", "c5", "complete")
    with pytest.raises(Invalid, match="already done"):
        rules.check_holder(done, "w2", None, "complete")


class Queue(RuleBasedStateMachine):
    """Workers take, finish and lose items by the rules alone: no two agents' claimed items
    ever overlap, no item is claimed before every item it comes after is done, and what is
    taken is always the first ready item that fits."""

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[int, Item] = {}
        self.live: dict[str, claim_rules.Claim] = {}
        self.tokens = 0

    @rule(
        paths=st.lists(st.sampled_from(["a/", "a/x.py", "b/", "c.md", "c.md#k"]), max_size=2),
        priority=st.integers(0, 3),
        deps=st.lists(st.integers(1, 30), max_size=2),
    )
    def add(self, paths: list[str], priority: int, deps: list[int]) -> None:
        new_id = len(self.items) + 1
        after = [d for d in deps if d in self.items]
        added = rules.added(
            new_id, f"t{new_id}", "p", NOW + new_id, paths=paths, priority=priority,
            after=after, known=self.items,
        )  # fmt: skip
        self.items[new_id] = added

    @rule(agent=st.sampled_from(["w1", "w2", "w3"]))
    def take(self, agent: str) -> None:
        found = rules.pick(self.items.values(), tuple(self.live.values()), (), agent, 60, 9)
        if found is None:
            return
        item, request = found
        self.tokens += 1
        claim = claim_rules.grant(replace(request, id=f"c{self.tokens}"), self.tokens, NOW, 3600)
        self.live[claim.id] = claim
        self.items[item.id] = rules.claimed(item, claim)

    @rule(data=st.data(), done=st.booleans())
    def end(self, data: st.DataObject, done: bool) -> None:
        """The holder finishes its item (``done``), or its claim expires (the item stays
        claimed until the next settle)."""
        held = [i for i in self.items.values() if i.state == "claimed" and i.claim in self.live]
        if not held:
            return
        item = data.draw(st.sampled_from(held))
        assert item.claim is not None
        del self.live[item.claim]
        self.items[item.id] = rules.ended(item, "done", NOW) if done else item

    @rule()
    def settle(self) -> None:
        for item in rules.stale(self.items.values(), self.live):
            self.items[item.id] = rules.returned(item, "expired")

    @invariant()
    def no_two_agents_claimed_items_overlap(self) -> None:
        claims = list(self.live.values())
        assert not [(a.id, b.id) for a in claims for b in claims if claim_rules.conflicts(a, b)]

    @invariant()
    def a_claimed_item_came_after_done_items_only(self) -> None:
        for item in self.items.values():
            if item.state in ("claimed", "done"):
                assert all(self.items[d].state == "done" for d in item.after)


Queue.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_the_queue_keeps_its_invariants = Queue.TestCase

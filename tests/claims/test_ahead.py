"""``Ahead``: whether any request ahead in a queue conflicts with one, looked up per group of
requests asking the same — always the answer of checking each request ahead in turn."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.claims.ahead import Ahead
from memkeeper.claims.decisions import Request, conflicts, make_request

TARGETS = ["src/", "src/a.py", "docs/", "CLAUDE.md#build", "CLAUDE.md", "**/*.py", "docs/x.md"]

requests = st.builds(
    lambda n, agent, mode, targets: make_request(
        f"c{n}", agent, targets, mode=mode, ttl=5.0, arrival=n
    ),
    st.integers(1, 10_000),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["read", "write"]),
    st.lists(st.sampled_from(TARGETS), min_size=1, max_size=2, unique=True),
)


@given(st.lists(requests, max_size=12), requests)
def test_ahead_blocks_exactly_when_some_request_ahead_conflicts(
    queue: list[Request], request: Request
) -> None:
    ahead = Ahead()
    for place, asked in enumerate(queue):
        assert ahead.blocks(asked) == any(conflicts(w, asked) for w in queue[:place])
        ahead.add(asked)
    assert ahead.blocks(request) == any(conflicts(w, request) for w in queue)


def test_a_queue_for_one_path_is_one_group_and_its_own_agent_never_blocks() -> None:
    ahead = Ahead()
    mine = make_request("c1", "a", ["src/a.py"], mode="write", ttl=5.0, arrival=1)
    ahead.add(mine)
    assert not ahead.blocks(make_request("c2", "a", ["src/a.py"], mode="write", ttl=5.0, arrival=2))
    assert ahead.blocks(make_request("c3", "b", ["src/"], mode="read", ttl=5.0, arrival=3))
    reader = Ahead()
    reader.add(make_request("c4", "a", ["src/"], mode="read", ttl=5.0, arrival=4))
    assert not reader.blocks(make_request("c5", "b", ["src/a.py"], mode="read", ttl=5.0, arrival=5))

"""A meeting's record survives the stores' JSON whole, and reads out as the CLI shows it."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.meetings import rules
from memkeeper.meetings.records import Plan, decode, encode

A, B = "claude-code:s1", "codex:t2"
NOW = 1_700_000_000.0
names = st.text("abcdefgh-:", min_size=1, max_size=8)


def test_a_meeting_reads_out_with_iso_times_and_its_proposals() -> None:
    m = rules.opened(3, A, [B], ["CLAUDE.md"], NOW, deadline_s=60)
    m = rules.propose(m, B, Plan("handoff", (), A, "yours"), NOW + 1)
    out = m.to_json()
    assert out["deadline"] == "2023-11-14T22:14:20.000Z"
    assert out["proposals"] == [
        {"n": 1, "by": B, "at": "2023-11-14T22:13:21.000Z", "kind": "handoff", "note": "yours",
         "who": A, "accepted_by": [B]}
    ]  # fmt: skip
    assert out["state"] == "open"
    assert out["rev"] == 2


@given(
    st.lists(st.tuples(names, st.lists(names, max_size=3)), max_size=3),
    st.none() | names,
    st.text(max_size=20),
)
def test_every_record_round_trips(
    assign: list[tuple[str, list[str]]], who: str | None, note: str
) -> None:
    plan = Plan("split", tuple((a, tuple(t)) for a, t in assign), who, note)
    m = rules.opened(1, A, [B], ["docs/"], NOW)
    m = replace(rules.propose(m, A, plan, NOW), owners=("@o",), joint=("c1",))
    m = replace(m, resolution=plan, resolved_by="human", resolved_at=NOW + 5)
    assert decode(encode(m)) == m
    assert decode(encode(m).encode()) == m

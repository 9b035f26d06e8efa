"""The "changed since you read it" rules: a read already held is not written again, who changed
a section between two revs is read from its events, and the notice names the revs and who —
and is not given for a change the reader made itself."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.coordination import StaleRead
from memkeeper.mail import reads
from memkeeper.records import Event

READER = "claude-code:s1"
revs = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 9))


def event(rev: int, actor: str) -> Event:
    return Event(rev, "ts", actor, "section.patched", "CLAUDE.md", "build", {"rev": rev}, "", "")


@given(revs, revs)
def test_only_reads_newer_than_those_held_are_written(
    held: dict[str, int], read: dict[str, int]
) -> None:
    fresh = reads.to_record(held, read)
    assert set(fresh) <= set(read)
    for key, rev in read.items():
        assert (key in fresh) == (rev > held.get(key, 0))
    assert reads.to_record({**held, **fresh}, read) == {}  # once written, never again


def test_a_read_again_at_the_same_rev_writes_nothing() -> None:
    assert reads.to_record({"build": 4}, {"build": 4}) == {}
    assert reads.to_record({"build": 4}, {"build": 6, "testing": 1}) == {"build": 6, "testing": 1}


def test_who_changed_it_is_read_from_the_events_between_the_revs() -> None:
    newest_first = [event(7, "human"), event(6, "codex:t"), event(5, READER), event(4, "x")]
    assert reads.changers(newest_first, 4, 6) == [READER, "codex:t"]
    assert reads.changers(newest_first, 4, 7) == [READER, "codex:t", "human"]
    assert reads.changers([event(5, "codex:t"), event(6, "codex:t")], 4, 6) == ["codex:t"]


def test_the_notice_names_the_revs_and_who() -> None:
    stale = StaleRead("CLAUDE.md", "build", 4, 4, 6, True)
    assert reads.changed(stale, ["codex:xyz"], READER) == (
        "CLAUDE.md#build changed since you read it (rev 4 → 6) by codex:xyz: read it again "
        "before you change it (memkeeper read CLAUDE.md#build)"
    )
    said = reads.changed(stale, [READER, "external"], READER)
    assert said is not None
    assert "by an edit outside memkeeper:" in said
    assert reads.changed(stale, [], READER) is not None  # who is unknown: still told
    gone = reads.changed(stale._replace(present=False), ["human"], READER)
    assert gone == "CLAUDE.md#build was removed since you read it (rev 4 → 6) by human"


def test_no_notice_of_a_change_the_reader_made_itself() -> None:
    assert reads.changed(StaleRead("CLAUDE.md", "build", 4, 4, 5, True), [READER], READER) is None

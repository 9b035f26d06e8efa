"""What a region shows of the log: its event queries, as its source resolves; which events a
query matches; and (differential, over random logs and templates) that a render from each
query's newest matches alone is the render from the whole log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.events import make_event
from memkeeper.regions.markers import parse
from memkeeper.regions.render import Context, compile_region
from memkeeper.regions.shown import (
    DEFAULT_EVENT_LIMIT,
    event_matches,
    event_queries,
    shown_limit,
    under,
)
from memkeeper.regions.templates import Query

if TYPE_CHECKING:
    from memkeeper.records import Event
    from memkeeper.regions.markers import Region

FEED = "{{ events | types=entry.appended | limit=2 }} and {{ claims | count }} {{ events }}"


def region(marker: str) -> Region:
    data = f"<!-- memkeeper:generated {marker} -->\n<!-- memkeeper:end -->\n".encode()
    (found,) = parse(data, "s.md")
    return found


def test_an_events_region_has_its_own_query_and_other_sources_none() -> None:
    (query,) = event_queries(region("source=events types=a,b path=m/ limit=3"), {})
    assert query == Query("events", types=("a", "b"), path="m/", limit=3)
    for source in ("claims", "work", "reconciliations", "howto"):
        assert event_queries(region(f"source={source}"), {}) == ()
    assert event_queries(region("source=nowhere"), {}) == ()


def test_a_template_region_has_each_of_its_event_substitutions() -> None:
    found = event_queries(region("source=feed"), {"feed": FEED})
    assert found == (Query("events", types=("entry.appended",), limit=2), Query("events"))
    assert [shown_limit(q) for q in found] == [2, DEFAULT_EVENT_LIMIT]
    # a built-in source wins over a template of its name, as when it is rendered; howto does not
    assert event_queries(region("source=claims"), {"claims": FEED}) == ()
    assert len(event_queries(region("source=howto"), {"howto": FEED})) == 2


def test_a_query_matches_its_types_actor_and_path_but_never_a_regen() -> None:
    at = "2026-11-29T10:00:00.000Z"
    event = make_event(None, at, "a", "entry.appended", "m/d.md", None, {})
    assert event_matches(Query("events"), event)
    assert event_matches(Query("events", types=("entry.appended",), actor="a", path="m"), event)
    assert not event_matches(Query("events", types=("section.patched",)), event)
    assert not event_matches(Query("events", actor="b"), event)
    assert not event_matches(Query("events", path="m/d"), event)
    regen = make_event(None, at, "a", "region.regenerated", "s.md", None, {})
    assert not event_matches(Query("events"), regen)
    assert not event_matches(Query("events", types=("region.regenerated",)), regen)
    assert (under(None, None), under(None, "m"), under("m", "m/"), under("mm", "m")) == (
        True,
        False,
        True,
        False,
    )


TYPES = ("entry.appended", "section.patched", "claim.granted", "region.regenerated")
PATHS = (None, "m/d.md", "m/sub/n.md", "x.md")
QUERIES = st.builds(
    lambda types, actor, path, limit: " | ".join(
        ["events"]
        + ([f"types={','.join(types)}"] if types else [])
        + ([f"actor={actor}"] if actor else [])
        + ([f"path={path}"] if path else [])
        + ([f"limit={limit}"] if limit else [])
    ),
    st.lists(st.sampled_from(TYPES), max_size=2, unique=True),
    st.sampled_from((None, "a", "b")),
    st.sampled_from((None, "m", "m/sub/", "x.md")),
    st.sampled_from((None, 1, 3)),
)
LOGS = st.lists(
    st.tuples(st.sampled_from(("a", "b")), st.sampled_from(TYPES), st.sampled_from(PATHS)),
    max_size=40,
)


def log(specs: list[tuple[str, str, str | None]]) -> tuple[Event, ...]:
    out: list[Event] = []
    for number, (actor, type_, path) in enumerate(specs):
        ts = f"2026-11-29T10:{number // 60:02d}:{number % 60:02d}.000Z"
        data = {"n": number}
        out.append(make_event(out[-1] if out else None, ts, actor, type_, path, None, data))
    return tuple(out)


@settings(max_examples=200, deadline=None)
@given(LOGS, st.lists(QUERIES, min_size=1, max_size=3))
def test_a_render_from_each_query_s_newest_matches_is_the_render_from_the_whole_log(
    specs: list[tuple[str, str, str | None]], substitutions: list[str]
) -> None:
    templates = {"t": " / ".join("{{ " + s + " }}" for s in substitutions)}
    shown = region("source=t")
    whole = log(specs)
    read: dict[int, Event] = {}
    for query in event_queries(shown, templates):
        newest = [e for e in reversed(whole) if event_matches(query, e)][: shown_limit(query)]
        read.update((e.id, e) for e in newest)
    renderer = compile_region(shown, templates, "s.md")
    union = tuple(read[i] for i in sorted(read))
    assert renderer(Context(union)) == renderer(Context(whole))

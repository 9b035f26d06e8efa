"""Rendering regions: policy templates, built-in sources, and what never gets rendered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.events import make_event
from memkeeper.markdown.hiddentext import hidden_characters
from memkeeper.records import ClaimView, Reconciliation
from memkeeper.regions.markers import looks_like_marker, parse
from memkeeper.regions.render import Context, clean, compile_region

if TYPE_CHECKING:
    from memkeeper.records import Event


def events(*specs: tuple[str, str, str | None, dict[str, Any]]) -> tuple[Event, ...]:
    out: list[Event] = []
    for number, (actor, type_, path, data) in enumerate(specs):
        ts = f"2026-11-29T10:00:{number:02d}.000Z"
        out.append(make_event(out[-1] if out else None, ts, actor, type_, path, None, data))
    return tuple(out)


def render(marker: str, context: Context, templates: dict[str, str] | None = None) -> str:
    data = f"<!-- memkeeper:generated {marker} -->\n<!-- memkeeper:end -->\n".encode()
    (region,) = parse(data, "s.md")
    return compile_region(region, templates or {}, "s.md")(context)


LOG = events(
    ("agent-a", "section.patched", "CLAUDE.md", {"rev": 2}),
    ("agent-b", "entry.appended", "memory/decisions.md", {"title": "Use etcd"}),
    ("human", "region.regenerated", "memory/status.md", {"regions": ["events"]}),
    ("agent-a", "claim.granted", None, {"targets": ["src/api/"]}),
)
CLAIM = ClaimView(
    "c1", 7, "agent-b", "write", ("src/api/", "CLAUDE.md#build"), strict=True, expires_at=1.8e9
)


# -- built-in sources -----------------------------------------------------------------------


def test_events_show_the_newest_first_and_never_a_regen() -> None:
    text = render("source=events", Context(events=LOG))
    assert text.splitlines() == [
        "- 2026-11-29 10:00:03Z agent-a claim.granted src/api/",
        "- 2026-11-29 10:00:01Z agent-b entry.appended memory/decisions.md: Use etcd",
        "- 2026-11-29 10:00:00Z agent-a section.patched CLAUDE.md (rev 2)",
    ]


def test_events_filter_by_type_and_limit() -> None:
    text = render("source=events types=section.patched,claim.granted limit=1", Context(LOG))
    assert text == "- 2026-11-29 10:00:03Z agent-a claim.granted src/api/\n"


def test_claims_render_as_a_table_with_absolute_expiry() -> None:
    text = render("source=claims", Context(claims=(CLAIM,)))
    assert text.splitlines() == [
        "| agent | mode | targets | expires (UTC) |",
        "| --- | --- | --- | --- |",
        "| agent-b | write (strict) | src/api/, CLAUDE.md#build | 2027-01-15 08:00:00Z |",
    ]


def test_empty_sources_say_so() -> None:
    assert render("source=claims", Context()) == "_No live claims._\n"
    assert render("source=events", Context()) == "_No events yet._\n"
    assert render("source=reconciliations", Context()) == "_No open reconciliations._\n"


def test_reconciliations_point_at_the_command_that_shows_them() -> None:
    opened = ("agent-a", "2026-11-29T10:00:00.000Z")
    rec = Reconciliation(3, "memory/status.md", "claims", "", "", *opened, None, None, None)
    text = render("source=reconciliations", Context(reconciliations=(rec,)))
    assert "#3 memory/status.md region claims" in text
    assert "memkeeper reconcile show 3" in text


def test_a_policy_template_renders_with_filters() -> None:
    templates = {
        "decisions": "Recent:\n"
        '{{ events | types=entry.appended | each="* {data.title} ({actor})" }}\n'
        "{{ claims | count }} claim(s), {{ claims | actor=nobody | empty=none }}.\n"
    }
    text = render("source=decisions", Context(LOG, (CLAIM,)), templates)
    assert text == "Recent:\n* Use etcd (agent-b)\n1 claim(s), none.\n"


def test_rendering_is_deterministic() -> None:
    context = Context(LOG, (CLAIM,))
    assert render("source=events", context) == render("source=events", context)


# -- refusals -------------------------------------------------------------------------------


def test_an_unknown_source_names_the_line_and_the_known_ones() -> None:
    with pytest.raises(Invalid) as caught:
        render("source=weather", Context(), {"team": "x"})
    assert caught.value.message.startswith("s.md:1: unknown source 'weather'")
    assert "claims, events, reconciliations, team" in caught.value.message


def test_a_bad_filter_on_a_marker_names_the_line() -> None:
    with pytest.raises(Invalid, match=r"s\.md:1: region 'events'.*bad limit 'many'"):
        render("source=events limit=many", Context())


def test_a_template_region_takes_no_arguments() -> None:
    with pytest.raises(Invalid, match="takes no arguments"):
        render("source=team limit=3", Context(), {"team": "x"})


def test_a_template_that_renders_a_marker_is_refused() -> None:
    with pytest.raises(Invalid, match="renders a memkeeper marker"):
        render("source=bad", Context(), {"bad": "<!-- memkeeper:end -->\n"})


PIECES = [*"<>!-`~|\n\r\t ", "<!--", "-->", "memkeeper:end", "\u202e", "\u200b"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(title=HOSTILE, actor=HOSTILE)
def test_no_event_text_can_break_out_of_a_region(title: str, actor: str) -> None:
    log = events((actor, "entry.appended", "x.md", {"title": title}))
    text = render("source=events", Context(log))
    assert not any(looks_like_marker(line.encode()) for line in text.splitlines())
    assert hidden_characters(text) == []
    assert len(text.splitlines()) == 1
    templated = render("source=t", Context(log), {"t": '{{ events | each="{actor}{data.title}" }}'})
    assert len(templated.splitlines()) == 1


def test_clean_flattens_escapes_and_truncates() -> None:
    assert clean("a\nb\tc") == "a b c"
    assert clean("<!-- x -->") == "&lt;!-- x -->"
    assert clean("```") == "\\`\\`\\`"
    assert clean({"b": 1, "a": [True]}) == '{"a": [true], "b": 1}'
    assert clean(None) == ""
    assert len(clean("x" * 500)) == 200

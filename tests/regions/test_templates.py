"""The template language of generated regions: what a template parses into, and its mistakes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.regions.templates import (
    FIELDS,
    MAX_LIMIT,
    SOURCES,
    Part,
    Query,
    TemplateError,
    parse_format,
    parse_template,
    query_from,
)


def test_a_template_is_literal_text_and_substitutions() -> None:
    parts = parse_template("Hi {{ events | types=a,b | limit=3 }} and {{claims|count}}.\n")
    assert parts == (
        "Hi ",
        Query("events", types=("a", "b"), limit=3),
        " and ",
        Query("claims", count=True),
        ".\n",
    )


def test_each_takes_fields_data_keys_and_escaped_braces() -> None:
    assert parse_format("- {actor} {data.title} {{x}}", "events") == (
        "- ",
        ("actor",),
        " ",
        ("data", "title"),
        " ",
        "{",
        "x",
        "}",
    )


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        ("{{ events ", "never closed"),
        ("ok\n{{ nope }}", "template line 2: unknown source 'nope'"),
        ("{{ events | limit=0 }}", "bad limit '0'"),
        ("{{ events | limit=x }}", "bad limit 'x'"),
        ('{{ events | each="{__class__}" }}', "unknown field {__class__}"),
        ('{{ claims | each="{data.x}" }}', "unknown field {data.x}"),
        ('{{ events | each="{" }}', "lone '{'"),
        ("{{ events | | }}", "cannot read"),
        ("{{ claims | types=a }}", "unknown filter 'types' for claims"),
        ("{{ events | each }}", "needs a value"),
        ("{{ events | frobnicate=1 }}", "unknown filter 'frobnicate'"),
    ],
)
def test_template_mistakes_say_what_and_where(template: str, needle: str) -> None:
    with pytest.raises(TemplateError, match=needle.replace("{", r"\{").replace("|", r"\|")):
        parse_template(template)


def test_a_template_cannot_reach_attributes_or_code() -> None:
    for evil in ("{{ events.__class__ }}", "{{ __import__('os') }}", '{{ events | each="{0}" }}'):
        with pytest.raises(TemplateError):
            parse_template(evil)


# --- literal text and substitutions ----------------------------------------------------------


def test_text_without_substitutions_is_one_literal_part() -> None:
    assert parse_template("Plain {text} with } and { braces.\n") == (
        "Plain {text} with } and { braces.\n",
    )
    assert parse_template("") == ()


def test_adjacent_substitutions_leave_no_empty_literal_between_them() -> None:
    assert parse_template("{{claims|count}}{{events|count}}") == (
        Query("claims", count=True),
        Query("events", count=True),
    )


def test_whitespace_inside_a_substitution_is_free() -> None:
    assert parse_template("{{events|limit=2}}") == parse_template("{{\n  events |\tlimit=2\n}}")


def test_a_mistake_names_the_line_its_substitution_opens_on() -> None:
    with pytest.raises(TemplateError, match=r"^template line 3: unknown source 'nope'"):
        parse_template("one\ntwo {{ claims }}\nthree {{ nope }}\n")


def test_a_source_takes_no_value() -> None:
    with pytest.raises(TemplateError, match="unknown source 'events'"):
        parse_template("{{ events=all }}")


def test_a_substitution_without_a_source_cannot_be_read() -> None:
    with pytest.raises(TemplateError, match="cannot read 'nothing'"):
        parse_template("{{ }}")


# --- filters -----------------------------------------------------------------------------------


def test_types_drops_empty_names_and_type_is_its_alias() -> None:
    assert parse_template("{{ events | types=a,,b, }}") == (Query("events", types=("a", "b")),)
    assert parse_template("{{ events | type=a }}") == (Query("events", types=("a",)),)


@pytest.mark.parametrize(("value", "limit"), [("1", 1), (str(MAX_LIMIT), MAX_LIMIT), ("007", 7)])
def test_a_limit_is_a_whole_number_within_bounds(value: str, limit: int) -> None:
    assert parse_template(f"{{{{ events | limit={value} }}}}") == (Query("events", limit=limit),)


@pytest.mark.parametrize("value", ["0", str(MAX_LIMIT + 1), "-1", "+5", "1.5", '"3 "'])
def test_a_limit_out_of_bounds_says_which_numbers_are_allowed(value: str) -> None:
    with pytest.raises(TemplateError, match=f"give a whole number from 1 to {MAX_LIMIT}"):
        parse_template(f"{{{{ events | limit={value} }}}}")


def test_quoted_values_take_backslash_escapes() -> None:
    (query,) = parse_template(r'{{ claims | empty="say \"none\"\nnow \\ \t" }}')
    assert isinstance(query, Query)
    assert query.empty == 'say "none"\nnow \\ \\t'  # \t is not an escape: kept as written


def test_a_quoted_value_may_hold_pipes_equals_and_closing_braces() -> None:
    (query,) = parse_template('{{ events | empty="a | b = }} c" }}')
    assert query == Query("events", empty="a | b = }} c")


def test_a_quoted_value_may_not_span_lines() -> None:
    with pytest.raises(TemplateError):
        parse_template('{{ events | empty="a\nb" }}')


def test_a_later_filter_of_the_same_name_wins() -> None:
    assert parse_template("{{ events | limit=3 | limit=5 }}") == (Query("events", limit=5),)


def test_actor_and_path_apply_to_every_source() -> None:
    for source in SOURCES:
        (query,) = parse_template(f"{{{{ {source} | actor=agent-a | path=memory/ }}}}")
        assert query == Query(source, actor="agent-a", path="memory/")


def test_count_takes_no_value() -> None:
    with pytest.raises(TemplateError, match="unknown filter 'count'"):
        parse_template("{{ claims | count=yes }}")


def test_an_unknown_filter_lists_the_known_ones() -> None:
    with pytest.raises(TemplateError) as caught:
        parse_template("{{ claims | sort=id }}")
    assert str(caught.value) == (
        "template line 1: unknown filter 'sort' for claims"
        " — use types, actor, path, limit, each, empty, count"
    )


def test_a_markers_arguments_make_the_same_query_as_a_template() -> None:
    items: list[tuple[str, str | None]] = [("events", None), ("types", "a"), ("limit", "2")]
    assert query_from(items) == Query("events", types=("a",), limit=2)
    assert (query_from(items),) == parse_template("{{ events | types=a | limit=2 }}")


def test_a_markers_unknown_source_lists_the_sources() -> None:
    with pytest.raises(TemplateError, match="use one of claims, events, reconciliations"):
        query_from([("weather", None)])


# --- each= formats -----------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_every_listed_field_of_a_source_can_be_shown(source: str) -> None:
    for field in FIELDS[source]:
        assert parse_format(f"{{ {field} }}", source) == ((field,),)


def test_only_events_have_data_keys_and_the_hint_says_so() -> None:
    assert parse_format("{data.a.b}", "events") == (("data", "a", "b"),)
    with pytest.raises(TemplateError, match=r"use id, ts, .*, where, data\.KEY$"):
        parse_format("{data}", "events")
    with pytest.raises(TemplateError, match=r"use id, path, region, opened_by, opened_at$"):
        parse_format("{data.x}", "reconciliations")


@pytest.mark.parametrize("bad", ["{data.}", "{data..x}", "{}", "{ }", "{actor.name}"])
def test_a_field_path_must_name_real_parts(bad: str) -> None:
    with pytest.raises(TemplateError, match="unknown field"):
        parse_format(bad, "events")


def test_a_lone_closing_brace_says_how_to_write_one() -> None:
    with pytest.raises(TemplateError, match=r"lone '\}' in each= — write \}\} for a brace"):
        parse_format("a } b", "claims")


def test_a_format_of_plain_text_is_one_part() -> None:
    assert parse_format("- entry", "events") == ("- entry",)
    assert parse_format("", "events") == ()


def test_each_in_a_template_parses_its_format_for_that_source() -> None:
    (query,) = parse_template('{{ claims | each="{agent}: {targets}" }}')
    assert query == Query("claims", each=(("agent",), ": ", ("targets",)))
    with pytest.raises(TemplateError, match=r"unknown field \{actor\} for claims"):
        parse_template('{{ claims | each="{actor}" }}')


# --- round trips -------------------------------------------------------------------------------

T = TypeVar("T")
words = st.text(alphabet="abcxyz-", min_size=1, max_size=6)
quotable = st.text(alphabet='ab |=}{\\"\n\t', max_size=8)
literals = st.text(alphabet='ab .:|="}\n-', min_size=1, max_size=10)


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@st.composite
def queries(draw: st.DrawFn) -> Query:
    source = draw(st.sampled_from(SOURCES))
    query = Query(source, count=draw(st.booleans()))
    if source == "events" and draw(st.booleans()):
        query = replace(query, types=tuple(draw(st.lists(words, min_size=1, max_size=3))))
    if draw(st.booleans()):
        query = replace(query, actor=draw(words))
    if draw(st.booleans()):
        query = replace(query, limit=draw(st.integers(min_value=1, max_value=MAX_LIMIT)))
    if draw(st.booleans()):
        query = replace(query, empty=draw(quotable))
    if draw(st.booleans()):
        fields = st.sampled_from(FIELDS[source]).map(lambda name: (name,))
        pieces = draw(st.lists(st.one_of(fields, words), min_size=1, max_size=4))
        each = tuple(_merged(pieces))
        query = replace(query, each=each)
    return query


def _merged(pieces: Sequence[T]) -> list[T]:
    """Adjacent literal pieces as the parser returns them: one string."""
    out: list[T] = []
    for piece in pieces:
        last = out[-1] if out else None
        if isinstance(piece, str) and isinstance(last, str):
            out[-1] = cast("T", last + piece)
        else:
            out.append(piece)
    return out


def written(query: Query) -> str:
    """A query in template syntax."""
    filters = [query.source]
    if query.types:
        filters.append("types=" + ",".join(query.types))
    if query.actor is not None:
        filters.append(f"actor={query.actor}")
    if query.limit is not None:
        filters.append(f"limit={query.limit}")
    if query.empty is not None:
        filters.append(f"empty={quote(query.empty)}")
    if query.each is not None:
        shown = "".join(p if isinstance(p, str) else "{" + ".".join(p) + "}" for p in query.each)
        filters.append(f"each={quote(shown)}")
    if query.count:
        filters.append("count")
    return "{{ " + " | ".join(filters) + " }}"


@given(st.lists(st.one_of(literals, queries()), max_size=5))
def test_a_written_template_parses_back_to_its_parts(parts: list[Part]) -> None:
    expected = tuple(_merged(parts))
    text = "".join(part if isinstance(part, str) else written(part) for part in expected)
    assert parse_template(text) == expected


Token = tuple[str, str | tuple[str, ...]]  # ("text", s), ("brace", "{"), ("field", path)
tokens = st.one_of(
    st.text(alphabet="ab -:.|", min_size=1, max_size=5).map(lambda s: ("text", s)),
    st.sampled_from([("brace", "{"), ("brace", "}")]),
    st.sampled_from(FIELDS["events"]).map(lambda name: ("field", (name,))),
    words.map(lambda key: ("field", ("data", key))),
)


def format_text(token: Token) -> str:
    kind, value = token
    if kind == "field":
        return "{" + ".".join(value) + "}"
    assert isinstance(value, str)
    return value * 2 if kind == "brace" else value


@given(st.lists(tokens, max_size=6))
def test_a_written_format_parses_back_to_its_text_braces_and_fields(
    written_tokens: list[Token],
) -> None:
    expected: list[str | tuple[str, ...]] = []
    for (kind, value), before in zip(written_tokens, [None, *written_tokens], strict=False):
        if kind == "text" and before is not None and before[0] == "text":
            expected[-1] = str(expected[-1]) + str(value)  # plain text runs together
        else:
            expected.append(value)
    text = "".join(format_text(token) for token in written_tokens)
    assert parse_format(text, "events") == tuple(expected)

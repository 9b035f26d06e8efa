"""Rendering regions: policy templates, built-in sources, and what never gets rendered."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.coordination import ClaimView, Reconciliation
from memkeeper.errors import Invalid
from memkeeper.events import make_event
from memkeeper.markdown.hiddentext import hidden_characters
from memkeeper.ops.regen import rule_views
from memkeeper.policy.loader import parse_policy
from memkeeper.regions.markers import looks_like_marker, parse
from memkeeper.regions.render import Context, RuleView, clean, code, compile_region, howto
from memkeeper.work.items import Item

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


def test_a_claim_the_watchdog_marked_idle_says_since_when() -> None:
    idle = CLAIM._replace(idle_since="2026-11-29T13:27:07.120Z")
    row = render("source=claims", Context(claims=(idle, CLAIM))).splitlines()[2:]
    assert row[0].startswith("| agent-b (idle since 13:27) | write (strict) |")
    assert row[1].startswith("| agent-b | write (strict) |")
    each = {"t": '{{ claims | each="{id}:{idle}." }}'}
    assert render("source=t", Context(claims=(idle, CLAIM)), each) == "c1:13:27.\nc1:.\n"


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


WORK = (
    Item(1, 3, "Fix the build", "done", "planner", 1.8e9, ("src/",)),
    Item(2, 2, "Test it", "claimed", "planner", 1.8e9, ("tests/",), claim="c4", agent="w1"),
    Item(3, 1, "Docs", "open", "planner", 1.8e9 + 1, ("docs/",), after=(1,)),
    Item(4, 1, "Urgent | now", "open", "planner", 1.8e9 + 2, priority=5),
    Item(5, 1, "Later", "open", "planner", 1.8e9, after=(2,)),
)


def test_work_shows_who_works_on_what_then_the_ready_list_in_order() -> None:
    text = render("source=work", Context(work=WORK))
    assert text.splitlines() == [
        "| # | title | paths | priority | who |",
        "| --- | --- | --- | --- | --- |",
        "| 2 | Test it | tests/ | 0 | w1 |",
        "| 4 | Urgent \\| now |  | 5 | ready |",
        "| 3 | Docs | docs/ | 0 | ready |",
    ]
    assert render("source=work path=docs", Context(work=WORK)).count("| ready |") == 1
    mine = {"mine": '{{ work | actor=w1 | each="{id}:{who}" }}'}
    assert render("source=mine", Context(work=WORK), mine) == "2:w1\n"
    assert render("source=work", Context()) == "_No work ready or in progress._\n"


def test_rendering_is_deterministic() -> None:
    context = Context(LOG, (CLAIM,))
    assert render("source=events", context) == render("source=events", context)


# -- refusals -------------------------------------------------------------------------------


def test_an_unknown_source_names_the_line_and_the_known_ones() -> None:
    with pytest.raises(Invalid) as caught:
        render("source=weather", Context(), {"team": "x"})
    assert caught.value.message.startswith("s.md:1: unknown source 'weather'")
    assert "claims, events, howto, reconciliations, work, team" in caught.value.message


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


# -- howto: how to change each memory file ----------------------------------------------------

SAMPLE_RULES = (
    RuleView("/CLAUDE.md", "section-owned", sections=(("release-process", ("human",), True),)),
    RuleView("memory/decisions.md", "append-only", entry_template="## {date}\n\n{text}\n"),
    RuleView("memory/risks.md", "append-only"),
    RuleView("memory/status.md", "generated", strict=True),
    RuleView("memory/scratch/**", "private"),
    RuleView("memory/**", "section-owned"),
)
ROW = re.compile(r"\| (`+) ?(.*?) ?\1 \| ([a-z-]+) \| (.*) \|")


def rows(text: str) -> list[tuple[str, str, str]]:
    """The table's rows as (glob, class, notes), the glob's code span and cell escapes undone."""
    found = [ROW.fullmatch(line) for line in text.splitlines() if line.startswith("| `")]
    return [(m[2].replace("\\|", "|"), m[3], m[4].strip()) for m in found if m is not None]


def test_howto_lists_every_rule_in_policy_order_with_its_class_and_notes() -> None:
    text = render("source=howto", Context(rules=SAMPLE_RULES))
    owned = "`release-process`: only human may change it, claims are strict"
    assert rows(text) == [
        ("/CLAUDE.md", "section-owned", owned),
        (
            "memory/decisions.md",
            "append-only",
            "give only the entry's text: memkeeper adds its heading",
        ),
        ("memory/risks.md", "append-only", "each entry brings its own heading"),
        ("memory/status.md", "generated", "claims on it are strict (others' writes are refused)"),
        ("memory/scratch/**", "private", ""),
        ("memory/**", "section-owned", ""),
    ]
    assert "(the first pattern that matches wins)" in text


def test_howto_spells_each_change_for_the_cli_and_for_mcp() -> None:
    text = render("source=howto", Context(rules=SAMPLE_RULES))
    for spelling in (
        "`memkeeper read PATH#KEY --json`",
        "`memkeeper patch PATH#KEY --expect-rev N --body-file -`",
        '`memkeeper append PATH --text "…"`',
        "`memkeeper claim PATH#KEY --ttl 300`",
        "`memkeeper release ID`",
        "`memory_read(ref)`",
        "`memory_patch(ref, body, expect_rev)`",
        "`memory_append(path, text)`",
        "`memory_claim(targets, ttl)`",
        "`memory_release(id)`",
        "`status: conflict`",
        "`current`",
    ):
        assert spelling in text


def server_tools() -> dict[str, set[str]]:
    """The MCP tools ``memkeeper mcp`` registers with their arguments, read from its source
    (the SDK is an optional extra)."""
    source = Path(__file__).resolve().parents[2] / "memkeeper" / "mcpserver" / "server.py"
    nodes = ast.walk(ast.parse(source.read_text()))
    found = [n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return {f.name: {a.arg for a in f.args.args} for f in found if f.name.startswith("memory_")}


def test_howto_names_only_mcp_tools_and_arguments_the_server_has() -> None:
    text = render("source=howto", Context(rules=SAMPLE_RULES))
    tools = server_tools()
    named = re.findall(r"`(memory_\w+)\(([^)]*)\)`", text)
    assert {name for name, _ in named} >= {"memory_read", "memory_patch", "memory_append"}
    for name, args in named:
        assert name in tools
        assert {a.strip() for a in args.split(",") if a.strip()} <= tools[name], name


def test_howto_explains_only_the_classes_the_policy_uses() -> None:
    text = render("source=howto", Context(rules=(RuleView("notes/**", "append-only"),)))
    assert "**append-only**" in text
    assert "**section-owned**" not in text
    assert "**generated**" not in text
    assert "memkeeper claim" in text
    private = render("source=howto", Context(rules=(RuleView("tmp/**", "private"),)))
    assert "memkeeper claim" not in private  # nothing there to coordinate


def test_howto_of_a_policy_that_manages_nothing_says_so() -> None:
    assert render("source=howto", Context()) == (
        "_No memory files are managed: `.memkeeper.yaml` names none._\n"
    )


def test_howto_shows_a_glob_given_twice_once_with_the_rule_that_matches() -> None:
    rules = (RuleView("a.md", "private"), RuleView("a.md", "section-owned"))
    assert [(glob, kind) for glob, kind, _ in rows(howto(rules))] == [("a.md", "private")]


def test_howto_names_the_owners_of_a_section_or_says_nobody() -> None:
    sections = (("x", (), False), ("y", ("h", "a"), False), ("z", None, False))
    (row,) = rows(howto((RuleView("a.md", "section-owned", sections=sections),)))
    assert row[2] == "`x`: nobody may change it; `y`: only h, a may change it"


def test_howto_is_deterministic_and_ignores_events_and_claims() -> None:
    plain = render("source=howto", Context(rules=SAMPLE_RULES))
    busy = render("source=howto", Context(LOG, (CLAIM,), (), SAMPLE_RULES))
    assert plain == busy == render("source=howto", Context(rules=SAMPLE_RULES))


def test_howto_takes_no_filters_but_an_id() -> None:
    with pytest.raises(Invalid, match=r"s\.md:1: region 'howto'.*howto takes no arguments"):
        render("source=howto limit=3", Context())
    assert render("id=guide source=howto", Context()).startswith("_No memory files")


def test_a_policy_template_named_howto_takes_its_place() -> None:
    templates = {"howto": "Ask Ann.\n"}
    assert render("source=howto", Context(rules=SAMPLE_RULES), templates) == "Ask Ann.\n"


def test_code_spans_hold_backticks_and_table_cells_hold_pipes() -> None:
    assert code("a.md") == "`a.md`"
    assert code("a`b") == "``a`b``"
    assert code("`a") == "`` `a ``"
    (row,) = rows(howto((RuleView("x|y.md", "private"),)))
    assert row[0] == "x|y.md"


@settings(max_examples=200, deadline=None)
@given(globs=st.lists(HOSTILE, min_size=1, max_size=5))
def test_no_policy_text_can_break_out_of_the_howto_region(globs: list[str]) -> None:
    rules = tuple(RuleView(g, "section-owned", sections=((g, (g,), True),)) for g in globs)
    text = howto(rules)
    assert not any(looks_like_marker(line.encode()) for line in text.splitlines())
    assert hidden_characters(text) == []
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 2 + len(dict.fromkeys(globs))  # the header, its rule, a row per glob


SEGMENT = st.text(alphabet="abcxyz019_-.*", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)
GLOB = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "/"]),
    st.lists(SEGMENT, min_size=1, max_size=3),
)
CLASS = st.sampled_from(["section-owned", "append-only", "generated", "private"])


@settings(max_examples=100, deadline=None)
@given(rules=st.lists(st.tuples(GLOB, CLASS), min_size=1, max_size=8))
def test_every_rule_of_a_policy_appears_once_with_its_class(rules: list[tuple[str, str]]) -> None:
    yaml = "version: 1\nfiles:\n" + "".join(
        f"  - path: '{glob}'\n    class: {kind}\n" for glob, kind in rules
    )
    policy = parse_policy(yaml.encode(), "p.yaml")
    text = render("source=howto", Context(rules=rule_views(policy)))
    first = dict(reversed(rules))  # a glob given twice: its first rule is the one that matches
    shown = rows(text)
    assert [glob for glob, _, _ in shown] == list(dict.fromkeys(glob for glob, _ in rules))
    assert {glob: kind for glob, kind, _ in shown} == first
    for kind in set(first.values()):
        assert sum(line.startswith(f"- **{kind}**") for line in text.splitlines()) == 1

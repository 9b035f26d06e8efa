"""Fuzzing with hostile Markdown: sections, patches, generated regions and ``check``.

The documents come from a grammar of the inputs that break Markdown tools: unclosed fences
and HTML blocks, containers nested 500 deep, setext underlines that may or may not make a
heading, CR/LF/CRLF mixes, NUL bytes and invalid UTF-8, entities and escapes that name lone
surrogates (``&#xD800;``, ``\\ud800``), hidden characters, 1 MB lines and files holding
thousands of headings. Every property runs twice: with the CI budget (1,000 examples, part
of the default run) and with the slow budget (10,000 examples)::

    .venv/bin/python -m pytest -m slow tests/test_fuzz.py

The outcome is always either a result or one of the contract's errors (``Invalid``,
``Refused``, ``Failed``): never a crash, and round trips are exact to the byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memkeeper import Invalid, Memory, Refused
from memkeeper.coordination import ClaimView, Reconciliation
from memkeeper.errors import Failed
from memkeeper.events import make_event
from memkeeper.fs.git import Git
from memkeeper.markdown.patchrules import body_is_inert, splice, structure_problem
from memkeeper.markdown.sections import Document, join, split
from memkeeper.ops.check import RULES, check, judge
from memkeeper.regions.markers import fill, parse, patch_problem
from memkeeper.regions.render import Context, compile_region
from memkeeper.regions.templates import TemplateError, parse_template

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.markdown.patchrules import Splice
    from memkeeper.records import Event

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
CI = settings(max_examples=1_000, deadline=None, suppress_health_check=_HEALTH)
SLOW = settings(CI, max_examples=10_000)
BUDGETS = pytest.mark.parametrize(
    "budget",
    [pytest.param(CI, id="ci"), pytest.param(SLOW, id="slow", marks=pytest.mark.slow)],
)

# -- the hostile grammar ----------------------------------------------------------------------
# A document is a list of units (tuples of lines, str or raw bytes) joined with random line
# endings. Pools are precomputed so that a unit costs hypothesis one or two choices.

MB = 1 << 20
TITLES = ["Build", "Testing", "", "日本語", "*em* [l](u)", "&#xD800;", "&#55296;", "\\ud800"]
TITLES += ["&#0;", "&#x110000;", "&#xDFFF;&#xD83D;", "`co de`", "a\u202eb", "x\u200by", "#"]
ATX = [f"{pad}{'#' * n} {t}{tail}" for pad in ("", " ", "   ") for n in (1, 2, 3, 6, 7)
       for t in TITLES for tail in ("", " #", "#")]  # fmt: skip
SETEXT = ["===", "---", "  ---", "=", "- - -", "***", "___", "-", "====  ", "--- x"]
PARAGRAPH = [*TITLES, "plain text", "#nospace", "    # indented code", "\t# tab code"]
PARAGRAPH += ["[ref]: /url", "[ref]:", "\\# escaped", "a\x0cb", "\u2028", "\x85", "\x1c"]
FENCES = ["```", "~~~", "````", "```py", "   ```", "    ```", "~~~ md", "``` x ```", "`````"]
HTML = ["<div>", "</div>", "<!--", "-->", "<!-- c -->", "<pre>", "</pre>", "<details>"]
HTML += ["<script>", "</script>", "<?php", "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<x y"]
CONTAINERS = ["- ", "* ", "1. ", "2) ", "> ", ">", "> > ", "- > ", "> - ", "1. > - ", "  "]
NESTED = [c + line for c in CONTAINERS for line in [*ATX[::37], *FENCES[:3], *SETEXT[:3], "x"]]
MARKERS = ["<!-- memkeeper:section id=s -->", "<!-- memkeeper:section id=a/b -->"]
MARKERS += ["<!-- memkeeper:section id=bad id -->", " <!-- memkeeper:section id=s --> "]
TABLES = ["| # | a |", "|---|---|", "| # h | ## h |", "# | x |", "| --- |"]
HIDDEN = ["\u202e evil", "zero\u200bwidth", "tag\U000e0041", "\ufeff", "\u2066x\u2069"]
BLANK = ["", " ", "\t", "    "]
COMMON = [*ATX, *ATX, *SETEXT, *PARAGRAPH, *NESTED, *MARKERS, *TABLES, *HIDDEN, *BLANK]
SWALLOWING = [*FENCES, *HTML]
CLOSED = [
    (opening, *inside, closing)
    for opening, closing in [("```", "```"), ("~~~~", "~~~~"), ("<div>", ""), ("<!--", "-->")]
    for inside in [(), ("# in",), ("Title", "---"), ("> # q",)]
]
POISON: list[tuple[str | bytes, ...]] = [
    ("nul\x00here",),
    ("# \x00",),
    (b"\xff\xfe",),
    (b"caf\xe9",),
    (b"\xed\xa0\x80",),  # a surrogate encoded in UTF-8 (CESU): not valid UTF-8
    (b"# \xc3",),
]
HUGE: list[tuple[str | bytes, ...]] = [
    ("x" * MB,),
    ("# " + "y" * MB,),
    ("`" * MB,),
    ("<" * MB,),
    ("-" * MB,),
    ("|" * MB,),
    ("> " * 500 + "# deep",),
    ("- " * 500 + "# deep",),
    ("1. " * 500 + "deep",),
    tuple("  " * level + "- item" for level in range(500)),
    tuple(">" * level + " # q" for level in range(1, 501)),
    tuple(f"{'#' * (1 + n % 6)} {('a', 'b', 'a/b', '')[n % 4]}" for n in range(3000)),
    tuple(f"| # {n} | x |" if n % 2 else f"# {n % 7}" for n in range(3000)),
    tuple(["t"] + ["===", "---"] * 1500),
]
NEWLINES = ["\n", "\r\n", "\r"]


def _pool(lines: Sequence[str]) -> st.SearchStrategy[tuple[str | bytes, ...]]:
    return st.sampled_from([(line,) for line in lines])


common_unit = st.one_of(_pool(COMMON), st.sampled_from(CLOSED))
risky_unit = st.one_of(common_unit, _pool(SWALLOWING))


def rarely(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (hypothesis favours the ends of a range)."""
    return draw(st.integers(0, one_in - 1)) == one_in // 2


@st.composite
def hostile_markdown(draw: st.DrawFn, *, valid: bool = False) -> bytes:
    """A document from the hostile grammar; ``valid``: never NUL or invalid UTF-8."""
    unit = risky_unit if draw(st.booleans()) else common_unit
    units = draw(st.lists(unit, max_size=24))
    if rarely(draw, 50):
        units.insert(draw(st.integers(0, len(units))), draw(st.sampled_from(HUGE)))
    if not valid and rarely(draw, 12):
        units.insert(draw(st.integers(0, len(units))), draw(st.sampled_from(POISON)))
    lines = [line if isinstance(line, bytes) else line.encode() for u in units for line in u]
    ends = [draw(st.sampled_from(NEWLINES)).encode() for _ in lines]
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()) and lines:
        data = data.removesuffix(ends[-1])
    if rarely(draw, 4):
        data = b"---\ntitle: x\n---\n" + data
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


any_bytes = st.one_of(hostile_markdown(), st.binary(max_size=64))
BODY_LINES = [*ATX[::40], *SETEXT[:4], *PARAGRAPH, *NESTED[::9], *MARKERS, *TABLES, *HIDDEN]
BODY_LINES += [*BLANK, *BLANK, *SWALLOWING[::2], "plain", "- item", "> quote", "1. step"]
BODY_LINES += ["<!-- memkeeper:generated source=claims -->", "<!-- memkeeper:end -->"]


@st.composite
def hostile_body(draw: st.DrawFn) -> bytes:
    """A section body: hostile lines in mixed endings, now and then NUL or invalid UTF-8."""
    lines = draw(st.lists(st.sampled_from(BODY_LINES), max_size=6))
    text = "".join(line + draw(st.sampled_from(NEWLINES)) for line in lines)
    data = (text if draw(st.booleans()) else text.rstrip("\r\n")).encode()
    if rarely(draw, 20):
        data += draw(st.sampled_from([b"\x00", b"\xff", b"\xed\xa0\x80"]))
    return data


def is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def sections_cover(doc: Document) -> None:
    """The sections tile the data in order, with unique keys and consistent lines."""
    data, sections = doc.data, doc.sections
    assert join(doc) == data
    assert [s.start for s in sections[1:]] == [s.end for s in sections[:-1]]
    assert (sections[0].start, sections[-1].end) == (0, len(data)) if data else sections == ()
    assert len({s.key for s in sections}) == len(sections)
    for s in sections:
        assert s.start <= s.body_start <= s.end
        assert s.start < s.end
        assert s.start_line <= s.end_line


# -- sections ---------------------------------------------------------------------------------


@BUDGETS
def test_split_gives_back_every_byte_or_refuses_what_is_not_text(budget: settings) -> None:
    @budget
    @given(any_bytes)
    def split_then_join(data: bytes) -> None:
        if not is_text(data):
            with pytest.raises(Invalid, match=r"^f\.md:\d+: (NUL|invalid UTF-8)"):
                split(data, "f.md")
            return
        sections_cover(split(data, "f.md"))

    split_then_join()


# -- patches, pure and through Memory --------------------------------------------------------


def _splice(doc: Document, key: str, body: bytes) -> Splice:
    target = doc.get(key)
    assert target is not None
    heading, old = doc.heading(target), doc.body(target)
    return splice(doc.data, target.start, heading, old, body, target.level > 0)


def _following(doc: Document, key: str) -> bytes | None:
    keys = [s.key for s in doc.sections]
    after = keys.index(key) + 1
    return doc.heading(doc.sections[after]) if after < len(keys) else None


@BUDGETS
def test_a_splice_touches_only_its_section_and_any_structure_change_is_explained(
    budget: settings,
) -> None:
    @budget
    @given(hostile_markdown(valid=True), st.integers(min_value=0), hostile_body())
    def splice_one(data: bytes, pick: int, body: bytes) -> None:
        doc = split(data)
        if not doc.sections or not is_text(body):
            return
        target = doc.sections[pick % len(doc.sections)]
        cut = _splice(doc, target.key, body)
        assert cut.data[: target.start] == data[: target.start]
        assert cut.data[cut.body_end :] == data[target.end :]
        assert cut.data[cut.body_start : cut.body_end] == cut.body
        new = split(cut.data)
        sections_cover(new)
        problem = structure_problem(doc, new, target.key, cut.body_start, cut.body_end)
        inert = body_is_inert(doc.body(target), cut.body, doc.heading(target),
                              _following(doc, target.key))  # fmt: skip
        assert problem is None or not inert, "the fast path would skip a needed re-parse"
        if problem is None:
            assert [s.key for s in new.sections] == [s.key for s in doc.sections]
            patched = new.get(target.key)
            assert patched is not None
            assert new.text(patched) == cut.heading + cut.body

    splice_one()


POLICY = """version: 1
files:
  - path: owned.md
    class: section-owned
  - path: gen.md
    class: generated
  - path: log.md
    class: append-only
  - path: secret.md
    class: private
"""


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / ".memkeeper.yaml").write_text(POLICY)
    return root


@pytest.fixture(scope="module")
def fuzz_memory(fuzz_root: Path) -> Iterator[Memory]:
    memory = Memory.open(fuzz_root, agent="fuzzer")
    yield memory
    memory.close()


def _patch_outcome(memory: Memory, rel: str, data: bytes, pick: int, body: bytes) -> None:
    """Write ``data`` as ``rel``, patch one section: the exact splice, or nothing changes."""
    path = memory.root / rel
    path.write_bytes(data)
    doc = split(data) if is_text(data) else None
    key = doc.sections[pick % len(doc.sections)].key if doc and doc.sections else "_preamble"
    try:
        rev = memory.read(f"{rel}#{key}").rev
        memory.patch(f"{rel}#{key}", body, expect_rev=rev)
    except (Invalid, Refused) as error:
        event(f"{rel}: {type(error).__name__} {error.reason}")
        assert path.read_bytes() == data
        _explain(error, doc, key, body, rel)
        return
    event(f"{rel}: patched")
    assert doc is not None
    assert is_text(body)
    cut = _splice(doc, key, body)
    assert path.read_bytes() == cut.data
    assert structure_problem(doc, split(cut.data), key, cut.body_start, cut.body_end) is None
    if rel == "gen.md":
        assert patch_problem(rel, data, cut.data) is None


def _explain(
    error: Invalid | Refused, doc: Document | None, key: str, body: bytes, rel: str
) -> None:
    """The refusal is one the pure rules predict."""
    if isinstance(error, Invalid):
        bad_markers = rel == "gen.md" and doc is not None and _markers_broken(doc.data)
        assert doc is None or not doc.sections or not is_text(body) or bad_markers, error
        return
    assert doc is not None
    cut = _splice(doc, key, body)
    if error.reason == "structure":
        problem = structure_problem(doc, split(cut.data), key, cut.body_start, cut.body_end)
        assert problem is not None
        assert problem in error.message
    else:
        assert (error.reason, rel) == ("class", "gen.md"), error
        assert patch_problem(rel, doc.data, cut.data) is not None


def _markers_broken(data: bytes) -> bool:
    try:
        parse(data, "gen.md")
    except Invalid:
        return True
    return False


@BUDGETS
def test_a_patch_through_memory_writes_exactly_the_splice_or_nothing(
    budget: settings, fuzz_memory: Memory
) -> None:
    @budget
    @given(
        st.sampled_from(["owned.md", "gen.md"]),
        st.one_of(hostile_markdown(), region_documents()),
        st.integers(min_value=0),
        hostile_body(),
    )
    def patch_one(rel: str, data: bytes, pick: int, body: bytes) -> None:
        _patch_outcome(fuzz_memory, rel, data, pick, body)

    patch_one()


# -- generated regions: markers, templates, rendering ----------------------------------------

START = "<!-- memkeeper:generated source={} -->"
END = "<!-- memkeeper:end -->"
BAD_MARKERS = [
    "<!-- memkeeper:generated -->",
    "<!-- memkeeper:generated source=bad!name -->",
    "<!-- memkeeper:generated source=claims source=events -->",
    "<!-- memkeeper:generated source=claims",
    "<!-- memkeeper:generated source=claims --> trailing",
    "text <!-- memkeeper:end -->",
    "<!-- memkeeper:end checksum=sha256:xyz -->",
    "<!-- memkeeper:end checksum=md5:00 -->",
    "<!--memkeeper:end-->",
    "<!-- memkeeper:endless -->",
    "<!-- memkeeper:generatedsource=claims -->",
    "<!-- memkeeper:generated source=claims id=../../etc -->",
    "<!-- memkeeper:generated source=events limit=lots -->",
    "<!-- memkeeper:end checksum=sha256:0123456789abcdef -->",
    "\t<!-- memkeeper:generated source=claims id=c9 -->  ",
    "<!-- memkeeper:generated source=claims x=\udcff -->",
]
REGION_SOURCES = ["claims", "events", "reconciliations", "feed", "events limit=3"]
REGION_SOURCES += ["events types=a,b", "claims actor=x", "events each={actor}", "weather"]


@st.composite
def region_documents(draw: st.DrawFn) -> bytes:
    """Manual text and regions (rendered or never rendered), now and then a broken marker."""
    lines: list[str] = []
    for number, source in enumerate(draw(st.lists(st.sampled_from(REGION_SOURCES), max_size=4))):
        named = f"{source} id=r{number}"
        inside = draw(st.lists(st.sampled_from(COMMON), max_size=3))
        lines += [*draw(st.lists(st.sampled_from(COMMON), max_size=3)), START.format(named)]
        lines += [*inside, END]
    if rarely(draw, 4):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(BAD_MARKERS)))
    ends = [draw(st.sampled_from(NEWLINES)) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    return text.encode("utf-8", "surrogateescape")


TEMPLATE_PIECES = ["{{", "}}", "{{ ", " }}", "events", "claims", "reconciliations", " | "]
TEMPLATE_PIECES += ["count", "limit=", "5", "0", "99999", "each=", '"', "{actor}", "{data.x}"]
TEMPLATE_PIECES += ["{__import__}", "{0.__class__}", "{actor!r}", "{ts:>10}", "{data.__dict__}"]
TEMPLATE_PIECES += ["{{__import__('os')}}", "{{ open }}", "\\", "\n", "types=", "a,b", "empty="]
TEMPLATE_PIECES += ["path=", "../x", "actor=", "<!-- memkeeper:end -->", "text", "{", "}", "="]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
hostile_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from([END, START.format("claims"), "a\nb", "\r", "```", "<b>", "\u202e", "|"]),
)


@st.composite
def contexts(draw: st.DrawFn) -> Context:
    """Events, claims and reconciliations whose every field is hostile text."""
    events: list[Event] = []
    for _ in range(draw(st.integers(0, 4))):
        data = draw(st.dictionaries(st.sampled_from(["title", "rev", "targets", "x"]), json_values))
        ts, actor, kind = draw(hostile_text), draw(hostile_text), draw(hostile_text)
        path, section = draw(st.none() | hostile_text), draw(st.none() | hostile_text)
        events.append(make_event(events[-1] if events else None, ts, actor, kind, path, section,
                                 data))  # fmt: skip
    claim = st.builds(
        ClaimView, hostile_text, st.integers(1, 10**6), hostile_text, hostile_text,
        st.lists(hostile_text, max_size=3).map(tuple), st.integers(-5, 5), st.booleans(),
        st.floats(0, 4e9), hostile_text,
    )  # fmt: skip
    claims = tuple(draw(st.lists(claim, max_size=3)))
    maybe = st.none() | hostile_text
    recs = st.builds(
        Reconciliation, st.integers(1, 99), hostile_text, hostile_text, hostile_text,
        hostile_text, hostile_text, hostile_text, maybe, maybe, maybe,
    )  # fmt: skip
    return Context(tuple(events), claims, tuple(draw(st.lists(recs, max_size=2))))


def _render(template: str, context: Context) -> str | None:
    """The text a region showing ``template`` gets, or None when memkeeper refuses it."""
    data = f"{START.format('feed')}\n{END}\n".encode()
    (region,) = parse(data, "gen.md")
    try:
        return compile_region(region, {"feed": template}, "gen.md")(context)
    except Invalid as error:
        refusal = error.message
    assert refusal.startswith("gen.md:1: "), refusal
    return None


def _names_its_line(error: Invalid, data: bytes) -> None:
    assert re.match(r"gen\.md:\d+: .+ — ", error.message), error.message
    assert 1 <= error.fields["line"] <= data.count(b"\n") + data.count(b"\r") + 1


@BUDGETS
def test_regions_parse_or_name_the_line_and_filling_them_round_trips(budget: settings) -> None:
    @budget
    @given(st.one_of(region_documents(), hostile_markdown()), st.lists(hostile_text, max_size=4))
    def parse_and_fill(data: bytes, texts: list[str]) -> None:
        try:
            found = parse(data, "gen.md")
        except Invalid as error:
            _names_its_line(error, data)
            return
        rendered = {r.id: texts[n % len(texts)] for n, r in enumerate(found) if texts}
        safe = {k: v for k, v in rendered.items() if END not in v and "memkeeper:gen" not in v}
        filled = fill(data, found, safe)
        again = parse(filled, "gen.md")
        assert [(r.id, r.source) for r in again] == [(r.id, r.source) for r in found]
        assert not any(r.edited(filled) for r in again if r.id in safe)
        assert fill(filled, again, safe) == filled
        assert filled[: found[0].text_start] == data[: found[0].text_start] if found else True

    parse_and_fill()


@BUDGETS
def test_templates_parse_render_and_fill_or_say_what_is_wrong(budget: settings) -> None:
    @budget
    @given(st.lists(st.sampled_from(TEMPLATE_PIECES), max_size=12).map("".join), contexts())
    def render_one(template: str, context: Context) -> None:
        problem = None
        try:
            parse_template(template)
        except TemplateError as error:
            problem = str(error)
        assert problem is None or problem.startswith("template line "), problem
        text = _render(template, context)
        if text is None:
            return
        data = f"{START.format('feed')}\n{END}\n".encode()
        filled = fill(data, parse(data, "gen.md"), {"feed": text})
        (region,) = parse(filled, "gen.md")
        assert not region.edited(filled)
        assert region.text(filled).decode() == text

    render_one()


# -- check --------------------------------------------------------------------------------------


def _not_a_repository(args: Sequence[str], cwd: Path) -> tuple[int, bytes]:
    return 128, b""


CHECKED = ("owned.md", "gen.md", "log.md", "secret.md")


@BUDGETS
def test_check_of_a_tree_of_hostile_files_returns_or_lists_violations(
    budget: settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("check")
    (root / ".memkeeper.yaml").write_text(POLICY)
    git = Git(root, run=_not_a_repository)

    @budget
    @given(st.lists(st.one_of(any_bytes, region_documents()), min_size=4, max_size=4),
           st.none() | any_bytes)  # fmt: skip
    def check_tree(contents: list[bytes], head: bytes | None) -> None:
        for rel, data in zip(CHECKED, contents, strict=True):
            (root / rel).write_bytes(data)
        try:
            payload: dict[str, Any] = check(root, git=git)
        except Failed as failure:
            payload = failure.to_json()
            assert payload["violations"]
        event("rules: " + ", ".join(sorted({v["rule"] for v in payload["violations"]})))
        _well_formed(payload["violations"], CHECKED)
        judged = [v.to_json() for v in judge("log.md", "append-only", contents[2], head, {})]
        _well_formed(judged, ["log.md"])

    check_tree()


def _well_formed(violations: Sequence[dict[str, Any]], paths: Sequence[str]) -> None:
    for item in violations:
        assert item["rule"] in RULES, item
        assert item["path"] in paths, item
        assert item["line"] is None or item["line"] >= 1, item
        assert item["message"], item
        assert item["fix"], item


def test_the_fuzz_budgets_are_the_promised_sizes() -> None:
    assert (CI.max_examples, SLOW.max_examples) == (1_000, 10_000)

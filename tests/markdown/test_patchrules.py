"""Patch rules as pure functions, and the properties that make patches safe.

- a patch changes only its section's bytes (through the real ``Memory.patch``);
- the fast path's guard is sound: whenever it skips the re-parse, a full parse agrees.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from diff_match_patch import diff_match_patch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memkeeper import Invalid, Memory, Refused
from memkeeper.markdown.patchrules import (
    Splice,
    apply_dmp,
    body_is_inert,
    keeps_structure,
    normalize_body,
    splice,
    structure_problem,
    text_bytes,
)
from memkeeper.markdown.sections import Document, split
from tests.strategies import body_texts, documents

PROPERTY = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_normalize_body_uses_the_files_line_endings() -> None:
    assert normalize_body(b"a\nb\r\nc\rd", b"\r\n", ends_file=False) == b"a\r\nb\r\nc\r\nd\r\n"


def test_a_body_that_ends_the_file_keeps_its_missing_final_newline() -> None:
    assert normalize_body(b"tail", b"\n", ends_file=True) == b"tail"
    assert normalize_body(b"tail", b"\n", ends_file=False) == b"tail\n"
    assert normalize_body(b"", b"\n", ends_file=False) == b""


@pytest.mark.parametrize(
    ("data", "line"),
    [(b"ok\n\xff\n", 2), (b"a\nb\nc\x00", 3)],
)
def test_text_bytes_names_the_line_of_bad_input(data: bytes, line: int) -> None:
    with pytest.raises(Invalid, match=f"body:{line}:"):
        text_bytes(data, "body")


def test_apply_dmp_applies_an_exact_patch() -> None:
    dmp = diff_match_patch()
    base = "one\ntwo\nthree\n" * 3
    new = base.replace("two", "2", 2)
    assert apply_dmp(base, dmp.patch_toText(dmp.patch_make(base, new)), "x") == new


@pytest.mark.parametrize(
    "payload",
    [
        "@@ -40,0 +40,5 @@\n+tail%0A\n",  # an insertion past the end of the body
        "@@ -5,0 +6,5 @@\n+tail%0A\n",  # just past it ("one\n" has 4 characters)
        "@@ -0,0 +0,5 @@\n+tail%0A\n",  # before its start
    ],
)
def test_apply_dmp_refuses_a_hunk_located_outside_the_body(payload: str) -> None:
    with pytest.raises(Invalid) as caught:
        apply_dmp("one\n", payload, "F.md#a")
    assert caught.value.reason == "patch_does_not_apply"
    assert "hunk 1" in caught.value.message
    assert "outside the current body (4 characters)" in caught.value.message


def test_apply_dmp_still_appends_at_the_very_end() -> None:
    assert apply_dmp("one\n", "@@ -4,0 +5,5 @@\n+tail%0A\n", "x") == "one\ntail\n"


def test_apply_dmp_never_applies_a_fuzzy_match() -> None:
    dmp = diff_match_patch()
    payload = dmp.patch_toText(dmp.patch_make("alpha beta gamma\n", "alpha BETA gamma\n"))
    # The library's own patch_apply would happily land this on the near-identical text.
    assert dmp.patch_apply(dmp.patch_fromText(payload), "alpha beta gimma\n")[1] == [True]
    with pytest.raises(Invalid) as caught:
        apply_dmp("alpha beta gimma\n", payload, "x")
    assert caught.value.reason == "patch_does_not_apply"


@pytest.mark.parametrize("payload", ["@@ garbage", "@@ -1,2 +1,2 @@\n?bad\n"])
def test_apply_dmp_refuses_a_malformed_payload(payload: str) -> None:
    with pytest.raises(Invalid) as caught:
        apply_dmp("text\n", payload, "x")
    assert caught.value.reason == "bad_patch"


@pytest.mark.parametrize(
    ("body", "inert"),
    [
        (b"- plain list\n- items\n\n", True),
        (b"text with `code` and *emphasis*\n\n", True),
        (b"# heading\n", False),
        (b"para\n---\n", False),
        (b"```\ncode\n```\n", False),
        (b"<div>\n", False),
        (b"[ref]: /url\n", False),
        (b"> quote <b>\n", True),
    ],
)
def test_body_is_inert_only_for_bodies_that_cannot_touch_headings(body: bytes, inert: bool) -> None:
    assert body_is_inert(b"old\n", body, b"## H\n", b"## Next\n") is inert
    assert body_is_inert(body, b"new\n", b"## H\n", b"## Next\n") is inert


def test_a_paragraph_before_a_setext_heading_is_not_inert() -> None:
    assert not body_is_inert(b"", b"para\n", b"# H\n", b"Next\n----\n")
    assert body_is_inert(b"", b"para\n\n", b"# H\n", b"Next\n----\n")
    assert body_is_inert(b"", b"para\n", b"# H\n", b"# Next\n")


def _splice(doc: Document, index: int, body: bytes) -> Splice:
    target = doc.sections[index]
    return splice(
        doc.data, target.start, doc.heading(target), doc.body(target), body, target.level > 0
    )


def test_a_heading_with_its_stable_id_marker_in_a_body_is_named_by_its_heading_line() -> None:
    doc = split(b"# A\n\ntext\n# B\n")
    cut = _splice(doc, 0, b"\n<!-- memkeeper:section id=x -->\n## X\n\n")
    problem = structure_problem(doc, split(cut.data), "a", cut.body_start, cut.body_end)
    assert problem == (
        "body line 3 would become a heading ('## X') — a body may not contain headings: "
        "indent the line, escape its '#', or put it in a fence"
    )


def test_a_stable_id_marker_at_the_end_of_a_body_is_named_as_such() -> None:
    doc = split(b"# A\n\ntext\n# B\n")
    cut = _splice(doc, 0, b"\n<!-- memkeeper:section id=x -->\n")
    problem = structure_problem(doc, split(cut.data), "a", cut.body_start, cut.body_end)
    assert problem is not None
    assert problem.startswith(
        "body line 2 is a stable-id marker (<!-- memkeeper:section id=x -->), which would "
        "give the next heading ('# B') the key 'x'"
    )


@PROPERTY
@given(data=documents(), pick=st.integers(min_value=0), body=body_texts())
def test_the_fast_path_guard_agrees_with_a_full_parse(data: bytes, pick: int, body: str) -> None:
    doc = split(data)
    assume(doc.sections)
    index = pick % len(doc.sections)
    target = doc.sections[index]
    following = doc.sections[index + 1] if index + 1 < len(doc.sections) else None
    cut = _splice(doc, index, body.encode())
    if body_is_inert(
        doc.body(target),
        cut.body,
        doc.heading(target),
        doc.heading(following) if following else None,
    ):
        assert (
            structure_problem(doc, split(cut.data), target.key, cut.body_start, cut.body_end)
            is None
        )


@PROPERTY
@given(data=documents(), pick=st.integers(min_value=0), body=body_texts())
def test_the_windowed_guard_agrees_with_a_full_parse(data: bytes, pick: int, body: str) -> None:
    """Differential: whenever the parse of the body and the next heading alone says the
    structure is kept, the two full parses say so too."""
    doc = split(data)
    assume(doc.sections)
    index = pick % len(doc.sections)
    target = doc.sections[index]
    following = doc.sections[index + 1] if index + 1 < len(doc.sections) else None
    cut = _splice(doc, index, body.encode())
    assume(cut.heading == doc.heading(target))
    kept = keeps_structure(
        cut.data,
        cut.body_start,
        cut.body_end,
        doc.body(target),
        doc.heading(following) if following else None,
        preamble=target.level == 0,
    )
    if kept:
        problem = structure_problem(doc, split(cut.data), target.key, cut.body_start, cut.body_end)
        assert problem is None


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        (b"```python\n# not a heading\n```\n\n", True),
        (b"<div>\n# inside\n</div>\n\n", True),
        (b"```\nnever closed\n", False),
        (b"<div>\nruns on\n", False),
        (b"# a heading\n", False),
        (b"text\n<!-- memkeeper:section id=x -->\n", False),
        (b"[x]: /u\n\n", False),
        (b"para\n", True),
    ],
)
def test_keeps_structure_on_a_body_before_the_next_heading(body: bytes, kept: bool) -> None:
    doc = split(b"# A\n\nold\n\n# B\n\nb\n\n# C\n")
    cut = _splice(doc, 1, body)
    following = doc.heading(doc.sections[2])
    assert keeps_structure(cut.data, cut.body_start, cut.body_end, b"b\n", following) is kept


def test_keeps_structure_refuses_an_emptied_preamble_and_open_front_matter() -> None:
    doc = split(b"intro\n# A\n")
    cut = _splice(doc, 0, b"")
    assert not keeps_structure(cut.data, 0, 0, b"intro\n", b"# A\n", preamble=True)
    fronted = b"---\ntitle: x\n# A\n\nbody\n"
    assert not keeps_structure(fronted, 16, 22, b"body\n", None)


@PROPERTY
@given(data=documents(), pick=st.integers(min_value=0), body=body_texts())
def test_a_patch_changes_only_its_sections_bytes(data: bytes, pick: int, body: str) -> None:
    doc = split(data)
    assume(doc.sections)
    index = pick % len(doc.sections)
    target = doc.sections[index]
    cut = _splice(doc, index, body.encode())
    new_doc = split(cut.data)
    if structure_problem(doc, new_doc, target.key, cut.body_start, cut.body_end) is not None:
        return  # refused: nothing is written
    assert cut.data[: target.start] == data[: target.start]
    assert cut.data[cut.body_end :] == data[target.end :]
    assert cut.data[target.start : cut.body_start].rstrip(b"\r\n") == doc.heading(target).rstrip(
        b"\r\n"
    )
    assert [s.key for s in new_doc.sections] == [s.key for s in doc.sections]
    assert new_doc.body(new_doc.sections[index]) == cut.body


@pytest.fixture(scope="module")
def shared_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("prop")
    (root / ".memkeeper.yaml").write_text(
        "version: 1\nfiles:\n  - path: '*.md'\n    class: section-owned\n"
    )
    memory = Memory.open(root, agent="prop")
    yield memory
    memory.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=documents(), pick=st.integers(min_value=0), body=body_texts())
def test_memory_patch_writes_exactly_the_splice_or_nothing(
    shared_memory: Memory, data: bytes, pick: int, body: str
) -> None:
    doc = split(data)
    assume(doc.sections)
    index = pick % len(doc.sections)
    path = shared_memory.root / "m.md"
    path.write_bytes(data)
    current = shared_memory.read(f"m.md#{doc.sections[index].key}")
    refused: Refused | None = None
    try:
        shared_memory.patch(f"m.md#{current.key}", body, expect_rev=current.rev)
    except Refused as caught:
        refused = caught
    if refused is not None:
        assert refused.reason == "structure"
        assert path.read_bytes() == data
    else:
        assert path.read_bytes() == _splice(doc, index, body.encode()).data

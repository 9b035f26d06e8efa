"""References to sections: splitting ``PATH#KEY`` and resolving a key or last segment."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.markdown.refs import resolve_key, split_ref
from memkeeper.markdown.sections import split

paths = st.text(alphabet="abc./#-_ ", min_size=1, max_size=12)
keys = st.text(alphabet="abc/-_.", min_size=1, max_size=10)
segment = st.text(alphabet="abcd", min_size=1, max_size=3)
key_lists = st.lists(
    st.lists(segment, min_size=1, max_size=3).map("/".join), min_size=1, max_size=8, unique=True
)


def pairs_of(keys: list[str]) -> list[tuple[str, str]]:
    """``(key, base)`` pairs as the index stores them: the base is the last segment."""
    return [(key, key.rpartition("/")[2]) for key in keys]


PAIRS = [("_preamble", "_preamble"), ("project", "project"), ("project/build", "build")]


TWINS = [("a", "a"), ("a/testing", "testing"), ("a/testing-2", "testing"), ("b", "b")]


def test_split_ref_separates_path_and_key() -> None:
    assert split_ref("CLAUDE.md#build") == ("CLAUDE.md", "build")
    assert split_ref("memory/x.md") == ("memory/x.md", None)
    assert split_ref("odd#name.md#a/b") == ("odd#name.md", "a/b")


@pytest.mark.parametrize("ref", ["x.md#", "#build"])
def test_split_ref_refuses_an_empty_path_or_key(ref: str) -> None:
    with pytest.raises(Invalid) as caught:
        split_ref(ref)
    assert caught.value.fields["ref"] == ref


def test_an_exact_key_resolves() -> None:
    assert resolve_key("CLAUDE.md", "project/build", PAIRS) == "project/build"


def test_a_unique_last_segment_resolves() -> None:
    assert resolve_key("CLAUDE.md", "build", PAIRS) == "project/build"


def test_a_suffixed_last_segment_resolves_exactly() -> None:
    assert resolve_key("CLAUDE.md", "testing-2", TWINS) == "a/testing-2"


def test_an_exact_key_wins_over_last_segments() -> None:
    pairs = [("build", "build"), ("ci/build", "build")]
    assert resolve_key("x.md", "build", pairs) == "build"


def test_a_stable_ids_last_segment_resolves() -> None:
    assert resolve_key("x.md", "v2", [("team/v2", "v2"), ("team/v2/notes", "notes")]) == "team/v2"


def test_equal_siblings_make_their_shared_name_ambiguous() -> None:
    with pytest.raises(Invalid) as caught:
        resolve_key("CLAUDE.md", "testing", TWINS)
    assert caught.value.fields["candidates"] == ["a/testing", "a/testing-2"]
    assert "CLAUDE.md" in caught.value.message
    assert "a/testing, a/testing-2" in caught.value.message


def test_an_unknown_reference_lists_every_key_of_a_small_file() -> None:
    with pytest.raises(Invalid) as caught:
        resolve_key("CLAUDE.md", "deploy", PAIRS)
    assert caught.value.fields["candidates"] == [key for key, _ in PAIRS]
    assert caught.value.message.startswith("CLAUDE.md: no section 'deploy'")


def test_an_unknown_reference_in_a_big_file_lists_the_closest_keys() -> None:
    pairs = [(f"topic-{n}/notes", "notes") for n in range(20)] + [("ops/deploy", "deploy")]
    with pytest.raises(Invalid) as caught:
        resolve_key("big.md", "deplyo", pairs)
    assert caught.value.fields["candidates"] == ["ops/deploy"]


def test_an_unknown_reference_in_an_empty_file_says_so() -> None:
    with pytest.raises(Invalid, match="no sections") as caught:
        resolve_key("empty.md", "x", [])
    assert caught.value.fields["candidates"] == []


def test_resolution_works_on_a_split_documents_keys() -> None:
    doc = split(b"# A\n## Testing\n## Testing\n")
    assert resolve_key("x.md", "testing-2", doc.keys()) == "a/testing-2"


@given(path=paths, key=keys.filter(lambda k: "#" not in k))
def test_split_ref_inverts_joining_a_path_and_a_key(path: str, key: str) -> None:
    assert split_ref(f"{path}#{key}") == (path, key)


@given(st.text(alphabet="abc./-_ ", min_size=1, max_size=12))
def test_a_reference_without_a_hash_is_the_whole_file(path: str) -> None:
    assert split_ref(path) == (path, None)


@pytest.mark.parametrize(
    ("ref", "missing"),
    [
        ("#build", "no file path before '#'"),
        ("x.md#", "no section key after '#'"),
        ("#", "no file path before '#'"),
    ],
)
def test_a_malformed_reference_says_what_is_missing_and_how_to_write_it(
    ref: str, missing: str
) -> None:
    with pytest.raises(Invalid) as caught:
        split_ref(ref)
    error = caught.value
    assert error.exit_code == 2
    assert error.message.startswith(f"{ref}: ")
    assert missing in error.message
    assert "write PATH#KEY, or PATH alone for the whole file" in error.message


def test_a_partial_key_of_several_segments_does_not_resolve() -> None:
    pairs = pairs_of(["x", "x/project", "x/project/build"])
    assert resolve_key("CLAUDE.md", "x/project/build", pairs) == "x/project/build"
    with pytest.raises(Invalid, match="no section 'project/build'") as caught:
        resolve_key("CLAUDE.md", "project/build", pairs)
    assert caught.value.fields["path"] == "CLAUDE.md"
    assert caught.value.fields["ref"] == "project/build"


def test_an_ambiguous_reference_counts_the_sections_it_names() -> None:
    pairs = pairs_of(["a/notes", "b/notes", "c/notes"])
    with pytest.raises(Invalid) as caught:
        resolve_key("x.md", "notes", pairs)
    assert caught.value.message == (
        "x.md: 'notes' names 3 sections — use the full key: a/notes, b/notes, c/notes"
    )
    assert caught.value.exit_code == 2


def test_an_unknown_reference_in_a_small_file_suggests_every_key() -> None:
    with pytest.raises(Invalid) as caught:
        resolve_key("CLAUDE.md", "deploy", [("build", "build"), ("test", "test")])
    assert caught.value.message == "CLAUDE.md: no section 'deploy' — did you mean: build, test?"


def test_nine_keys_are_all_listed_but_ten_are_matched_by_likeness() -> None:
    nine = pairs_of([f"k{n}" for n in range(9)])
    with pytest.raises(Invalid) as caught:
        resolve_key("x.md", "zzz", nine)
    assert caught.value.fields["candidates"] == [key for key, _ in nine]
    ten = pairs_of([f"k{n}" for n in range(10)])
    with pytest.raises(Invalid) as caught:
        resolve_key("x.md", "zzz", ten)
    assert caught.value.fields["candidates"] == []


def test_a_big_file_with_nothing_alike_points_at_the_sections_command() -> None:
    pairs = pairs_of([f"topic-{n}" for n in range(12)])
    with pytest.raises(Invalid) as caught:
        resolve_key("memory/big.md", "qqqqqq", pairs)
    assert caught.value.message == (
        "memory/big.md: no section 'qqqqqq'"
        " — run `memkeeper sections memory/big.md` to list its keys"
    )


def test_a_close_last_segment_suggests_its_full_key_once() -> None:
    pairs = pairs_of([f"topic-{n}/notes" for n in range(12)] + ["deploy", "ops/deploy"])
    with pytest.raises(Invalid) as caught:
        resolve_key("big.md", "deplyo", pairs)
    candidates = list(caught.value.fields["candidates"])
    assert sorted(candidates) == ["deploy", "ops/deploy"]
    assert len(candidates) == len(set(candidates))


def test_resolution_accepts_any_iterable_of_pairs() -> None:
    assert resolve_key("x.md", "build", iter([("ci/build", "build")])) == "ci/build"


@given(key_lists, st.data())
def test_every_key_resolves_to_itself(keys: list[str], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(keys))
    assert resolve_key("x.md", key, pairs_of(keys)) == key


@given(key_lists, segment)
def test_a_reference_resolves_exactly_when_it_is_a_key_or_one_keys_last_segment(
    keys: list[str], ref: str
) -> None:
    pairs = pairs_of(keys)
    ending = [key for key in keys if key.rpartition("/")[2] == ref]
    if ref in keys or len(ending) == 1:
        assert resolve_key("x.md", ref, pairs) == (ref if ref in keys else ending[0])
        return
    with pytest.raises(Invalid) as caught:
        resolve_key("x.md", ref, pairs)
    assert set(caught.value.fields["candidates"]) <= set(keys)
    assert caught.value.message.startswith(f"x.md: '{ref}' names" if ending else "x.md: no section")

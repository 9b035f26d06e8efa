"""Claim targets: one canonical spelling, overlap and coverage on whole path segments."""

from __future__ import annotations

import itertools

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.claims.targets import covers, normalize_target, targets_overlap
from memkeeper.errors import Invalid


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("src/api/x.py", "src/api/x.py"),
        ("./src//api/", "src/api/"),
        ("././a/./b", "a/b"),
        ("src/**/*.py", "src/**/*.py"),
        ("CLAUDE.md#project/build", "CLAUDE.md#project/build"),
        ("./CLAUDE.md#/project//build/", "CLAUDE.md#project/build"),
        ("**", "**"),
    ],
)
def test_normalize_target_gives_one_canonical_spelling(raw: str, normal: str) -> None:
    assert normalize_target(raw) == normal
    assert normalize_target(normal) == normal


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        ("", "names no file"),
        ("./", "'**' for everything"),
        ("/etc/passwd", "relative to the repository root"),
        ("../outside", "without '..'"),
        ("src/../../x", "without '..'"),
        ("docs/#intro", "name a file"),
        ("CLAUDE.md#", "PATH#KEY"),
        ("src/[z-a].py", "fix the [...] class"),
    ],
)
def test_normalize_target_rejects_bad_targets_saying_what_to_do(raw: str, hint: str) -> None:
    with pytest.raises(Invalid, match=hint.replace("[", r"\[").replace("*", r"\*")) as error:
        normalize_target(raw)
    assert error.value.exit_code == 2


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("src/api/", "src/api/x.py", True),
        ("src/api", "src/api/x.py", True),
        ("src/api", "src/api/", True),
        ("src/ap", "src/api/x.py", False),
        ("src/api/x.py", "src/api/x.pyc", False),
        ("src/", "docs/", False),
        ("src/*.py", "src/x.py", True),
        ("src/*.py", "src/sub/x.py", False),
        ("src/*", "src/sub/x.py", True),  # a glob matching a directory covers its files
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "src/a/b/c.md", True),  # c.md could be a directory holding x.py
        ("src/**/*.py", "src/a/b/c.md#intro", False),  # but not a file with sections
        ("src/*/", "src/a.md#intro", True),
        ("CLAUDE.md#build", "CLAUDE.md/x", False),
        ("src/**/*.py", "src/api/", True),  # the glob may match a file inside the directory
        ("src/**/*.py", "src", True),
        ("**/CLAUDE.md", "CLAUDE.md", True),
        ("**/CLAUDE.md", "pkg/CLAUDE.md", True),
        ("*.md", "docs/a.md", False),  # anchored at the root
        ("*.md", "README.md", True),
        ("**", "anything/at/all.txt", True),
        ("doc?/a", "docs/a", True),
        ("doc?/a", "doc/a", False),
        ("[ab].md", "a.md", True),
        ("[ab].md", "c.md", False),
        ("[!c].md", "c.md", False),
        ("[!c].md", "d.md", True),
        ("x/**", "x", True),
        ("src/*.py", "src/*.md", False),  # glob vs glob: different literal suffixes
        ("docs/*", "src/*", False),  # different literal segments
        ("a*/x", "b*/x", False),  # different literal prefixes
        ("a*/x", "ab*/x", True),  # conservative: might both match abc/x
        ("src/**", "**/*.py", True),
        ("CLAUDE.md", "CLAUDE.md#build", True),
        ("CLAUDE.md#project", "CLAUDE.md#project/build", True),
        ("CLAUDE.md#project/build", "CLAUDE.md#project/build", True),
        ("CLAUDE.md#project", "CLAUDE.md#projects", False),
        ("CLAUDE.md#build", "CLAUDE.md#test", False),
        ("CLAUDE.md#project/build", "CLAUDE.md#project/test", False),
        ("CLAUDE.md#build", "AGENTS.md#build", False),
        ("**", "CLAUDE.md#build", True),
        ("**/*.md", "CLAUDE.md#build", True),
        ("*.py", "CLAUDE.md#build", False),
        ("**/CLAUDE.md#build", "pkg/CLAUDE.md#build/sub", True),
        ("**/CLAUDE.md#build", "pkg/CLAUDE.md#test", False),
    ],
)
def test_targets_overlap_on_whole_segments_in_both_directions(
    a: str, b: str, overlap: bool
) -> None:
    a, b = normalize_target(a), normalize_target(b)
    assert targets_overlap(a, b) is overlap
    assert targets_overlap(b, a) is overlap


@pytest.mark.parametrize(
    ("claim_target", "target", "covered"),
    [
        ("src/", "src/x.py", True),
        ("src", "src/x.py", True),
        ("src/x.py", "src", False),
        ("src/**", "src/a/b.py", True),
        ("src/**", "src", False),
        ("*.md", "docs/a.md", False),
        ("CLAUDE.md", "CLAUDE.md#build", True),
        ("CLAUDE.md#project", "CLAUDE.md#project/build", True),
        ("CLAUDE.md#project/build", "CLAUDE.md#project", False),
        ("CLAUDE.md#build", "CLAUDE.md", False),
        ("**/CLAUDE.md", "pkg/CLAUDE.md#build", True),
        ("notes/", "notes/a*b.md", True),  # a concrete target is never read as a glob
        ("notes/a*b.md", "notes/a*b.md", True),
        ("notes/a*b.md", "notes/axb.md", True),
    ],
)
def test_covers_asks_whether_a_claim_target_includes_a_concrete_one(
    claim_target: str, target: str, covered: bool
) -> None:
    assert covers(claim_target, target) is covered


NAMES = ["a", "b", "ab"]


SEGMENT_GLOBS = ["a", "b", "ab", "*", "?", "a*", "*b", "?b", "[ab]", "[!a]", "**"]


globs = st.lists(st.sampled_from(SEGMENT_GLOBS), min_size=1, max_size=3).map("/".join)


literals = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)


UNIVERSE = ["/".join(p) for n in range(1, 6) for p in itertools.product(NAMES, repeat=n)]


class Oracle:
    """gitignore anchored at the root, as git applies it: a matched directory takes its files."""

    def __init__(self, target: str) -> None:
        self.spec = pathspec.PathSpec.from_lines("gitignore", ["/" + target])

    def match_file(self, path: str) -> bool:
        parts = path.split("/")
        return any(self.spec.match_file("/".join(parts[:n])) for n in range(1, len(parts) + 1))


def oracle(target: str) -> Oracle:
    return Oracle(target)


@settings(max_examples=300, deadline=None)
@given(glob=globs, path=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join))
def test_covers_agrees_with_gitignore_anchored_at_the_root(glob: str, path: str) -> None:
    assert covers(normalize_target(glob), path) is oracle(glob).match_file(path)


@settings(max_examples=150, deadline=None)
@given(a=st.one_of(globs, literals), b=st.one_of(globs, literals))
def test_overlap_is_never_missed_when_some_file_is_under_both(a: str, b: str) -> None:
    a, b = normalize_target(a), normalize_target(b)
    shared = [f for f in UNIVERSE if oracle(a).match_file(f) and oracle(b).match_file(f)]
    assert targets_overlap(a, b) is targets_overlap(b, a)
    if shared:
        assert targets_overlap(a, b), f"{a} and {b} both cover {shared[0]}"


@settings(max_examples=150, deadline=None)
@given(a=literals, b=st.one_of(globs, literals))
def test_overlap_with_a_plain_path_is_exact(a: str, b: str) -> None:
    a, b = normalize_target(a), normalize_target(b)
    shared = any(oracle(a).match_file(f) and oracle(b).match_file(f) for f in UNIVERSE)
    assert targets_overlap(a, b) is shared


# --- more on spelling ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("/etc/passwd", "is absolute"),
        ("a/../b", "climbs out with '..'"),
        ("", "names no file"),
        ("src/#intro", "puts a section on a directory"),
        ("CLAUDE.md#//", "has an empty section key"),
        ("x/[b-a]y", "bad glob segment"),
    ],
)
def test_a_bad_target_is_named_and_marked_as_a_bad_target(raw: str, problem: str) -> None:
    with pytest.raises(Invalid) as caught:
        normalize_target(raw)
    error = caught.value
    assert error.fields["reason"] == "bad_target"
    assert problem in error.message
    assert " — " in error.message, "the message says what to do"
    if problem != "bad glob segment":
        assert error.message.startswith(f"claim target {raw!r} ")


def test_dots_inside_names_are_not_parent_directories() -> None:
    assert normalize_target("a/..b/c..") == "a/..b/c.."
    assert normalize_target(".hidden/.x") == ".hidden/.x"


def test_a_key_keeps_its_own_hashes_after_the_first() -> None:
    # only the first '#' separates the path; a key segment may not be a directory target
    assert normalize_target("CLAUDE.md#a#b") == "CLAUDE.md#a#b"


def test_a_glob_with_an_open_bracket_is_a_literal_bracket() -> None:
    assert normalize_target("notes/a[b.md") == "notes/a[b.md"
    assert covers("notes/a[b.md", "notes/a[b.md")
    assert not covers("notes/a[b.md", "notes/ab.md")


@pytest.mark.parametrize(
    ("claim_target", "target", "covered"),
    [
        ("[a-c].md", "b.md", True),
        ("[a-c].md", "d.md", False),
        ("[!a-c].md", "d.md", True),
        ("[^a-c].md", "b.md", False),
        ("[]a].md", "].md", True),
        ("[]a].md", "a.md", True),
        ("[]a].md", "b.md", False),
        ("[-a].md", "-.md", True),
        ("[a-].md", "-.md", True),
        ("[a-].md", "b.md", False),
        ("a\\*b.md", "a*b.md", True),
        ("a\\*b.md", "axb.md", False),
        ("a/**/**/b", "a/b", True),
        ("a/**/**/b", "a/x/y/b", True),
        ("**/b", "b", True),
        ("a?", "ab/c", True),
        ("a?", "abc", False),
        ("src/", "src/", True),
    ],
)
def test_covers_reads_gitignore_wildcards_within_a_segment(
    claim_target: str, target: str, covered: bool
) -> None:
    assert covers(normalize_target(claim_target), target) is covered


def test_a_star_never_crosses_a_slash() -> None:
    assert covers("a/*", "a/b/c")  # it matches a/b, which holds c
    assert not covers("a*c", "ab/c")
    assert not targets_overlap("a*c", "ab/c")


def test_a_section_claim_covers_only_its_own_key_and_the_keys_below() -> None:
    assert covers("CLAUDE.md#build", "CLAUDE.md#build/linux")
    assert not covers("CLAUDE.md#build", "CLAUDE.md#builds")
    assert not covers("CLAUDE.md#build", "AGENTS.md#build")
    assert covers("**/CLAUDE.md#build", "pkg/CLAUDE.md#build")


def test_section_targets_on_one_file_overlap_only_along_one_branch() -> None:
    assert targets_overlap("x.md#a", "x.md#a/b/c")
    assert not targets_overlap("x.md#a/b", "x.md#a/c")
    assert not targets_overlap("x.md#a", "y.md#a")


def test_two_files_never_overlap_though_each_may_name_a_directory() -> None:
    assert not targets_overlap("x.md#k", "x.md/inner#k")
    assert targets_overlap("x.md", "x.md/inner#k")


# --- properties ----------------------------------------------------------------------------

KEYS = ["k", "k/sub", "j"]
raw_parts = st.lists(st.sampled_from(["a", "b", ".", "", "ab", "*", "**"]), min_size=1, max_size=4)
claims = st.one_of(
    globs, literals, st.tuples(st.one_of(globs, literals), st.sampled_from(KEYS)).map("#".join)
)
concrete = st.one_of(literals, st.tuples(literals, st.sampled_from(KEYS)).map("#".join))


@given(raw_parts, st.booleans())
def test_normalizing_is_idempotent(parts: list[str], slash: bool) -> None:
    raw = "/".join(parts) + ("/" if slash else "")
    try:
        norm = normalize_target(raw)
    except Invalid:
        return  # nothing left but dots and slashes
    assert normalize_target(norm) == norm
    assert "//" not in norm
    assert "/./" not in f"/{norm}"


@settings(max_examples=200, deadline=None)
@given(claims, claims)
def test_overlap_is_symmetric_with_section_keys_too(a: str, b: str) -> None:
    assert targets_overlap(a, b) is targets_overlap(b, a)


@settings(max_examples=300, deadline=None)
@given(st.one_of(globs, literals), concrete)
def test_a_claim_that_covers_a_target_overlaps_it(claim_target: str, target: str) -> None:
    if covers(claim_target, target):
        assert targets_overlap(claim_target, target)


@given(literals, st.sampled_from(KEYS), st.sampled_from(KEYS))
def test_on_one_file_a_section_claim_covers_its_key_and_the_keys_below(
    path: str, key: str, other: str
) -> None:
    claim_target, target = f"{path}#{key}", f"{path}#{other}"
    assert covers(claim_target, target) is (other == key or other.startswith(key + "/"))
    if covers(claim_target, target):
        assert targets_overlap(claim_target, target)


@pytest.mark.parametrize(
    ("claim_target", "target"),
    [("a#k", "a/a#k"), ("CLAUDE.md#build", "CLAUDE.md/x.md#build")],
)
def test_a_section_claim_never_covers_a_section_of_a_file_below_its_path(
    claim_target: str, target: str
) -> None:
    assert not targets_overlap(claim_target, target)  # holds today
    assert not covers(claim_target, target)


@given(concrete)
def test_a_concrete_target_covers_and_overlaps_itself(target: str) -> None:
    assert covers(target, target)
    assert targets_overlap(target, target)


@given(literals, literals)
def test_a_plain_path_covers_exactly_the_paths_at_or_below_it(a: str, b: str) -> None:
    assert covers(a, b) is (b == a or b.startswith(a + "/"))


@given(claims, concrete, st.sampled_from(KEYS))
def test_covering_a_file_covers_each_of_its_sections(
    claim_target: str, path: str, key: str
) -> None:
    file = path.partition("#")[0]
    if covers(claim_target, file):
        assert covers(claim_target, f"{file}#{key}")


@pytest.mark.parametrize(
    ("target", "problem"),
    [("src/a\x00b", "contains a NUL character"), ("x" * 1025, "is 1,025 characters")],
)
def test_a_target_with_a_nul_or_too_long_is_a_bad_target(target: str, problem: str) -> None:
    with pytest.raises(Invalid, match=problem) as caught:
        normalize_target(target)
    assert caught.value.fields["reason"] == "bad_target"

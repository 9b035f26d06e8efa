"""A plain ``read`` or ``patch`` is read without argparse exactly as argparse reads it, and any
other command line is left to argparse (``cli.plainwords``): the forms agents send are taken,
each option in any order and the common ones before or after the verb; every line
``plain_args`` takes, ``cli.parser`` reads into the same fields; a line argparse refuses,
``plain_args`` never takes. That a plain read or patch then loads no argparse is checked in a
fresh interpreter: tests/e2e/test_startup_imports.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.cli.parser import parse_args
from memkeeper.cli.plainwords import plain_args
from memkeeper.errors import Usage
from memkeeper.limits import MAX_INT

REF = "CLAUDE.md#build"
TAKEN = [
    ("read", REF),
    ("read", REF, "--json"),
    ("--json", "read", REF),
    ("read", REF, "--rev", "3", "--json"),
    ("--root", "/r", "--agent", "a1", "read", REF, "--debug"),
    ("patch", REF, "--expect-rev", "4", "--body-file", "body.md", "--json"),
    ("patch", REF, "--body-file", "-", "--expect-rev", "0"),
    ("patch", REF, "--expect-rev", "4", "--dmp-file", "d", "--merge", "--claim", "c1"),
    ("patch", "--expect-file-hash", "sha256:ab", REF, "--expect-rev", "9", "--body-file", "b"),
    ("read", ""),
    ("read", "patch"),
    ("--agent", "read", "read", REF),
]
LEFT = [
    (),
    ("read",),
    ("read", REF, REF),
    ("read", REF, "--js"),
    ("read", REF, "--json", "--json"),
    ("--json", "read", REF, "--json"),
    ("read", REF, "--root=/r"),
    ("read", REF, "--rev", "-1"),
    ("read", REF, "--rev", "+1"),
    ("read", REF, "--rev", "٣"),
    ("read", REF, "--rev", str(MAX_INT + 1)),
    ("read", "-"),
    ("read", "--", REF),
    ("read", REF, "-h"),
    ("--version",),
    ("patch", REF, "--body-file", "b"),
    ("patch", REF, "--expect-rev", "1"),
    ("patch", REF, "--expect-rev", "1", "--body-file", "b", "--dmp-file", "d"),
    ("patch", REF, "--expect-rev", "1", "--body-file", "--json"),
    ("patch", REF, "--expect-rev", "1", "--body-file"),
    ("--merge", "patch", REF, "--expect-rev", "1", "--body-file", "b"),
    ("events",),
    ("sections", "CLAUDE.md"),
    ("hook", "claude-code"),
]


@pytest.mark.parametrize("words", TAKEN)
def test_the_plain_forms_are_read_as_argparse_reads_them(words: tuple[str, ...]) -> None:
    found = plain_args(words)
    assert found is not None
    assert vars(found) == vars(parse_args(words))


@pytest.mark.parametrize("words", LEFT)
def test_any_other_command_line_is_left_to_argparse(words: tuple[str, ...]) -> None:
    assert plain_args(words) is None


WORDS = st.sampled_from(
    [
        *("read", "patch", "events", "sections", REF, "x", "", "-", "--", "a b", "-x y"),
        *("--root", "--agent", "--json", "--debug", "--rev", "--js", "--ro", "--root=/r"),
        *("--expect-rev", "--expect-file-hash", "--claim", "--merge", "--body-file", "--expect"),
        *("--dmp-file", "--body-file=-", "-h"),
        *("0", "7", "007", "-5", "+5", " 5", "٣", str(MAX_INT), str(MAX_INT + 1)),
    ]
)


@given(st.lists(WORDS, max_size=9))
def test_what_plain_args_takes_argparse_reads_the_same(words: list[str]) -> None:
    found = plain_args(words)
    try:
        parsed = vars(parse_args(words))
    except (Usage, SystemExit):
        assert found is None
        return
    if found is not None:
        assert vars(found) == parsed


def _patch_line(draw: st.DrawFn) -> list[str]:
    """A valid patch (or read) line, its options shuffled, the common ones on either side."""
    verb = draw(st.sampled_from(["read", "patch"]))
    common = draw(
        st.lists(
            st.sampled_from([("--json",), ("--debug",), ("--root", "/r"), ("--agent", "a")]),
            unique=True,
        )
    )
    own: list[tuple[str, ...]] = [("--rev", "2")] if verb == "read" and draw(st.booleans()) else []
    if verb == "patch":
        own.append(("--expect-rev", draw(st.sampled_from(["0", "12", str(MAX_INT)]))))
        own.append((draw(st.sampled_from(["--body-file", "--dmp-file"])), "-"))
        own += draw(st.lists(st.sampled_from([("--merge",), ("--claim", "c2")]), unique=True))
    before = draw(st.integers(0, len(common)))
    after = draw(st.permutations([*common[before:], *own, (REF,)]))
    head = [word for option in common[:before] for word in option]
    return [*head, verb, *(word for option in after for word in option)]


@given(st.composite(_patch_line)())
def test_every_plain_line_is_taken_and_read_the_same(words: list[str]) -> None:
    found = plain_args(words)
    assert found is not None
    assert vars(found) == vars(parse_args(words))

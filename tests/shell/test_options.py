"""Options and operands of the commands the gate reads, getopt-style."""

from __future__ import annotations

from memkeeper.shell.options import given, options
from memkeeper.shell.parse import Word, tokenize


def args(line: str) -> tuple[Word, ...]:
    return tuple(t for t in tokenize(line) if isinstance(t, Word))


def test_short_options_cluster_and_a_valued_one_takes_the_rest_or_the_next_word() -> None:
    operands, opts = options(args("-rf -o out -kx file"), frozenset("ok"))
    assert [w.text for w in operands] == ["file"]
    assert (opts["r"].text, opts["f"].text, opts["o"].text, opts["k"].text) == ("", "", "out", "x")


def test_a_long_option_takes_its_value_after_an_equals_or_as_the_next_word() -> None:
    _, opts = options(args("--output=a.md --key 2 --write"), frozenset({"key", "output"}))
    assert (opts["output"].text, opts["key"].text, opts["write"].text) == ("a.md", "2", "")


def test_a_long_options_value_keeps_its_own_word_s_plainness() -> None:
    _, opts = options(args('--output "$F"'), frozenset({"output"}))
    assert opts["output"] == Word("$F", False)


def test_double_dash_ends_the_options() -> None:
    operands, opts = options(args("-i -- -x.md"), frozenset())
    assert ([w.text for w in operands], list(opts)) == (["-x.md"], ["i"])


def test_an_attached_only_option_takes_no_next_word() -> None:
    operands, opts = options(args("-i.bak -i s/a/b/ f"), frozenset(), frozenset("i"))
    assert [w.text for w in operands] == ["s/a/b/", "f"]
    assert opts["i"].text == ""


def test_given_finds_the_first_spelling_present() -> None:
    _, opts = options(args("--write"), frozenset())
    assert given(opts, "w", "write") == Word("", True)
    assert given(opts, "check") is None

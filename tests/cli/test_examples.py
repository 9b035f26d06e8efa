"""The examples each ``--help`` ends with: every verb has some, each runs that verb, and the
module costs nothing until help is printed."""

from __future__ import annotations

import sys

from memkeeper.cli.examples import EXAMPLES, epilog
from memkeeper.cli.parser import BASE_VERBS, VERB_GROUPS

VERBS = {*BASE_VERBS, *(verb for verbs in VERB_GROUPS.values() for verb in verbs)}


def test_every_verb_has_examples_and_only_verbs_do() -> None:
    assert set(EXAMPLES) == {*VERBS, "memkeeper"}


def test_each_example_runs_its_own_verb() -> None:
    for verb in VERBS:
        assert all(f"memkeeper {verb} " in f"{example} " for example in EXAMPLES[verb]), verb


def test_the_epilog_lists_them_one_a_line_under_a_heading() -> None:
    assert epilog("memkeeper release") == "examples:\n  memkeeper release c-41"
    assert epilog("memkeeper nothing-here") is None


def test_a_long_example_goes_on_over_indented_lines_within_the_width() -> None:
    shown = epilog("memkeeper claim", width=40)
    assert shown is not None
    lines = shown.splitlines()[1:]
    assert all(len(line) <= 40 for line in lines)
    assert lines[0].startswith("  memkeeper claim")
    assert lines[0].endswith(" \\")
    assert lines[1].startswith("      ")
    joined = " ".join(line.strip().removesuffix(" \\") for line in lines[:3])
    assert joined.startswith(EXAMPLES["claim"][0][: len(joined) - 1])


def test_inits_epilog_names_the_presets() -> None:
    shown = epilog("memkeeper init")
    assert shown is not None
    assert shown.endswith("\n\npresets: cline-memory-bank, default")


def test_parsing_a_command_line_does_not_load_the_examples() -> None:
    from memkeeper.cli.parser import parse_args

    sys.modules.pop("memkeeper.cli.examples", None)
    parse_args(["read", "CLAUDE.md#build"])
    assert "memkeeper.cli.examples" not in sys.modules

"""The command line's grammar, read by ``cli.parser`` alone (no command runs): the common
options on every verb, before or after its name; each of the parser's own verbs with its
flags, defaults and exclusive payloads; every mistake an ``Invalid`` (exit 2) naming the
command and its ``--help``; the lazy parser — only the verb named declared — reading every
command line as the full one does; and help sized to $COLUMNS. That a verb imports only its
group is checked in a fresh interpreter: tests/e2e/test_startup_imports.py.

The verbs of the other groups (claims, files, watch, hooks, servers, proposals) have their
flags asserted with their modules; here they are only read the same lazily and fully.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable
from typing import Any

import pytest

from memkeeper.cli.parser import (
    BASE_VERBS,
    VERB_GROUPS,
    _wanted_verb,
    build_parser,
    parse_args,
)
from memkeeper.errors import Invalid, Usage

COMMON = {"root": None, "agent": None, "json": False, "debug": False}

# The shortest command line of every verb.
MINIMAL: dict[str, tuple[str, ...]] = {
    "init": ("init",),
    "status": ("status",),
    "sections": ("sections", "CLAUDE.md"),
    "read": ("read", "CLAUDE.md#build"),
    "patch": ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
    "events": ("events",),
    "verify": ("verify",),
    "claim": ("claim", "CLAUDE.md"),
    "renew": ("renew", "c1"),
    "release": ("release", "c1"),
    "complete": ("complete", "c1"),
    "abandon": ("abandon", "c1", "--reason", "stuck"),
    "takeover": ("takeover", "c1"),
    "suspend": ("suspend", "c1"),
    "resume": ("resume", "c1"),
    "claims": ("claims",),
    "metrics": ("metrics",),
    "append": ("append", "memory/decisions.md", "--text", "x"),
    "regen": ("regen",),
    "reconcile": ("reconcile", "list"),
    "check": ("check",),
    "watch": ("watch",),
    "emit": ("emit", "task.completed"),
    "hook": ("hook", "claude-code"),
    "install-hooks": ("install-hooks",),
    "uninstall-hooks": ("uninstall-hooks",),
    "filter": ("filter", "clean", "memory/status.md"),
    "mcp": ("mcp",),
    "serve": ("serve",),
    "proposals": ("proposals",),
    "log": ("log", "CLAUDE.md#build"),
    "revert": ("revert", "CLAUDE.md#build", "--to-rev", "1", "--expect-rev", "2"),
    "doctor": ("doctor",),
    "keys": ("keys", "list"),
    "send": ("send", "--to", "all", "--text", "hi"),
    "inbox": ("inbox",),
    "ack": ("ack", "1"),
    "request-release": ("request-release", "c1"),
    "answer": ("answer", "1", "--release"),
    "meeting": ("meeting", "list"),
    "work": ("work", "list"),
    "compact": ("compact",),
}
EVERY_VERB = sorted([*BASE_VERBS, *(v for verbs in VERB_GROUPS.values() for v in verbs)])


def invalid(words: list[str]) -> str:
    with pytest.raises(Invalid) as caught:
        parse_args(words)
    assert caught.value.exit_code == 2
    return caught.value.message


def test_the_minimal_command_lines_name_every_verb() -> None:
    assert sorted(MINIMAL) == EVERY_VERB


# -- the common options ------------------------------------------------------------------------


@pytest.mark.parametrize("verb", EVERY_VERB)
def test_the_common_options_default_to_nothing_on_every_verb(verb: str) -> None:
    args = vars(parse_args(MINIMAL[verb]))
    assert {name: args[name] for name in COMMON} == COMMON
    assert args["command"] == verb


@pytest.mark.parametrize("verb", EVERY_VERB)
def test_the_common_options_work_before_and_after_every_verb(verb: str) -> None:
    common = ["--root", "/r", "--agent", "a1", "--json", "--debug"]
    before = vars(parse_args([*common, *MINIMAL[verb]]))
    after = vars(parse_args([*MINIMAL[verb], *common]))
    assert before == after
    assert {name: after[name] for name in COMMON} == {
        "root": "/r",
        "agent": "a1",
        "json": True,
        "debug": True,
    }


def test_a_flag_given_before_the_verb_is_not_reset_by_the_verbs_defaults() -> None:
    args = parse_args(["--json", "--agent", "a1", "read", "CLAUDE.md#build", "--root", "/r"])
    assert (args.json, args.agent, args.root, args.debug) == (True, "a1", "/r", False)


def test_given_before_and_after_the_verb_the_later_one_wins() -> None:
    args = parse_args(["--agent", "a1", "--root", "/a", "status", "--agent", "a2"])
    assert (args.agent, args.root) == ("a2", "/a")


# -- the parser's own verbs --------------------------------------------------------------------


FLAGS: list[tuple[list[str], dict[str, Any]]] = [
    (["init"], {"preset": None, "howto": False}),
    (["init", "--preset", "team", "--howto"], {"preset": "team", "howto": True}),
    (["status"], {"full": False}),
    (["status", "--full"], {"full": True}),
    (["sections", "memory/a.md"], {"path": "memory/a.md"}),
    (["read", "CLAUDE.md"], {"ref": "CLAUDE.md", "rev": None}),
    (
        ["patch", "CLAUDE.md#build", "--expect-rev", "3", "--body-file", "-"],
        {
            "ref": "CLAUDE.md#build",
            "expect_rev": 3,
            "expect_file_hash": None,
            "claim": None,
            "merge": False,
            "body_file": "-",
            "dmp_file": None,
        },
    ),
    (
        [
            *["patch", "a.md#k", "--dmp-file", "d.txt", "--expect-rev=0", "--merge"],
            *["--claim", "c2", "--expect-file-hash", "sha256:ab"],
        ],
        {
            "ref": "a.md#k",
            "expect_rev": 0,
            "expect_file_hash": "sha256:ab",
            "claim": "c2",
            "merge": True,
            "body_file": None,
            "dmp_file": "d.txt",
        },
    ),
    (["events"], {"since": 0, "follow": False, "path": None, "type": None, "actor": None}),
    (
        ["events", "--since", "12", "--follow"],
        {"since": 12, "follow": True, "path": None, "type": None, "actor": None},
    ),
    (["verify"], {"full": False}),
    (["verify", "--full"], {"full": True}),
]


@pytest.mark.parametrize(("words", "expected"), FLAGS, ids=[" ".join(w) for w, _ in FLAGS])
def test_each_of_the_parsers_verbs_reads_its_flags_with_their_defaults(
    words: list[str], expected: dict[str, Any]
) -> None:
    assert vars(parse_args(words)) == {**COMMON, "command": words[0], **expected}


PATCH = ["patch", "CLAUDE.md#build"]


MISTAKES: list[tuple[list[str], str]] = [
    ([], "memkeeper: the following arguments are required: command — see memkeeper --help"),
    (["status", "extra"], "memkeeper: unrecognized arguments: extra — see memkeeper --help"),
    (
        ["read", "a.md", "--bogus"],
        "memkeeper: unrecognized arguments: --bogus — see memkeeper --help",
    ),
    (["--root"], "memkeeper: argument --root: expected one argument — see memkeeper --help"),
    (
        ["read"],
        "memkeeper read: the following arguments are required: ref — see memkeeper read --help",
    ),
    (
        ["sections"],
        "memkeeper sections: the following arguments are required: path "
        "— see memkeeper sections --help",
    ),
    (
        [*PATCH, "--body-file", "-"],
        "memkeeper patch: the following arguments are required: --expect-rev "
        "— see memkeeper patch --help",
    ),
    (
        [*PATCH, "--expect-rev", "1"],
        "memkeeper patch: one of the arguments --body-file --dmp-file is required "
        "— see memkeeper patch --help",
    ),
    (
        [*PATCH, "--expect-rev", "1", "--body-file", "-", "--dmp-file", "d"],
        "memkeeper patch: argument --dmp-file: not allowed with argument --body-file "
        "— see memkeeper patch --help",
    ),
    (
        [*PATCH, "--expect-rev", "two", "--body-file", "-"],
        "memkeeper patch: argument --expect-rev: invalid int value: 'two' "
        "— see memkeeper patch --help",
    ),
    (
        ["events", "--since", "x"],
        "memkeeper events: argument --since: invalid int value: 'x' — see memkeeper events --help",
    ),
    (
        ["init", "--howto=yes"],
        "memkeeper init: argument --howto: ignored explicit argument 'yes' "
        "— see memkeeper init --help",
    ),
]


@pytest.mark.parametrize(
    ("words", "message"), MISTAKES, ids=[" ".join(w) or "(nothing)" for w, _ in MISTAKES]
)
def test_a_mistake_is_invalid_naming_the_command_and_its_help(
    words: list[str], message: str
) -> None:
    assert invalid(words) == message


def test_an_unknown_verb_is_invalid_naming_every_verb() -> None:
    message = invalid(["frobnicate", "x"])
    assert message.startswith("memkeeper: argument command: invalid choice: 'frobnicate' (choose")
    assert all(f"'{verb}'" in message for verb in EVERY_VERB)


def help_of(words: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        parse_args(words)
    assert stopped.value.code == 0
    return out.getvalue()


def test_help_lists_every_verb_and_a_verbs_help_is_its_own() -> None:
    top = help_of(["--help"])
    assert top.startswith("usage: memkeeper ")
    assert all(verb in top for verb in EVERY_VERB)
    claim = help_of(["--json", "claim", "-h"])
    assert claim.startswith("usage: memkeeper claim ")
    assert "take a claim on paths, globs or PATH#KEY sections" in claim


# -- the lazy parser -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "wanted"),
    [
        (["read", "CLAUDE.md"], "read"),
        (["--json", "claim", "x"], "claim"),
        (["--root", "/r", "--agent", "a", "install-hooks"], "install-hooks"),
        (["--root", "read", "status"], "status"),  # an option's value is no verb
        (["--agent", "claims", "claim", "x"], "claim"),
        (["--root=/r", "serve"], "serve"),
        (["read", "--help"], "read"),  # that verb's help
        (["--help", "read"], None),  # everyone's
        (["-h"], None),
        (["frobnicate"], None),  # argparse lists every verb
        (["CLAUDE.md", "read"], None),
        ([], None),
        (["--root"], None),
    ],
)
def test_the_wanted_verb_is_the_first_word_that_is_no_options_value(
    words: list[str], wanted: str | None
) -> None:
    assert _wanted_verb(words) == wanted


FULL = build_parser()  # every verb declared (argparse parsers are reusable)


def test_a_parser_built_for_one_verb_declares_no_other() -> None:
    parser = build_parser("read")
    with pytest.raises(Invalid, match=r"invalid choice: 'status' \(choose from 'read'\)"):
        parser.parse_args(["status"])


LINES = [
    ["init", "--preset", "team", "--howto"],
    ["status", "--json"],
    ["sections", "CLAUDE.md", "--root", "/r"],
    ["read", "CLAUDE.md#build", "--debug"],
    ["patch", "a.md#k", "--expect-rev", "1", "--dmp-file", "d", "--merge", "--claim", "c1"],
    ["events", "--since", "5", "--follow"],
    ["verify"],
    ["verify", "--full", "--json"],
    ["compact", "--json"],
    [
        *["claim", "CLAUDE.md", "src/", "--mode", "read", "--ttl", "30", "--priority", "2"],
        *["--strict", "--wait", "5", "--objective", "docs"],
    ],
    ["renew", "c1", "--ttl", "60"],
    ["release", "c1"],
    ["complete", "c1", "--verify", "true", "--expect-rev", "2"],
    ["abandon", "c1", "--reason", "stuck"],
    ["takeover", "c1", "--ttl", "60"],
    ["suspend", "c1"],
    ["resume", "c1"],
    ["claims"],
    ["metrics", "--json"],
    ["append", "memory/decisions.md", "--entry-file", "-"],
    ["regen", "memory/status.md"],
    ["reconcile", "resolve", "1", "--keep-human"],
    ["check", "--staged", "a.md", "b.md"],
    ["watch", "--debounce-ms", "5", "--step-ms", "7"],
    ["emit", "task.completed", "--data", "{}"],
    ["hook", "codex", "--event", "PreToolUse"],
    ["install-hooks", "codex", "cursor", "--mcp"],
    ["uninstall-hooks", "cline"],
    ["filter", "clean", "memory/status.md"],
    ["mcp", "--agent", "a1"],
    ["serve", "--port", "0", "--host", "::1", "--allow-remote"],
    ["proposals", "apply", "2", "--expect-rev", "4"],
    ["log", "CLAUDE.md#build", "-p"],
    ["revert", "CLAUDE.md#build", "--to-rev", "1", "--expect-rev", "3"],
    ["doctor", "codex", "gemini", "--fix"],
    ["keys", "trust", "alice", "human", "--as", "human,reviewer"],
    ["send", "--to", "claude-code:s1", "--about", "c1", "--file", "-"],
    ["inbox", "--all", "--json"],
    ["ack", "12"],
    ["request-release", "c1", "--text", "I need it"],
    ["answer", "3", "--reason", "soon", "--eta", "60"],
    ["meeting", "resolve", "1", "--expect-rev", "2", "--split", "a=x", "--split", "b=y"],
    ["meeting", "show", "1", "--agent", "a", "--json"],
    ["work", "add", "t", "--paths", "a", "b", "--after", "1", "2", "--priority", "-1"],
    ["work", "done", "3", "--verify", "make test", "--claim", "c4", "--json"],
    ["--agent", "a", "--root", "/r", "--json", "claim", "x"],
    ["--root", "read", "status"],
]


def test_the_lines_read_lazily_cover_every_verb() -> None:
    assert sorted({words[0] for words in LINES if not words[0].startswith("-")}) == EVERY_VERB


@pytest.mark.parametrize("words", LINES, ids=" ".join)
def test_the_lazy_parser_reads_a_line_as_the_full_one_does(words: list[str]) -> None:
    assert parse_args(words) == FULL.parse_args(words)


@pytest.mark.parametrize(
    "words",
    [
        ["claim", "x", "--mode", "bogus"],
        ["patch", "a#b", "--expect-rev", "1"],
        ["reconcile", "show", "1", "--keep-human", "--take-store"],
        ["serve", "--port", "http"],
        ["hook", "vim"],
    ],
    ids=" ".join,
)
def test_the_lazy_parser_refuses_a_line_as_the_full_one_does(words: list[str]) -> None:
    with pytest.raises(Invalid) as full:
        FULL.parse_args(words)
    assert invalid(words) == full.value.message


@pytest.mark.parametrize(
    "words",
    [["--ag", "read", "status"], ["--ro", "check", "claims"]],
    ids=" ".join,
)
def test_an_abbreviated_option_whose_value_names_a_verb_reads_as_in_the_full_parser(
    words: list[str],
) -> None:
    def outcome(parse: Callable[[list[str]], argparse.Namespace]) -> argparse.Namespace | str:
        try:
            return parse(words)
        except Invalid as refused:
            return refused.message

    assert outcome(parse_args) == outcome(FULL.parse_args)


# -- help sized to the terminal ------------------------------------------------------------------


def patch_help(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> str:
    """``memkeeper patch --help`` with stdout no terminal (a pipe, an agent) and $COLUMNS."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    return help_of(["patch", "--help"])


def test_help_wraps_two_columns_short_of_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    narrow = max(map(len, patch_help(monkeypatch, "70").splitlines()))
    wide = max(map(len, patch_help(monkeypatch, "100").splitlines()))
    assert narrow <= 68
    assert 68 < wide <= 98  # the wider help uses the room it has


@pytest.mark.parametrize(("columns", "as_if"), [(None, "80"), ("", "80"), ("10", "42")])
def test_help_without_columns_is_80_wide_and_never_narrower_than_40(
    monkeypatch: pytest.MonkeyPatch, columns: str | None, as_if: str
) -> None:
    assert patch_help(monkeypatch, columns) == patch_help(monkeypatch, as_if)


def test_a_columns_that_is_no_number_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    assert patch_help(monkeypatch, "wide") == patch_help(monkeypatch, "80")


# -- a command line that explains itself ---------------------------------------------------------


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stopped:
        parse_args(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"memkeeper {version('memkeeper')}\n"


@pytest.mark.parametrize("verb", EVERY_VERB)
def test_every_option_of_every_verb_says_what_it_does(verb: str) -> None:
    parser = build_parser(verb)
    (verbs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    undocumented = [
        "/".join(action.option_strings)
        for action in verbs.choices[verb]._actions
        if action.option_strings and not action.help
    ]
    assert undocumented == []


@pytest.mark.parametrize("verb", EVERY_VERB)
def test_every_verbs_help_ends_with_examples_of_it(verb: str) -> None:
    shown = help_of([verb, "--help"])
    examples = shown.split("\nexamples:\n", 1)[1].splitlines()
    assert examples
    firsts = [line for line in examples if line.startswith("  ") and not line.startswith("   ")]
    assert firsts
    assert all(f"memkeeper {verb} " in f"{line} " for line in firsts)


def test_init_help_lists_the_presets() -> None:
    assert "presets: cline-memory-bank, default" in help_of(["init", "--help"])


def test_a_usage_error_is_a_usage_error_naming_the_command() -> None:
    with pytest.raises(Usage) as caught:
        parse_args(["patch", "CLAUDE.md#build"])
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith("memkeeper patch: the following arguments are required")

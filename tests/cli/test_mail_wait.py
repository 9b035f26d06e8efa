"""``inbox --wait S``, ``send --about`` checked, and ``abandon --message`` / ``--note-file``
from the command line: what they answer, and their errors, which change nothing."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tests.conftest import run_main

if TYPE_CHECKING:
    from pathlib import Path

ME, THEM = "claude-code:s1", "codex:t2"


def test_inbox_wait_answers_what_waits_and_nothing_when_its_time_is_up(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    assert run_main(sample, "--agent", THEM, "send", "--to", ME, "--text", "hi").code == 0
    got = run_main(sample, "--agent", ME, "inbox", "--wait", "30", "--json")
    assert [m["text"] for m in got.json["messages"]] == ["hi"]
    assert run_main(sample, "--agent", ME, "ack", "1").code == 0
    started = time.monotonic()
    none = run_main(sample, "--agent", ME, "inbox", "--wait", "0.2")
    assert (none.code, none.stdout) == (0, f"no messages for {ME}\n"), none.stderr
    assert time.monotonic() - started >= 0.2


def test_inbox_wait_refuses_what_makes_no_sense(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    for args, says in (
        (("--wait", "-1"), "give seconds from 0"),
        (("--wait", "nan"), "give seconds from 0"),
        (("--wait", "1", "--all"), "leave --all out"),
    ):
        run = run_main(sample, "--agent", ME, "inbox", *args)
        assert (run.code, says in run.stderr) == (2, True), run.stderr


def test_send_about_something_there_is_not_is_refused(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    bad = run_main(sample, "send", "--to", ME, "--about", "c404", "--text", "x")
    assert bad.code == 2
    assert "work:ID" in bad.stderr
    assert run_main(sample, "--agent", ME, "inbox", "--json").json["messages"] == []


def test_abandon_with_a_message_from_a_file_reaches_the_taker(sample: Path, tmp_path: Path) -> None:
    assert run_main(sample, "init").code == 0
    claim = run_main(sample, "--agent", THEM, "claim", "src/api/", "--json").json
    note = tmp_path / "note.md"
    note.write_text("the parser is half done\n")
    left = run_main(
        sample, "--agent", THEM, "abandon", claim["id"], "--reason", "called away",
        "--note-file", str(note), "--json",
    )  # fmt: skip
    assert left.code == 0, left.stderr
    assert left.json["evidence"]["reported"]["content"] == "the parser is half done\n"
    both = run_main(
        sample, "--agent", THEM, "abandon", claim["id"], "--reason", "x", "--message", "m",
        "--note-file", str(note),
    )  # fmt: skip
    assert both.code == 2
    assert "not allowed with" in both.stderr


def test_ack_takes_several_ids(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    for text in ("one", "two"):
        assert run_main(sample, "--agent", THEM, "send", "--to", ME, "--text", text).code == 0
    done = run_main(sample, "--agent", ME, "ack", "1", "2")
    assert (
        done.stdout == f"acknowledged message 1 from {THEM}\nacknowledged message 2 from {THEM}\n"
    )
    assert run_main(sample, "--agent", ME, "inbox", "--json").json["messages"] == []

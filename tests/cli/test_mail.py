"""``memkeeper send``, ``inbox``, ``ack``, ``request-release`` and ``answer``: their command
lines, their answers for people and in JSON, and their errors."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_main

ME = "claude-code:s1"


def test_send_inbox_ack_from_the_command_line(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    sent = run_main(sample, "send", "--to", ME, "--about", "CLAUDE.md#build", "--text", "moved")
    assert (sent.code, sent.stdout) == (0, f"sent {ME} (message 1, about CLAUDE.md#build)\n")
    listed = run_main(sample, "--agent", ME, "inbox")
    assert listed.stdout.splitlines()[0].endswith("message from human about CLAUDE.md#build (new)")
    assert listed.stdout.splitlines()[1] == "    moved"
    acked = run_main(sample, "--agent", ME, "ack", "1")
    assert acked.stdout == "acknowledged message 1 from human\n"
    assert run_main(sample, "--agent", ME, "inbox").stdout == f"no messages for {ME}\n"
    every = run_main(sample, "--agent", ME, "inbox", "--all", "--json").json
    assert [(m["id"], m["acked_at"] is not None) for m in every["messages"]] == [(1, True)]


def test_a_message_from_a_file_or_stdin(sample: Path, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("from a file\n")
    assert run_main(sample, "send", "--to", "all", "--file", str(note)).code == 0
    assert run_main(sample, "send", "--to", "all", "--file", "-", stdin="piped").code == 0
    texts = [m["text"] for m in run_main(sample, "--agent", ME, "inbox", "--json").json["messages"]]
    assert texts == ["from a file\n", "piped"]


def test_errors_say_what_to_do_and_change_nothing(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    empty = run_main(sample, "send", "--to", ME, "--text", " ")
    assert (empty.code, "the message is empty" in empty.stderr) == (2, True)
    nobody = run_main(sample, "send", "--to", "two words", "--text", "x")
    assert nobody.code == 2
    assert run_main(sample, "send", "--to", ME).code == 2  # neither --text nor --file
    missing = run_main(sample, "ack", "7")
    assert (missing.code, "memkeeper inbox" in missing.stderr) == (2, True)
    gone = run_main(sample, "request-release", "c404")
    assert (gone.code, "memkeeper claims" in gone.stderr) == (2, True)
    assert run_main(sample, "events", "--type", "message.*", "--json").stdout == ""  # none


def test_request_release_asks_the_holder(sample: Path) -> None:
    claim_id = run_main(sample, "--agent", ME, "claim", "CLAUDE.md#build", "--json").json["id"]
    asked = run_main(sample, "request-release", claim_id, "--text", "I need the build section")
    assert asked.stdout == f"asked {ME} (message 1, about {claim_id})\n"
    got = run_main(sample, "--agent", ME, "inbox", "--json").json["messages"][0]
    assert (got["kind"], got["text"]) == ("release-request", "I need the build section")


def test_a_refused_claim_asks_and_the_holder_answers(sample: Path) -> None:
    them = "codex:t2"
    assert run_main(sample, "init").code == 0
    assert run_main(sample, "claim", "docs/", "--agent", them).code == 0
    refused = run_main(sample, "claim", "docs/a.md", "--request-release", "--agent", ME, "--json")
    assert refused.code == 5
    assert refused.json["release_requested"] == [1]
    kept = run_main(sample, "answer", "1", "--reason", "tests", "--eta", "30", "--agent", them)
    assert kept.code == 0
    assert kept.stdout.startswith(f"answered {ME} (message 2): keeps claim c1 for now: tests")
    again = run_main(sample, "answer", "1", "--release", "--agent", them)
    assert (again.code, "answered already" in again.stderr) == (2, True)
    eta_alone = run_main(sample, "answer", "1", "--eta", "5", "--agent", them)
    assert eta_alone.code == 2
    inbox = run_main(sample, "inbox", "--agent", ME, "--json").json["messages"]
    assert [(m["kind"], m["about"]) for m in inbox] == [("release-answer", "c1")]

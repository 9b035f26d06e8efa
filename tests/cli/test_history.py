"""``log``, ``read --rev``, ``revert`` and the event filters through the command line."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.conftest import Cli

REF = "CLAUDE.md#build"


def patched(cli: Cli) -> None:
    for rev, body in ((1, "- one\n\n"), (2, "- two\n\n")):
        done = cli("patch", REF, "--expect-rev", str(rev), "--body-file", "-", stdin=body)
        assert done.code == 0, done.stderr


def test_log_for_people_and_as_json(cli: Cli) -> None:
    patched(cli)
    shown = cli("log", REF, "-p", "--agent", "x")
    assert shown.code == 0
    assert shown.stdout.startswith("CLAUDE.md#inventory-service/build: rev 3, 2 revision(s)")
    assert "    +- two" in shown.stdout
    revisions = cli("log", REF, "--json").json["revisions"]
    assert [r["rev"] for r in revisions] == [3, 2]


def test_read_rev_shows_the_earlier_body_and_says_which(cli: Cli) -> None:
    patched(cli)
    shown = cli("read", REF, "--rev", "2")
    assert shown.stdout == (
        "== CLAUDE.md#inventory-service/build (rev 2; the section is at rev 3)\n- one\n\n"
    )
    assert cli("read", REF, "--rev", "40", "--json").json["status"] == "invalid"


def test_revert_needs_both_revs_and_lands_as_a_patch(cli: Cli) -> None:
    patched(cli)
    assert cli("revert", REF, "--to-rev", "2").code == 2
    done = cli("revert", REF, "--to-rev", "2", "--expect-rev", "3", "--json")
    assert (done.code, done.json["rev"], done.json["reverted_to"]) == (0, 4, 2)
    assert cli("read", REF, "--json").json["content"] == "- one\n\n"


def test_events_filter_by_path_type_and_agent(cli: Cli) -> None:
    patched(cli)
    assert cli("claim", "src/", "--agent", "b").code == 0
    events = cli("events", "--json").stdout.splitlines()
    assert len(events) == 3
    by_type = cli("events", "--type", "claim.*", "--json").stdout.splitlines()
    assert len(by_type) == 1
    assert len(cli("events", "--path", "CLAUDE.md", "--json").stdout.splitlines()) == 2
    assert len(cli("events", "--actor", "b", "--json").stdout.splitlines()) == 1
    assert cli("events", "--actor", "nobody", "--json").stdout == ""
    # --agent stays who is acting (agents pass it on every command): it filters nothing
    assert len(cli("events", "--agent", "b", "--json").stdout.splitlines()) == 3

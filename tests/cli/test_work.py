"""``memkeeper work add | list | show | next | done | fail | return | wait``: their command
lines, their answers for people and in JSON, exit 5 when nothing can be taken, a late
``done`` refused as the claim verbs refuse, and bad input (exit 2, nothing changed)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.conftest import run_main

if TYPE_CHECKING:
    from pathlib import Path

A, B = "w1", "w2"


def as_(agent: str, sample: Path, *args: str) -> tuple[int, str, str]:
    done = run_main(sample, *args, "--agent", agent)
    return done.code, done.stdout, done.stderr


def test_a_queue_from_add_to_done(sample: Path, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text("Make `make` pass.\n")
    code, out, _ = as_(A, sample, "work", "add", "Fix the build", "--paths", "src/",
                       "--priority", "2", "--body-file", str(body))  # fmt: skip
    assert (code, out) == (0, "#1 [open] p2 Fix the build on src/\n")
    assert (
        as_(A, sample, "work", "add", "Docs", "--after", "1")[1] == "#2 [open] p0 Docs after #1\n"
    )
    code, out, _ = as_(A, sample, "work", "list", "--ready")
    assert (code, out) == (0, "#1 [open] p2 Fix the build on src/\n")
    code, out, _ = as_(B, sample, "work", "next", "--json")
    taken = json.loads(out)
    assert (code, taken["item"]["state"], taken["claim"]["objective"]) == (
        0, "claimed", "Fix the build",
    )  # fmt: skip
    code, _, err = as_(A, sample, "work", "next")
    assert code == 5
    assert "no work item is ready: 1 open wait on items not done yet, 1 are claimed" in err
    code, _, err = as_(A, sample, "work", "done", "1")
    assert (code, "claimed by w2" in err) == (4, True)
    claim = taken["claim"]["id"]
    code, out, _ = as_(B, sample, "work", "done", "1", "--claim", claim)
    assert (code, out) == (0, f"#1 [done by {B} ({claim})] p2 Fix the build on src/\n")
    code, out, _ = as_(A, sample, "work", "show", "1")
    assert out.endswith("\nMake `make` pass.\n")
    assert as_(A, sample, "work", "next")[0] == 0
    code, out, _ = as_(A, sample, "work", "fail", "2", "--reason", "no docs tool")
    assert out == "#2 [failed] p0 Docs after #1 — no docs tool\n"
    assert as_(A, sample, "work", "wait", "2", "--timeout", "5")[0] == 0


def test_return_puts_the_item_back_and_bad_input_changes_nothing(sample: Path) -> None:
    as_(A, sample, "work", "add", "x")
    as_(A, sample, "work", "next")
    code, out, _ = as_(A, sample, "work", "return", "1")
    assert (code, out) == (0, "#1 [open] p0 x\n")
    for bad in (["add", " "], ["add", "y", "--after", "7"], ["add", "y", "--paths", "/abs"]):
        code, _, err = as_(A, sample, "work", *bad)
        assert code == 2, err
    code, out, _ = as_(A, sample, "work", "list", "--json")
    assert [i["id"] for i in json.loads(out)["items"]] == [1]
    assert as_(A, sample, "work", "fail", "1", "--reason", "")[0] == 2


def test_edit_and_retry_answer_with_the_item_and_bad_edits_change_nothing(
    sample: Path, tmp_path: Path
) -> None:
    as_(A, sample, "work", "add", "x", "--paths", "src/")
    as_(A, sample, "work", "add", "y", "--after", "1")
    body = tmp_path / "body.md"
    body.write_text("Longer.\n")
    code, out, _ = as_(B, sample, "work", "edit", "2", "--title", "y2", "--priority", "3",
                       "--paths", "docs/", "--body-file", str(body),
                       "--expect-rev", "1")  # fmt: skip
    assert (code, out) == (0, "#2 [open] p3 y2 on docs/ after #1\n")
    code, out, _ = as_(B, sample, "work", "edit", "2", "--after", "--paths", "--expect-rev", "2")
    assert (code, out) == (0, "#2 [open] p3 y2\n")  # both cleared
    for bad in (["2", "--expect-rev", "3"], ["2", "--title", "z"], ["9", "--title", "z",
                "--expect-rev", "1"], ["2", "--priority", "x", "--expect-rev", "3"]):  # fmt: skip
        code, _, err = as_(A, sample, "work", "edit", *bad)
        assert code == 2, err
    assert as_(A, sample, "work", "show", "2", "--json")[1].count('"rev": 3') == 1
    assert as_(A, sample, "work", "next")[1].startswith("#2 [claimed by w1")  # p3 now, no after
    code, _, err = as_(A, sample, "work", "retry", "2")
    assert (code, "is claimed, not failed" in err) == (2, True)
    assert as_(A, sample, "work", "fail", "2", "--reason", "no")[0] == 0
    code, out, err = as_(B, sample, "work", "retry", "2")
    assert (code, out) == (0, "#2 [open] p3 y2\n"), err

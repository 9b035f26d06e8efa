"""``memkeeper meeting list | show | open | propose | accept | resolve``: their command lines,
their answers for people and in JSON, a stale ``--expect-rev`` (exit 3, the meeting as it
is now), and bad input (exit 2, nothing changed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.conftest import run_main

if TYPE_CHECKING:
    from pathlib import Path

A, B = "claude-code:s1", "codex:t2"


def as_(agent: str, sample: Path, *args: str) -> tuple[int, str, str]:
    done = run_main(sample, *args, "--agent", agent)
    return done.code, done.stdout, done.stderr


def test_a_meeting_from_open_to_a_split(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    assert as_(A, sample, "claim", "CLAUDE.md", "--strict")[0] == 0
    code, out, _ = as_(B, sample, "meeting", "open", "--with", A, "--targets", "CLAUDE.md")
    assert code == 0
    assert out.startswith("meeting 1 rev 1 (deadline ")
    assert out.splitlines()[1] == f"  participants: {B}, {A}"
    code, out, _ = as_(
        B, sample, "meeting", "propose", "1", "--expect-rev", "1",
        "--split", f"{A}=CLAUDE.md#build", "--split", f"{B}=CLAUDE.md#testing",
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[2] == (
        f"  [1] {B}: split — {A}: CLAUDE.md#inventory-service/build; "
        f"{B}: CLAUDE.md#inventory-service/testing (accepted by {B})"
    )
    assert as_(A, sample, "meeting", "accept", "1", "1", "--expect-rev", "2")[0] == 0
    code, out, _ = as_(A, sample, "meeting", "resolve", "1", "--expect-rev", "3", "--proposal", "1")
    assert (code, out.splitlines()[0]) == (0, "meeting 1 rev 4 (resolved) on CLAUDE.md")
    claims = run_main(sample, "claims", "--json").json["claims"]
    assert {c["agent"]: c["targets"] for c in claims} == {
        A: ["CLAUDE.md#inventory-service/build"],
        B: ["CLAUDE.md#inventory-service/testing"],
    }
    listed = run_main(sample, "meeting", "list", "--all", "--json").json["meetings"]
    assert [(m["id"], m["state"]) for m in listed] == [(1, "resolved")]
    assert run_main(sample, "meeting", "list").stdout == "no meetings\n"


def test_a_stale_rev_is_exit_3_with_the_meeting_now(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    assert as_(A, sample, "meeting", "open", "--with", B, "--targets", "docs/")[0] == 0
    assert as_(A, sample, "meeting", "propose", "1", "--expect-rev", "1", "--join")[0] == 0
    stale = run_main(
        sample, "meeting", "accept", "1", "1", "--expect-rev", "1", "--agent", B, "--json"
    )
    assert stale.code == 3
    assert stale.json["current"]["rev"] == 2
    assert stale.json["status"] == "conflict"


def test_bad_input_is_exit_2_and_changes_nothing(sample: Path) -> None:
    assert run_main(sample, "init").code == 0
    assert as_(A, sample, "meeting", "open", "--with", A, "--targets", "docs/")[0] == 2
    assert as_(A, sample, "meeting", "show", "9")[0] == 2
    assert as_(A, sample, "meeting", "open", "--with", B, "--targets", "docs/")[0] == 0
    bad = as_(A, sample, "meeting", "propose", "1", "--expect-rev", "1", "--split", "nobody")
    assert (bad[0], "AGENT=TARGET" in bad[2]) == (2, True)
    assert as_(A, sample, "meeting", "propose", "1", "--expect-rev", "1")[0] == 2  # no plan
    assert run_main(sample, "meeting", "show", "1", "--json").json["meeting"]["rev"] == 1

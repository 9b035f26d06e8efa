"""Output for people: each verb's payload, rendered as short text that says the facts that
matter. Payloads come from the verbs themselves (``--json``), so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from memkeeper.cli.output import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Cli

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def payload(cli: Cli, *args: str, **kwargs: Any) -> dict[str, Any]:
    """What a verb returns: its JSON without the boundary's ``status``."""
    done = cli(*args, "--json", **kwargs)
    assert done.code == 0, done.stdout + done.stderr
    data = done.json
    del data["status"]
    return data


def people(cli: Cli, *args: str, **kwargs: Any) -> str:
    """A verb's output without ``--json``."""
    done = cli(*args, **kwargs)
    assert done.code == 0, done.stderr
    return done.stdout


def patch_build(cli: Cli, body: str, rev: int = 1, *args: str) -> str:
    return people(
        cli, "patch", "CLAUDE.md#build", "--expect-rev", str(rev), "--body-file", "-", *args,
        stdin=body,
    )  # fmt: skip


# -- reading -------------------------------------------------------------------------------------


def test_a_section_is_shown_with_its_ref_rev_and_hash_then_its_text(cli: Cli) -> None:
    p = payload(cli, "read", "CLAUDE.md#build")
    text = render("read", p)
    head = f"== CLAUDE.md#inventory-service/build (rev 1, {p['hash']})\n## Build\n"
    assert text == head + p["content"]
    assert people(cli, "read", "CLAUDE.md#build") == text


def test_a_whole_file_is_shown_with_its_file_rev(cli: Cli, sample: Path) -> None:
    text = people(cli, "read", "AGENTS.md")
    head, _, rest = text.partition("\n")
    assert re.fullmatch(r"== AGENTS\.md \(file rev 1, sha256:[0-9a-f]+\)", head)
    assert rest == (sample / "AGENTS.md").read_text()


@pytest.mark.parametrize(
    ("content", "shown"),
    [("body", "body\n"), ("body\n", "body\n"), ("body\r", "body\r"), ("", "")],
)
def test_a_text_is_always_ended_by_a_line_end_unless_it_is_empty(content: str, shown: str) -> None:
    p = {"path": "a.md", "key": "k", "heading": "", "content": content, "rev": 2, "hash": "h"}
    assert render("read", p) == f"== a.md#k (rev 2, h)\n{shown}"


def test_sections_are_listed_one_a_line_indented_by_level(cli: Cli) -> None:
    text = render("sections", payload(cli, "sections", "memory/architecture.md"))
    assert text.splitlines() == [
        "memory/architecture.md: 4 section(s)",
        "      1-4     rev 1    _preamble",
        "      5-6     rev 1    architecture",
        "      7-11    rev 1    inventory",
        "     12-14    rev 1      inventory/storage",
    ]


# -- writing -------------------------------------------------------------------------------------


def test_a_patch_says_the_new_revisions(cli: Cli) -> None:
    assert patch_build(cli, "one\n") == (
        "patched CLAUDE.md#inventory-service/build: now rev 2 (file rev 2)\n"
    )


def test_a_patch_under_an_advisory_claim_says_so_in_a_warning(cli: Cli) -> None:
    people(cli, "claim", "CLAUDE.md", "--agent", "agent-b")
    lines = patch_build(cli, "one\n").splitlines()
    assert lines[0].startswith("patched CLAUDE.md#inventory-service/build: now rev 2")
    assert lines[1].startswith("warning: agent-b holds write claim c1 on CLAUDE.md (")


def test_an_append_says_where_the_entry_landed(cli: Cli) -> None:
    text = people(cli, "append", "memory/decisions.md", "--text", "Use etcd.")
    assert re.fullmatch(r"appended memory/decisions\.md:9-11 \(file rev \d+, event \d+\)\n", text)


def test_an_emitted_event_is_named_with_its_data(cli: Cli) -> None:
    first = people(cli, "emit", "task.completed", "--data", '{"task": "t1"}')
    assert first == 'recorded event 1: task.completed {"task": "t1"}\n'
    assert people(cli, "emit", "task.started") == "recorded event 2: task.started\n"


def test_events_are_one_line_each_with_id_time_actor_type_place_and_data(cli: Cli) -> None:
    people(cli, "emit", "risk.found", "--agent", "ci", "--data", '{"title": "flaky"}')
    patch_build(cli, "one\n")
    lines = people(cli, "events").splitlines()
    assert re.fullmatch(rf"    1 {ISO} ci +risk\.found +\{{\"title\": \"flaky\"\}}", lines[0])
    assert re.match(
        rf"    2 {ISO} human +section\.patched +CLAUDE\.md#inventory-service/build ", lines[1]
    )
    assert all(line == line.rstrip() for line in lines)


def test_no_events_print_nothing() -> None:
    assert render("events", {"events": []}) == ""


# -- state of the memory -------------------------------------------------------------------------


def test_status_names_the_root_the_policy_and_each_managed_file(cli: Cli, sample: Path) -> None:
    lines = people(cli, "status").splitlines()
    assert lines[:4] == [
        f"root: {sample.resolve()}",
        "policy: .memkeeper.yaml",
        "store: sqlite (.memkeeper/state.db)",
        "managed files: 7",
    ]
    assert "  append-only    memory/decisions.md (2 sections)" in lines
    assert "  private        memory/scratch/agent-a.md" in lines


def test_status_lists_live_claims_and_open_reconciliations(cli: Cli, sample: Path) -> None:
    people(cli, "claim", "src/", "--agent", "agent-b", "--ttl", "60")
    people(cli, "regen")
    status = sample / "memory/status.md"
    status.write_text(status.read_text().replace("| agent-b |", "| someone |"))
    people(cli, "regen")
    lines = people(cli, "status").splitlines()
    at = lines.index("open reconciliations: 1 (memkeeper reconcile list)")
    assert lines[at + 1] == "  #1 memory/status.md region claims"
    at = lines.index("live claims: 1")
    assert lines[at + 1] == "  c1 agent-b write src/ (60s left)"


def test_a_root_without_a_policy_says_nothing_is_managed(tmp_path: Path) -> None:
    p: dict[str, Any] = {"root": str(tmp_path), "policy": None, "files": []}
    assert render("status", p) == (
        f"root: {tmp_path}\npolicy: (none: nothing is managed)\nmanaged files: 0\n"
    )


def test_init_from_a_preset_says_it_created_the_policy(tmp_path: Path, cli: Cli) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "CLAUDE.md").write_text("# P\n\n## Build\n\nmake\n")
    text = people(cli, "init", "--preset", "default", cwd=fresh)
    assert "\ncreated .memkeeper.yaml from preset 'default'\n" in text
    assert text.endswith("managed files: 1\n  section-owned  CLAUDE.md (2 sections)\n")


def test_init_offers_the_howto_then_says_what_init_howto_did(cli: Cli) -> None:
    lines = people(cli, "init").splitlines()
    tip = "tip: `memkeeper init --howto` adds a section telling agents how to change each "
    assert lines[2] == tip + "memory file to CLAUDE.md, AGENTS.md"
    assert lines[3].startswith("managed files: ")
    lines = people(cli, "init", "--howto").splitlines()
    assert lines[2:5] == [
        "howto CLAUDE.md: added",
        "howto AGENTS.md: added",
        "howto GEMINI.md: missing",
    ]
    assert people(cli, "init").splitlines()[2].startswith("managed files: ")  # all current


@pytest.mark.peer("git")
def test_a_passing_check_counts_what_it_checked(cli: Cli) -> None:
    assert render("check", payload(cli, "check")) == (
        "ok: 6 managed file(s) checked, no violations\n"
    )
    staged = {"staged": True, "checked": ["a.md"], "warnings": ["w1", "w2"]}
    assert render("check", staged) == (
        "warning: w1\nwarning: w2\nok: 1 staged file(s) checked, no violations\n"
    )


def test_verify_counts_the_events_and_the_indexed_files(cli: Cli) -> None:
    patch_build(cli, "one\n")
    text = people(cli, "verify")
    assert re.fullmatch(
        r"ok: event chain of 1 event\(s\) intact, \d+ indexed file\(s\) match\n"
        r"  no checkpoint was written: this process has no key \(memkeeper keys init makes one\)\n",
        text,
    )


# -- generated regions -------------------------------------------------------------------------


def edit_claims_region(sample: Path) -> None:
    status = sample / "memory/status.md"
    status.write_text(status.read_text().replace("_No live claims._", "agent-b is away"))


def test_regen_says_what_it_rendered_and_then_that_all_is_current(cli: Cli) -> None:
    assert people(cli, "regen") == "memory/status.md: rendered claims, events, decisions-feed\n"
    assert people(cli, "regen") == "memory/status.md: already current\n"
    assert render("regen", {"files": [], "reconciliations": []}) == "no generated files\n"


def test_regen_names_a_region_left_alone_and_its_reconciliation(cli: Cli, sample: Path) -> None:
    people(cli, "regen")
    edit_claims_region(sample)
    assert people(cli, "regen").splitlines() == [
        "memory/status.md: rendered events; left alone (edited by hand): claims",
        "#1 open: memory/status.md region claims, opened by human",
    ]


def test_reconcile_lists_shows_the_diff_and_resolves(cli: Cli, sample: Path) -> None:
    assert people(cli, "reconcile", "list") == "no open reconciliations\n"
    people(cli, "regen")
    edit_claims_region(sample)
    people(cli, "regen")
    assert people(cli, "reconcile", "list") == (
        "#1 open: memory/status.md region claims, opened by human\n"
    )
    shown = people(cli, "reconcile", "show", "1").splitlines()
    assert re.fullmatch(
        rf"#1 open: memory/status\.md region claims, opened by human {ISO}", shown[0]
    )
    assert shown[-2:] == ["-_No live claims._", "+agent-b is away"]
    resolved = people(cli, "reconcile", "resolve", "1", "--keep-human", "--agent", "agent-b")
    assert resolved == "resolved #1 (keep-human): memory/status.md region claims\n"
    listed = people(cli, "reconcile", "list", "--all")
    assert listed.startswith("#1 resolved (keep-human): memory/status.md region claims")


def test_a_reconciliation_with_no_difference_left_says_so() -> None:
    p = {"action": "show", "id": 3, "path": "s.md", "region": "r", "opened_by": "a",
         "opened_at": "T", "resolution": None, "diff": ""}  # fmt: skip
    assert render("reconcile", p) == "#3 open: s.md region r, opened by a T\n(no difference left)\n"


# -- claims --------------------------------------------------------------------------------------


def test_a_claim_is_granted_renewed_and_released_in_one_line_each(cli: Cli) -> None:
    as_b = ("--agent", "agent-b")
    granted = people(cli, "claim", "src/", "docs/", "--strict", "--ttl", "60", *as_b)
    assert re.fullmatch(
        rf"granted c1 token 1: agent-b write strict on src/, docs/ until {ISO} \(60 s left\)\n",
        granted,
    )
    renewed = people(cli, "renew", "c1", "--ttl", "300", *as_b)
    assert renewed.startswith("renewed c1 token 1: agent-b write strict on src/, docs/ until ")
    assert renewed.endswith(" (300 s left)\n")
    assert people(cli, "release", "c1", *as_b) == "released c1 (token 1) on src/, docs/\n"


def test_claims_lists_holders_and_the_queue(cli: Cli) -> None:
    people(cli, "claim", "src/", "--mode", "read", "--agent", "agent-b")
    lines = render("claims", payload(cli, "claims")).splitlines()
    assert lines[0] == "live claims: 1"
    assert lines[1].startswith("  c1 token 1: agent-b read on src/ until ")
    assert lines[2:] == ["queued requests: 0"]
    waiter = {"id": "r2", "agent": "agent-c", "mode": "write", "targets": ["src/"],
              "priority": 5, "seconds_left": 9}  # fmt: skip
    queued = render("claims", {"claims": [], "waiters": [waiter]})
    assert queued.endswith(
        "queued requests: 1\n  r2: agent-c write on src/ (priority 5, gives up in 9 s)\n"
    )


def test_metrics_read_as_a_small_table_over_the_window(cli: Cli) -> None:
    people(cli, "claim", "src/", "--agent", "agent-b")
    lines = people(cli, "metrics").splitlines()
    assert lines[0] == "last 60 min (held and queued: now)"
    assert "  claims held        1" in lines
    assert "  claims granted     1" in lines
    assert len(lines) == 7


# -- hooks, the daemon and the rest ------------------------------------------------------------


def test_a_daemon_outcome_is_one_line_with_the_time_place_and_event() -> None:
    indexed = {"action": "indexed", "path": "CLAUDE.md", "section": "build",
               "detail": "edited outside memkeeper, now rev 2", "event": 7}  # fmt: skip
    line = render("watch", indexed)
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d indexed     CLAUDE\.md#build: edited outside memkeeper, now rev 2 "
        r"\(event 7\)\n",
        line,
    )
    stopped = {"action": "expired", "path": None, "detail": "claim c1", "event": None}
    assert re.fullmatch(r"\d\d:\d\d:\d\d expired     claim c1\n", render("watch", stopped))


def test_a_verb_without_a_renderer_is_shown_as_indented_json() -> None:
    assert (
        render("future-verb", {"b": [1], "a": "é"}) == '{\n  "b": [\n    1\n  ],\n  "a": "é"\n}\n'
    )


READ = {
    "path": "CLAUDE.md",
    "key": "build",
    "rev": 3,
    "file_rev": 7,
    "hash": "sha256:ab",
    "heading": "## Build\n",
    "content": "make\n",
}


def test_a_read_the_shared_store_did_not_answer_says_so_first_for_people() -> None:
    shown = render("read", {**READ, "stale": True})
    assert shown.startswith("== STALE: the shared store did not answer;")
    assert shown.endswith("== CLAUDE.md#build (rev 3, sha256:ab)\n## Build\nmake\n")
    assert render("read", {**READ, "stale": False}) == (
        "== CLAUDE.md#build (rev 3, sha256:ab)\n## Build\nmake\n"
    )

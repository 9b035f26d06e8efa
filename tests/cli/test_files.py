"""append, regen and reconcile through the CLI's ``main``, several agents at once."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.regions.markers import parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Cli


STATUS = "memory/status.md"
DECISIONS = "memory/decisions.md"


def edit_claims_region(sample: Path, text: str) -> None:
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", text))


def test_append_adds_an_entry_and_reports_where(cli: Cli, sample: Path) -> None:
    done = cli("append", DECISIONS, "--text", "Use etcd.", "--agent", "agent-a", "--json")
    assert done.code == 0, done.stdout
    assert (done.json["status"], done.json["start_line"], done.json["end_line"]) == ("ok", 9, 11)
    text = (sample / DECISIONS).read_text()
    assert re.search(r"\n\n## \d{4}-\d\d-\d\d — agent-a\n\nUse etcd\.\n$", text)
    human = cli("append", DECISIONS, "--text", "Again.")
    assert human.stdout.startswith(f"appended {DECISIONS}:13-15")


def test_append_reads_an_entry_file_or_stdin(cli: Cli, sample: Path) -> None:
    (sample / "entry.txt").write_text("From a file.\n")
    assert cli("append", "memory/risks.md", "--entry-file", "entry.txt").code == 0
    assert cli("append", "memory/risks.md", "--entry-file", "-", stdin="From stdin.\n").code == 0
    assert (sample / "memory/risks.md").read_text().endswith("\n\nFrom a file.\n\nFrom stdin.\n")


def append_many(root: Path, agent: str, count: int, failures: list[BaseException]) -> None:
    """``count`` appends as ``agent``, through a ``Memory`` of its own: the CLI run in this
    process (``run_main``) sets the process's working directory, environment and stdio,
    which threads share."""
    memory = Memory.open(root, agent=agent)
    try:
        for n in range(count):
            try:
                memory.append(DECISIONS, f"first line of {agent}/{n}\nsecond line of {agent}/{n}")
            except Exception as exc:  # the test reports every failure
                failures.append(exc)
    finally:
        memory.close()


def test_racing_appends_all_land_whole_in_commit_order(cli: Cli, sample: Path) -> None:
    failures: list[BaseException] = []
    agents = [f"agent-{n}" for n in range(4)]
    threads = [threading.Thread(target=append_many, args=(sample, a, 10, failures)) for a in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    text = (sample / DECISIONS).read_text()
    entries = re.findall(
        r"## \S+ — (agent-\d)\n\nfirst line of (agent-\d/\d+)\nsecond line of (agent-\d/\d+)\n",
        text,
    )
    assert len(entries) == 40
    assert all(who == first.split("/")[0] and first == second for who, first, second in entries)
    for agent in agents:  # each agent's own entries stay in the order it wrote them
        mine = [int(first.split("/")[1]) for who, first, _ in entries if who == agent]
        assert mine == list(range(10))
    events = [json.loads(line) for line in cli("events", "--json").stdout.splitlines()]
    appended = [e for e in events if e["type"] == "entry.appended"]
    assert [e["actor"] for e in appended] == [who for who, _, _ in entries]
    lines = [e["data"]["start_line"] for e in appended]
    assert lines == sorted(lines)
    assert cli("verify").code == 0


def test_regen_renders_claims_events_and_is_idempotent(cli: Cli, sample: Path) -> None:
    assert cli("claim", "src/api/", "--agent", "agent-b", "--ttl", "600").code == 0
    assert cli("append", DECISIONS, "--text", "Use etcd.", "--agent", "agent-a").code == 0
    done = cli("regen", "--json")
    assert done.code == 0, done.stdout
    (result,) = done.json["files"]
    assert (result["path"], result["rendered"], result["written"]) == (
        STATUS,
        ["claims", "events", "decisions-feed"],
        True,
    )
    text = (sample / STATUS).read_text()
    assert "| agent-b | write | src/api/ |" in text
    assert "agent-a entry.appended memory/decisions.md: Use etcd." in text
    again = cli("regen", STATUS, "--json").json["files"][0]
    assert (again["written"], again["unchanged"]) == (False, ["claims", "events", "decisions-feed"])
    assert (sample / STATUS).read_text() == text


def test_marker_arguments_filter_the_events_region(cli: Cli, sample: Path) -> None:
    path = sample / STATUS
    path.write_text(
        path.read_text().replace("source=events", "source=events types=entry.appended limit=1")
    )
    cli("append", DECISIONS, "--text", "One.")
    cli("append", DECISIONS, "--text", "Two.")
    cli("claim", "src/", "--ttl", "60")
    assert cli("regen").code == 0
    data = path.read_bytes()
    (events,) = [r for r in parse(data, STATUS) if r.id == "events"]
    text = events.text(data).decode()
    assert "Two." in text
    assert "One." not in text
    assert "claim.granted" not in text


@pytest.mark.peer("git")
def test_a_hand_edit_goes_through_reconciliation(cli: Cli, sample: Path) -> None:
    assert cli("regen").code == 0
    edit_claims_region(sample, "agent-z is on the API")
    first = cli("regen", "--json").json
    assert first["files"][0]["edited"] == ["claims"]
    (rec,) = first["reconciliations"]
    assert (rec["id"], rec["region"], rec["state"]) == (1, "claims", "open")
    cli("regen")
    listed = cli("reconcile", "list", "--json").json["reconciliations"]
    assert [r["id"] for r in listed] == [1]
    shown = cli("reconcile", "show", "1")
    assert "-_No live claims._\n+agent-z is on the API\n" in shown.stdout
    status = cli("status", "--json").json
    assert [r["id"] for r in status["reconciliations"]] == [1]
    resolved = cli("reconcile", "resolve", "1", "--keep-human", "--json")
    assert resolved.code == 0, resolved.stdout
    assert resolved.json["resolution"] == "keep-human"
    text = (sample / STATUS).read_text()
    assert "agent-z is on the API\n\n<!-- memkeeper:generated source=claims -->" in text
    events = [json.loads(line)["type"] for line in cli("events", "--json").stdout.splitlines()]
    assert events.count("reconcile.opened") == 1
    assert events[-1] == "reconcile.resolved"
    assert cli("reconcile", "list", "--json").json["reconciliations"] == []
    assert cli("check").code == 0


def test_reconcile_json_says_ok_and_puts_the_reconciliations_own_state_apart(
    cli: Cli, sample: Path
) -> None:
    cli("regen")
    edit_claims_region(sample, "stale note")
    cli("regen")
    shown = cli("reconcile", "show", "1", "--json")
    assert (shown.code, shown.json["status"], shown.json["state"]) == (0, "ok", "open")
    (listed,) = cli("reconcile", "list", "--json").json["reconciliations"]
    assert listed["state"] == "open"
    assert "status" not in listed
    resolved = cli("reconcile", "resolve", "1", "--take-generated", "--json")
    assert (resolved.code, resolved.json["status"], resolved.json["state"]) == (0, "ok", "resolved")
    assert resolved.json["action"] == "resolve"


def test_take_generated_renders_over_the_edit(cli: Cli, sample: Path) -> None:
    cli("regen")
    edit_claims_region(sample, "stale note")
    cli("regen")
    assert cli("reconcile", "resolve", "1", "--take-generated").code == 0
    assert "stale note" not in (sample / STATUS).read_text()


def test_a_patch_into_a_region_is_refused_and_one_beside_it_lands(cli: Cli) -> None:
    cli("regen")
    sec = cli("read", f"{STATUS}#status/live-claims", "--json").json
    inside = sec["content"].replace("_No live claims._", "forged")
    ref = f"{STATUS}#status/live-claims"
    rev = str(sec["rev"])
    refused = cli("patch", ref, "--expect-rev", rev, "--body-file", "-", "--json", stdin=inside)
    assert refused.code == 4
    assert refused.json["reason"] == "class"
    beside = "\nWho holds what:\n" + sec["content"]
    landed = cli("patch", ref, "--expect-rev", rev, "--body-file", "-", stdin=beside)
    assert landed.code == 0, landed.stderr

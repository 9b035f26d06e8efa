"""Claims through ``main(argv)``, in this process: overlapping targets, the TTL cap, readers
and writers, expiry and fencing, who renews and releases, advisory and strict claims, and what
``claims`` and ``metrics`` report. Waiters in separate processes:
tests/e2e/test_claims_processes.py."""

from __future__ import annotations

import json
import time
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import Cli, Run


def as_agent(cli: Cli, agent: str, *args: str, stdin: str | None = None) -> Run:
    return cli("--agent", agent, *args, "--json", stdin=stdin)


def claim_events(cli: Cli) -> list[dict[str, Any]]:
    lines = cli("events", "--json").stdout.splitlines()
    return [e for e in map(json.loads, lines) if e["type"].startswith("claim.")]


def test_targets_overlap_on_whole_segments_sections_and_globs(cli: Cli) -> None:
    assert as_agent(cli, "a", "claim", "src/api/", "CLAUDE.md#build").code == 0
    granted = [
        ("src/ap",),
        ("src/apiary/x.py",),
        ("CLAUDE.md#testing",),
        ("docs/**/*.md", "memory/"),
    ]
    for targets in granted:
        run = as_agent(cli, "b", "claim", *targets)
        assert run.code == 0, run.stdout
    refused = [("src/api",), ("src/api/v1/x.py",), ("src/**/*.py",), ("CLAUDE.md",), ("*.md",)]
    for targets in refused:
        run = as_agent(cli, "c", "claim", *targets)
        assert run.code == 5, (targets, run.stdout)
        assert run.json["status"] == "busy"
        assert run.json["holders"][0]["agent"] == "a"
    section = as_agent(cli, "c", "claim", "CLAUDE.md#inventory-service")
    assert section.code == 5
    assert section.json["holders"][0]["targets"] == [
        "src/api/",
        "CLAUDE.md#inventory-service/build",
    ]


def test_a_ttl_above_the_maximum_is_granted_at_the_maximum_with_a_warning(cli: Cli) -> None:
    capped = as_agent(cli, "a", "claim", "src/", "--ttl", "7200")
    assert capped.code == 0, capped.stdout
    assert 3590 < capped.json["seconds_left"] <= 3600
    (warning,) = capped.json["warnings"]
    assert warning.startswith("ttl 7200 s is above the policy's leases.max_ttl of 3600 s")
    assert as_agent(cli, "a", "claim", "docs/", "--ttl", "60").json["warnings"] == []
    renewed = cli("--agent", "a", "renew", capped.json["id"], "--ttl", "9000")
    assert renewed.code == 0
    assert renewed.stdout.startswith("renewed ")
    assert renewed.stdout.endswith(
        "\nwarning: ttl 9000 s is above the policy's leases.max_ttl "
        "of 3600 s: granted for 3600 s — renew before it expires, or "
        "raise max_ttl in .memkeeper.yaml\n"
    )
    claims = cli("claims", "--json").json["claims"]
    assert all("warnings" not in c for c in claims)


def test_readers_share_a_scope_and_a_writer_is_busy(cli: Cli) -> None:
    assert as_agent(cli, "a", "claim", "docs/", "--mode", "read").code == 0
    assert as_agent(cli, "b", "claim", "docs/guide.md", "--mode", "read").code == 0
    busy = as_agent(cli, "c", "claim", "docs/guide.md")
    assert busy.code == 5
    assert sorted(h["agent"] for h in busy.json["holders"]) == ["a", "b"]
    assert all(h["seconds_left"] == 120 for h in busy.json["holders"])
    assert "expires_at" in busy.json["holders"][0]


def test_expiry_frees_the_scope_and_fences_a_late_write(cli: Cli) -> None:
    held = as_agent(cli, "a", "claim", "CLAUDE.md#build", "--ttl", "1").json
    body = "- built under a claim\n\n"
    early = as_agent(
        cli, "a", "patch", "CLAUDE.md#build", "--expect-rev", "1", "--claim", held["id"],
        "--body-file", "-", stdin=body,
    )  # fmt: skip
    assert early.code == 0, early.stdout
    time.sleep(1.2)  # the one real wait: a TTL of one second runs out
    taken = as_agent(cli, "b", "claim", "CLAUDE.md#build")
    assert taken.code == 0, taken.stdout
    assert taken.json["token"] > held["token"]
    late = as_agent(
        cli, "a", "patch", "CLAUDE.md#build", "--expect-rev", "2", "--claim", held["id"],
        "--body-file", "-", stdin="- too late\n\n",
    )  # fmt: skip
    assert (late.code, late.json["reason"]) == (4, "claimed")
    borrowed = as_agent(
        cli, "a", "patch", "CLAUDE.md#build", "--expect-rev", "2", "--claim", taken.json["id"],
        "--body-file", "-", stdin="- not mine\n\n",
    )  # fmt: skip
    assert (borrowed.code, borrowed.json["reason"]) == (4, "claimed")
    assert "belongs to b" in borrowed.json["message"]
    kinds = [(e["type"], e["data"]["id"]) for e in claim_events(cli)]
    assert kinds == [
        ("claim.granted", held["id"]),
        ("claim.expired", held["id"]),
        ("claim.granted", taken.json["id"]),
    ]
    assert cli("read", "CLAUDE.md#build", "--json").json["content"] == body


def test_only_the_holder_renews_or_releases(cli: Cli) -> None:
    held = as_agent(cli, "a", "claim", "src/", "--ttl", "60").json
    for verb in ("renew", "release"):
        run = as_agent(cli, "b", verb, held["id"])
        assert (run.code, run.json["status"], run.json["reason"]) == (4, "refused", "not_holder")
    renewed = as_agent(cli, "a", "renew", held["id"], "--ttl", "300")
    assert (renewed.code, renewed.json["seconds_left"]) == (0, 300)
    assert as_agent(cli, "a", "release", held["id"]).code == 0
    again = as_agent(cli, "a", "release", held["id"])
    assert (again.code, again.json["reason"]) == (2, "released")
    assert cli("claims", "--json").json["claims"] == []


def test_advisory_claims_warn_and_strict_ones_refuse(cli: Cli) -> None:
    as_agent(cli, "a", "claim", "CLAUDE.md#build")
    as_agent(cli, "a", "claim", "CLAUDE.md#testing", "--strict")
    advised = as_agent(
        cli, "b", "patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-",
        stdin="b's build notes\n\n",
    )  # fmt: skip
    assert advised.code == 0
    (warning,) = advised.json["warnings"]
    assert "a holds write claim" in warning
    refused = as_agent(
        cli, "b", "patch", "CLAUDE.md#testing", "--expect-rev", "1", "--body-file", "-",
        stdin="b's test notes\n\n",
    )  # fmt: skip
    assert (refused.code, refused.json["status"], refused.json["reason"]) == (
        4,
        "refused",
        "claimed",
    )
    assert "a holds strict write claim" in refused.json["message"]
    assert refused.json["holders"][0]["expires_at"]
    people = cli("--agent", "b", "patch", "CLAUDE.md#build", "--expect-rev", "2",
                 "--body-file", "-", stdin="again\n\n")  # fmt: skip
    assert "warning: a holds write claim" in people.stdout


def test_claims_and_metrics_report_holders_and_the_queue(cli: Cli) -> None:
    held = as_agent(cli, "a", "claim", "src/", "--objective", "split the API").json
    listed = cli("claims", "--json").json
    assert listed["status"] == "ok"
    (claim,) = listed["claims"]
    assert set(claim) >= {"id", "token", "agent", "mode", "targets", "priority", "strict"}
    assert (claim["id"], claim["objective"]) == (held["id"], "split the API")
    assert listed["waiters"] == []
    metrics = cli("metrics", "--json").json
    assert (metrics["claims_held"], metrics["queue_depth"], metrics["conflicts"]) == (1, 0, 0)
    assert held["id"] in cli("claims").stdout
    assert "claims held" in cli("metrics").stdout


def test_claims_and_claim_show_carry_the_watchdogs_idle_mark(cli: Cli, sample: Path) -> None:
    from memkeeper import Memory
    from memkeeper.ops.idleclaims import mark_idle

    held = as_agent(cli, "a", "claim", "src/").json
    assert cli("claims", "--json").json["claims"][0]["idle"] is None
    assert "idle" not in cli("claims").stdout
    memory = Memory.open(sample, agent="watcher")
    event = mark_idle(memory.workspace, memory.claims()[0], 1200.0, 0.0)
    memory.close()
    assert event is not None
    mark = {"since": event.ts, "idle_s": 1200.0, "event": event.id}
    assert cli("claims", "--json").json["claims"][0]["idle"] == mark
    assert f"idle since {event.ts}" in cli("claims").stdout
    assert cli("claim", "show", held["id"], "--json").json["idle"] == mark

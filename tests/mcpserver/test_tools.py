"""The MCP tools as plain functions over a ``Memory``: the CLI's JSON with ``status``, errors
as ordinary results, and a cancellable wait for a claim."""

from __future__ import annotations

import threading
import time

import pytest

from memkeeper import Memory
from memkeeper.mcpserver import tools
from memkeeper.ops.claimwaits import WaitCancelled


def test_a_result_is_the_clis_json_with_status_ok(memory: Memory) -> None:
    read = tools.answer(lambda: tools.read(memory, "CLAUDE.md#build"))
    assert read["status"] == "ok"
    assert read == {"status": "ok", **memory.read("CLAUDE.md#build").to_json()}


def test_a_stale_patch_is_a_conflict_result_with_the_current_section(memory: Memory) -> None:
    def patch(body: str) -> dict[str, object]:
        return tools.answer(
            lambda: tools.patch(memory, "CLAUDE.md#build", 1, body, None, None, None)
        )

    assert patch("- one\n\n")["status"] == "ok"
    stale = patch("- two\n\n")
    assert stale["status"] == "conflict"
    assert stale["reason"] == "stale_revision"
    current = stale["current"]
    assert isinstance(current, dict)
    assert (current["rev"], current["content"]) == (2, "- one\n\n")
    assert stale["recover"]  # what to do next, spelled out
    # as this client does it: the tool's call, not the command line
    recover = str(stale["recover"])
    assert recover.startswith(
        'memory_patch(ref="CLAUDE.md#inventory-service/build", expect_rev=2, body=...)'
    )
    assert "memkeeper patch" not in recover


@pytest.mark.parametrize(("body", "dmp"), [(None, None), ("x\n", "@@ -1 +1 @@")])
def test_a_patch_needs_exactly_one_of_body_and_dmp(
    memory: Memory, body: str | None, dmp: str | None
) -> None:
    got = tools.answer(lambda: tools.patch(memory, "CLAUDE.md#build", 1, body, dmp, None, None))
    assert got["status"] == "invalid"
    assert "exactly one of body" in str(got["message"])
    assert memory.read("CLAUDE.md#build").rev == 1  # nothing written


def test_refused_and_busy_are_results_too(memory: Memory) -> None:
    refused = tools.answer(lambda: tools.append(memory, "CLAUDE.md", "## x\n\ny\n"))
    assert refused["status"] == "refused"
    other = Memory(memory.root, "agent-b")
    granted = tools.answer(lambda: tools.claim(other, ["src/"], "write", 60, 0, False, None, ""))
    assert (granted["status"], granted["agent"]) == ("ok", "agent-b")
    busy = tools.answer(lambda: tools.claim(memory, ["src/api/"], "write", 60, 0, False, None, ""))
    assert busy["status"] == "busy"
    assert [h["agent"] for h in busy["holders"]] == ["agent-b"]


def test_a_busy_claim_with_request_release_asks_the_holder_once(memory: Memory) -> None:
    other = Memory(memory.root, "agent-b")
    held = tools.claim(other, ["src/"], "write", 60, 0, False, None, "")

    def ask() -> dict[str, object]:
        return tools.answer(
            lambda: tools.claim(
                memory, ["src/api/"], "write", 60, 0, False, None, "", request_release=True
            )
        )

    busy = ask()
    assert (busy["status"], busy["release_requested"]) == ("busy", [1])
    assert ask()["release_requested"] == []  # asked already: not again until answered
    (request,) = other.mail.inbox()
    assert (request.kind, request.sender, request.about) == (
        "release-request", memory.agent, held["id"],
    )  # fmt: skip


def test_events_page_on_with_next_since_and_a_bad_limit_is_invalid(memory: Memory) -> None:
    for n in range(3):
        memory.emit("task.progress", {"n": n})
    first = tools.events(memory, 0, 2)
    assert [e["data"]["n"] for e in first["events"]] == [0, 1]
    rest = tools.events(memory, first["next_since"], 2)
    assert [e["data"]["n"] for e in rest["events"]] == [2]
    assert tools.events(memory, rest["next_since"], 2) == {
        "events": [],
        "next_since": rest["next_since"],
    }
    assert tools.answer(lambda: tools.events(memory, 0, 0))["status"] == "invalid"


@pytest.mark.parametrize(("targets", "mode"), [(["src/"], "exclusive"), ([], "write")])
def test_a_bad_mode_or_no_target_is_invalid(memory: Memory, targets: list[str], mode: str) -> None:
    got = tools.answer(lambda: tools.claim(memory, targets, mode, None, 0, False, None, ""))
    assert got["status"] == "invalid"
    assert memory.claims() == []


def test_a_cancelled_wait_leaves_the_queue_at_once(memory: Memory) -> None:
    holder = Memory(memory.root, "agent-b")
    holder.claim(["src/"], ttl=60)
    cancel, failed = threading.Event(), []

    def wait() -> None:
        waiter = Memory(memory.root, "agent-a")
        try:
            tools.claim(waiter, ["src/"], "write", 60, 0, False, 30.0, "", cancel)
        except WaitCancelled as exc:
            failed.append(exc)

    thread = threading.Thread(target=wait)
    thread.start()
    deadline = time.monotonic() + 5
    while not tools.claims(holder)["waiters"]:
        assert time.monotonic() < deadline, "the wait never queued"
        time.sleep(0.01)
    started = time.monotonic()
    cancel.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert time.monotonic() - started < 1.0
    assert len(failed) == 1
    assert tools.claims(holder)["waiters"] == []


@pytest.mark.peer("git")
@pytest.mark.parametrize("paths", [[], ["CLAUDE.md"]])
def test_check_is_the_clis(memory: Memory, paths: list[str]) -> None:
    assert tools.answer(lambda: tools.check(memory, paths))["status"] == "ok"


def test_a_claims_life_through_the_tools(memory: Memory) -> None:
    held = tools.answer(lambda: tools.claim(memory, ["src/"], "write", None, 0, False, None, ""))
    claim_id = str(held["id"])
    wider = tools.answer(lambda: tools.claim_scope(memory, claim_id, ["docs/"], [], 1))
    assert (wider["status"], wider["rev"]) == ("ok", 2)
    stale = tools.answer(lambda: tools.claim_scope(memory, claim_id, ["memory/"], [], 1))
    assert (stale["status"], stale["reason"]) == ("conflict", "stale_revision")
    gone = tools.answer(lambda: tools.abandon(memory, claim_id, "blocked", 2))
    assert (gone["status"], gone["state"]) == ("ok", "abandoned")
    early = tools.answer(lambda: tools.takeover(memory, claim_id, None, None))
    assert (early["status"], early["reason"]) == ("invalid", "grace")
    shown = tools.answer(lambda: tools.claim_record(memory, claim_id))
    assert [step["what"] for step in shown["history"]] == [
        "claim.granted", "claim.scoped", "claim.abandoned",
    ]  # fmt: skip


def test_a_completion_keeps_the_callers_report_as_self_reported(memory: Memory) -> None:
    held = tools.answer(lambda: tools.claim(memory, ["src/"], "write", None, 0, False, None, ""))
    done = tools.answer(lambda: tools.complete(memory, str(held["id"]), [], "all green", None))
    assert done["state"] == "completed"
    assert done["evidence"]["reported"] == {
        "self_reported": True, "verified": False, "content": "all green",
    }  # fmt: skip


def test_memory_claims_and_the_record_carry_the_watchdogs_idle_mark(memory: Memory) -> None:
    from memkeeper.ops.idleclaims import mark_idle

    claim = memory.claim("src/")
    assert tools.answer(lambda: tools.claims(memory))["claims"][0]["idle"] is None
    event = mark_idle(memory.workspace, claim, 1200.0, claim.granted_at)
    assert event is not None
    mark = {"since": event.ts, "idle_s": 1200.0, "event": event.id}
    assert tools.answer(lambda: tools.claims(memory))["claims"][0]["idle"] == mark
    assert tools.answer(lambda: tools.claim_record(memory, claim.id))["idle"] == mark
    memory.release(claim.id)
    assert tools.answer(lambda: tools.claim_record(memory, claim.id))["idle"] is None

"""``memkeeper mcp`` in a subprocess, driven by the official SDK's client over stdio (contract
§11): the tools and their schemas; read, patch (then stale: a ``conflict`` result with
``current``), append, a claim from two clients (the second busy), events; a cancelled wait;
and patches through MCP racing patches through the CLI without a loss."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMKEEPER

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'memkeeper[mcp]'")

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

TOOLS = {
    *("memory_sections", "memory_read", "memory_patch", "memory_append", "memory_claim"),
    *("memory_renew", "memory_release", "memory_claims", "memory_events", "memory_emit"),
    *("memory_check", "memory_inbox", "memory_claim_show", "memory_claim_scope"),
    *("memory_complete", "memory_abandon", "memory_takeover"),
    *("memory_check", "memory_inbox", "memory_meetings", "memory_meeting_open"),
    *("memory_meeting_propose", "memory_meeting_accept", "memory_meeting_resolve"),
    *("memory_answer", "memory_send", "memory_inbox_wait"),
    *("memory_work_list", "memory_work_add", "memory_work_next", "memory_work_done"),
    *("memory_work_fail", "memory_work_return", "memory_work_edit", "memory_work_retry"),
}


def server(root: Path, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    return StdioServerParameters(command=MEMKEEPER, args=["mcp", *args], cwd=str(root), env=env)


def client(root: Path, name: str, *args: str) -> Client:
    info = Implementation(name=name, version="1.0")
    return Client(server(root, *args), client_info=info, read_timeout_seconds=60)


async def call(c: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await c.call_tool(tool, arguments)
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def run(main: Callable[[], Awaitable[None]]) -> None:
    anyio.run(main)


def test_the_tools_are_listed_with_input_and_output_schemas(root: Path) -> None:
    async def main() -> None:
        async with client(root, "lister") as c:
            listed = (await c.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            patch = next(t for t in listed if t.name == "memory_patch")
            assert set(patch.input_schema["required"]) == {"ref", "expect_rev"}
            assert {"body", "dmp", "expect_file_hash", "claim", "merge"} <= set(
                patch.input_schema["properties"]
            )
            assert all(t.output_schema is not None for t in listed)
            assert all(t.description for t in listed)

    run(main)


def test_read_patch_conflict_append_and_events_as_results(root: Path) -> None:
    async def main() -> None:
        async with client(root, "codex") as c:
            read = await call(c, "memory_read", ref="CLAUDE.md#build")
            assert (read["status"], read["rev"]) == ("ok", 1)
            done = await call(
                c, "memory_patch", ref="CLAUDE.md#build", body="- make\n\n", expect_rev=1
            )
            assert (done["status"], done["rev"]) == ("ok", 2)
            stale = await call(
                c, "memory_patch", ref="CLAUDE.md#build", body="- other\n\n", expect_rev=1
            )
            assert (stale["status"], stale["reason"]) == ("conflict", "stale_revision")
            assert (stale["current"]["rev"], stale["current"]["content"]) == (2, "- make\n\n")
            assert stale["recover"]
            entry = "## 2026-12-01 — codex\n\nUse MCP.\n"
            appended = await call(c, "memory_append", path="memory/decisions.md", text=entry)
            assert appended["status"] == "ok"
            refused = await call(c, "memory_append", path="CLAUDE.md", text=entry)
            assert refused["status"] == "refused"
            events = await call(c, "memory_events", since=0)
            assert [e["type"] for e in events["events"]] == ["section.patched", "entry.appended"]
            assert {e["actor"] for e in events["events"]} == {"mcp:codex"}
            bad = await call(c, "memory_read", ref="nope.md#x")
            assert bad["status"] == "invalid"

    run(main)
    text = (root / "CLAUDE.md").read_text()
    assert "- make\n" in text
    assert "- other" not in text


def test_a_stale_patch_with_merge_lands_or_comes_back_with_a_proposal(root: Path) -> None:
    async def main() -> None:
        async with client(root, "gemini") as c:
            read = await call(c, "memory_read", ref="CLAUDE.md#build")
            body = read["content"].rstrip("\n")
            await call(c, "memory_patch", ref="CLAUDE.md#build", body=body + "\n- a\n\n",
                       expect_rev=1)  # fmt: skip
            merged = await call(c, "memory_patch", ref="CLAUDE.md#build",
                                body=body + "\n- b\n\n", expect_rev=1, merge=True)  # fmt: skip
            assert (merged["status"], merged["merged"], merged["base_rev"]) == ("ok", True, 1)
            clash = read["content"].replace("`dist/`", "`build/`")  # next to the additions
            stale = await call(c, "memory_patch", ref="CLAUDE.md#build", body=clash,
                               expect_rev=1, merge=True)  # fmt: skip
            assert (stale["status"], stale["merge"]) == ("conflict", "overlap")
            assert isinstance(stale["proposal"], int)
            assert stale["current"]["rev"] == 3

    run(main)
    assert (root / "CLAUDE.md").read_text().count("- a\n- b\n") == 1


def test_two_clients_claim_and_the_second_is_busy_then_a_cancelled_wait_leaves(
    root: Path,
) -> None:
    async def main() -> None:
        async with client(root, "one") as first, client(root, "two") as second:
            held = await call(first, "memory_claim", targets=["src/api/"], ttl=60)
            assert (held["status"], held["agent"]) == ("ok", "mcp:one")
            busy = await call(second, "memory_claim", targets=["src/"], ttl=60)
            assert busy["status"] == "busy"
            assert [h["agent"] for h in busy["holders"]] == ["mcp:one"]
            with anyio.move_on_after(1.0):  # the client gives up on a long wait
                await call(second, "memory_claim", targets=["src/"], ttl=60, wait=30)
            with anyio.fail_after(10):
                while (await call(first, "memory_claims"))["waiters"]:
                    await anyio.sleep(0.05)
            released = await call(first, "memory_release", id=held["id"])
            assert released["status"] == "ok"
            granted = await call(second, "memory_claim", targets=["src/"], ttl=60)
            assert granted["status"] == "ok"

    run(main)


def test_patches_through_mcp_and_through_the_cli_race_without_a_loss(root: Path) -> None:
    rounds = 15

    def cli_writer() -> None:
        for n in range(rounds):
            while True:
                rev = subprocess.run(
                    [MEMKEEPER, "read", "CLAUDE.md#testing", "--json"],
                    cwd=root, capture_output=True, text=True, check=True,
                ).stdout  # fmt: skip
                import json

                section = json.loads(rev)
                body = section["content"] + f"- cli {n}\n"
                done = subprocess.run(
                    [MEMKEEPER, "patch", "CLAUDE.md#testing", "--expect-rev",
                     str(section["rev"]), "--body-file", "-", "--agent", "cli"],
                    cwd=root, input=body, capture_output=True, text=True,
                )  # fmt: skip
                if done.returncode == 0:
                    break
                assert done.returncode == 3, done.stderr

    async def main() -> None:
        async with client(root, "racer") as c:
            for n in range(rounds):
                section = await call(c, "memory_read", ref="CLAUDE.md#testing")
                while True:
                    done = await call(
                        c,
                        "memory_patch",
                        ref="CLAUDE.md#testing",
                        body=section["content"] + f"- mcp {n}\n",
                        expect_rev=section["rev"],
                    )
                    if done["status"] == "ok":
                        break
                    assert done["status"] == "conflict"
                    section = done["current"]

    thread = threading.Thread(target=cli_writer)
    thread.start()
    run(main)
    thread.join(timeout=120)
    text = (root / "CLAUDE.md").read_text()
    lost = [f"{who} {n}" for who in ("cli", "mcp") for n in range(rounds)]
    assert [line for line in lost if f"- {line}\n" not in text] == []

"""The MCP server ``build`` makes, driven in process by the SDK's own client (no transport): the
eleven tools of docs/reference.md §4.21 with their input schemas, defaults and output schemas; the
server's name and instructions; each result as structured content with the same JSON as its text;
errors an agent can act on as ordinary results, arguments that break the schema as tool errors that
run nothing; the session's identity on the event loop and in worker threads alike; and a cancelled
``memory_claim`` wait that gives its place up."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'memkeeper[mcp]'")

import anyio
from mcp.client import Client
from mcp_types import Implementation, TextContent, Tool

from memkeeper import Memory
from memkeeper.mcpserver import tools
from memkeeper.mcpserver.server import INSTRUCTIONS, Server, build, client_agent
from memkeeper.names import AGENT_ENV

Json = dict[str, Any]


@pytest.fixture
def root(sample: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(AGENT_ENV, raising=False)  # the client's name decides, unless a test sets it
    return sample


@contextlib.asynccontextmanager
async def connected(server: Server, name: str = "tester") -> AsyncIterator[Client]:
    """The SDK's client on ``server`` in this process, introducing itself as ``name``; the
    server's memories are closed after, as ``serve`` closes them."""
    try:
        info = Implementation(name=name, version="1.0")
        async with Client(server, client_info=info, read_timeout_seconds=30) as client:
            yield client
    finally:
        server.memories.close()


async def call(client: Client, tool: str, **arguments: Any) -> Json:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def run(main: Callable[[], Awaitable[None]]) -> None:
    anyio.run(main)


def logged(root: Path) -> list[tuple[str, str]]:
    """The event log's types and actors, as another process reads it."""
    memory = Memory(root, "reader")
    try:
        return [(e.type, e.actor) for e in memory.events()]
    finally:
        memory.close()


# -- what is registered ----------------------------------------------------------------------

# tool -> (required arguments, the optional ones with their defaults)
SCHEMAS: dict[str, tuple[set[str], Json]] = {
    "memory_sections": ({"path"}, {}),
    "memory_read": ({"ref"}, {}),
    "memory_patch": (
        {"ref", "expect_rev"},
        {"body": None, "dmp": None, "expect_file_hash": None, "claim": None, "merge": False},
    ),
    "memory_append": ({"path", "text"}, {}),
    "memory_claim": (
        {"targets"},
        {
            "mode": "write",
            "ttl": None,
            "priority": 0,
            "strict": False,
            "wait": None,
            "objective": "",
            "request_release": False,
        },
    ),
    "memory_renew": ({"id"}, {"ttl": None}),
    "memory_release": ({"id"}, {}),
    "memory_claims": (set(), {"search": None, "limit": 10}),
    "memory_claim_show": ({"id"}, {}),
    "memory_claim_scope": ({"id"}, {"add": None, "remove": None, "expect_rev": None}),
    "memory_complete": ({"id"}, {"verify": None, "evidence": None, "expect_rev": None}),
    "memory_abandon": ({"id", "reason"}, {"expect_rev": None, "message": ""}),
    "memory_takeover": ({"id"}, {"ttl": None, "expect_rev": None}),
    "memory_events": (set(), {"since": 0, "limit": tools.EVENTS_LIMIT}),
    "memory_emit": ({"type"}, {"data": None}),
    "memory_check": (set(), {"paths": None}),
    "memory_inbox": (set(), {"ack": None}),
    "memory_meetings": (set(), {"id": None, "resolved": False}),
    "memory_meeting_open": ({"others", "targets"}, {"deadline": None, "reason": ""}),
    "memory_meeting_propose": (
        {"id", "expect_rev", "kind"},
        {"assign": None, "who": None, "note": ""},
    ),
    "memory_meeting_accept": ({"id", "expect_rev", "proposal"}, {}),
    "memory_meeting_resolve": (
        {"id", "expect_rev"},
        {"proposal": None, "kind": None, "assign": None, "who": None, "note": ""},
    ),
    "memory_answer": ({"id"}, {"release": False, "reason": None, "eta": None}),
    "memory_send": ({"to", "text"}, {"about": None}),
    "memory_inbox_wait": (set(), {"timeout": 60.0}),
    "memory_work_list": (set(), {"id": None, "ready": False}),
    "memory_work_add": ({"title"}, {"paths": None, "priority": 0, "after": None, "body": ""}),
    "memory_work_next": (set(), {"ttl": None, "wait": None}),
    "memory_work_done": ({"id"}, {"verify": None, "claim": None}),
    "memory_work_fail": ({"id", "reason"}, {"claim": None}),
    "memory_work_return": ({"id"}, {"claim": None}),
    "memory_work_edit": (
        {"id", "expect_rev"},
        {"title": None, "priority": None, "paths": None, "after": None, "body": None},
    ),
    "memory_work_retry": ({"id"}, {}),
}


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tool]:
    """The tools as ``tools/list`` gives them (listing opens no ``Memory``: any root does)."""
    found: dict[str, Tool] = {}

    async def main() -> None:
        async with connected(build(str(tmp_path_factory.mktemp("root")))) as client:
            found.update({t.name: t for t in (await client.list_tools()).tools})

    run(main)
    return found


def test_exactly_the_tools_of_the_contract_are_registered(listed: dict[str, Tool]) -> None:
    assert set(listed) == set(SCHEMAS)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_tools_input_schema_has_its_arguments_defaults_and_descriptions(
    listed: dict[str, Tool], name: str
) -> None:
    tool = listed[name]
    required, optional = SCHEMAS[name]
    schema = tool.input_schema
    properties: dict[str, Json] = schema["properties"]
    assert set(schema.get("required", [])) == required
    assert set(properties) == required | set(optional)  # the SDK's Context is no argument
    assert {k: properties[k]["default"] for k in optional} == optional
    assert all(p.get("description") for p in properties.values())
    assert tool.description
    assert tool.output_schema is not None
    assert (tool.output_schema["type"], tool.output_schema["additionalProperties"]) == (
        "object",
        True,
    )


def test_argument_types_are_spelled_for_the_client(listed: dict[str, Tool]) -> None:
    def prop(tool: str, name: str) -> Json:
        found: Json = listed[tool].input_schema["properties"][name]
        return found

    assert prop("memory_patch", "expect_rev")["type"] == "integer"
    assert prop("memory_patch", "merge")["type"] == "boolean"
    assert {t["type"] for t in prop("memory_patch", "body")["anyOf"]} == {"string", "null"}
    assert prop("memory_claim", "targets")["type"] == "array"
    assert prop("memory_claim", "targets")["items"] == {"type": "string"}
    assert {t["type"] for t in prop("memory_claim", "ttl")["anyOf"]} == {"number", "null"}
    assert {t["type"] for t in prop("memory_emit", "data")["anyOf"]} == {"object", "null"}


def test_the_server_names_itself_and_says_how_to_use_it(root: Path) -> None:
    async def main() -> None:
        async with connected(build(str(root))) as client:
            assert client.server_info is not None
            assert client.server_info.name == "memkeeper"
            assert client.instructions == INSTRUCTIONS

    run(main)
    assert "memory_patch(ref, body, expect_rev)" in INSTRUCTIONS


# -- results ------------------------------------------------------------------------------


def test_a_result_is_structured_with_status_ok_and_its_text_is_the_same_json(root: Path) -> None:
    async def main() -> None:
        async with connected(build(str(root))) as client:
            result = await client.call_tool("memory_sections", {"path": "CLAUDE.md"})
            assert not result.is_error
            reader = Memory(root, "reader")
            sections = [s.to_json() for s in reader.sections("CLAUDE.md")]
            reader.close()
            assert result.structured_content == {
                "status": "ok",
                "path": "CLAUDE.md",
                "sections": sections,
            }
            (text,) = result.content
            assert isinstance(text, TextContent)
            assert json.loads(text.text) == result.structured_content

    run(main)


def test_a_message_comes_once_in_a_results_notices_and_stays_in_the_inbox_until_acked(
    root: Path,
) -> None:
    sender = Memory(root, "human")
    try:
        sender.mail.send("mcp:tester", "the build moved to make wheel")
    finally:
        sender.close()

    async def main() -> None:
        async with connected(build(str(root))) as client:
            first = await call(client, "memory_read", ref="CLAUDE.md#build")
            assert first["notices"][0] == "- [1] message from human: the build moved to make wheel"
            inbox = await call(client, "memory_inbox")
            assert [m["id"] for m in inbox["messages"]] == [1]
            assert inbox["messages"][0]["delivered_at"] is not None
            acked = await call(client, "memory_inbox", ack=[1])
            assert acked["messages"] == []
            assert "notices" not in await call(client, "memory_read", ref="CLAUDE.md#build")

    run(main)
    assert ("message.delivered", "mcp:tester") in logged(root)
    assert ("message.acked", "mcp:tester") in logged(root)


# Errors memkeeper raises, on the event loop (read, patch) and in a worker thread (append,
# release), come back as the CLI's JSON (the tools' own checks: tests/mcpserver/test_tools.py).
REFUSALS = [
    ("memory_read", {"ref": "nope.md#x"}, "invalid"),
    ("memory_patch", {"ref": "CLAUDE.md#build", "expect_rev": 7, "body": "x\n"}, "conflict"),
    ("memory_append", {"path": "CLAUDE.md", "text": "## x\n\ny\n"}, "refused"),
    ("memory_release", {"id": "c99"}, "invalid"),
]


@pytest.mark.parametrize(("tool", "arguments", "status"), REFUSALS)
def test_an_error_an_agent_can_act_on_is_a_result_not_a_tool_error(
    root: Path, tool: str, arguments: Json, status: str
) -> None:
    async def main() -> None:
        async with connected(build(str(root))) as client:
            got = await call(client, tool, **arguments)
            assert got["status"] == status
            assert got["message"]

    run(main)
    assert logged(root) == []


MALFORMED = [
    ("memory_read", {}),
    ("memory_read", {"ref": 5}),
    ("memory_patch", {"ref": "CLAUDE.md#build", "expect_rev": "one", "body": "x\n"}),
    ("memory_emit", {"type": "task.done", "data": [1, 2]}),
    ("memory_patch", {"ref": "CLAUDE.md#build", "expect_rev": 2**64, "body": "x\n"}),
    ("memory_events", {"since": 2**64}),
    ("memory_claim", {"targets": ["x"], "priority": 2**64}),
]


@pytest.mark.parametrize(("tool", "arguments"), MALFORMED)
def test_arguments_that_break_the_schema_are_status_invalid_and_run_nothing(
    root: Path, tool: str, arguments: Json
) -> None:
    before = (root / "CLAUDE.md").read_bytes()

    async def main() -> None:
        async with connected(build(str(root))) as client:
            got = await call(client, tool, **arguments)
            assert got["status"] == "invalid"
            assert got["message"].startswith(f"{tool}: ")
            assert got["message"].endswith(" — see the tool's input schema")
            assert "pydantic" not in got["message"]

    run(main)
    assert (root / "CLAUDE.md").read_bytes() == before
    assert logged(root) == []


@pytest.mark.peer("git")
def test_defaults_apply_when_arguments_are_left_out(root: Path) -> None:
    async def main() -> None:
        async with connected(build(str(root))) as client:
            emitted = await call(client, "memory_emit", type="task.started")
            assert emitted["data"] == {}
            events = await call(client, "memory_events")  # since 0, the default limit
            assert [e["id"] for e in events["events"]] == [emitted["id"]]
            everything = await call(client, "memory_check")  # no paths: every managed file
            assert {"CLAUDE.md", "AGENTS.md", "memory/decisions.md"} <= set(everything["checked"])

    run(main)


def test_a_claim_is_taken_renewed_listed_and_released(root: Path) -> None:
    async def main() -> None:
        async with connected(build(str(root)), "claude") as client:
            held = await call(client, "memory_claim", targets=["src/api/"], ttl=60, priority=2)
            assert (held["status"], held["agent"], held["mode"]) == ("ok", "mcp:claude", "write")
            assert (held["targets"], held["priority"], held["warnings"]) == (["src/api/"], 2, [])
            renewed = await call(client, "memory_renew", id=held["id"], ttl=600)
            assert renewed["id"] == held["id"]
            assert 599 <= renewed["seconds_left"] <= 600
            listed = await call(client, "memory_claims")
            assert [c["id"] for c in listed["claims"]] == [held["id"]]
            assert listed["waiters"] == []
            released = await call(client, "memory_release", id=held["id"])
            assert (released["status"], released["seconds_left"]) == ("ok", 0)
            assert (await call(client, "memory_claims"))["claims"] == []

    run(main)


# -- who is acting ---------------------------------------------------------------------------

IDENTITIES = [
    # build's agent (--agent), $MEMKEEPER_AGENT, the client's name -> the events' actor
    (None, None, "codex", "mcp:codex"),
    (None, None, "", "mcp:client"),
    (None, "", "codex", "mcp:codex"),
    (None, "env-agent", "codex", "env-agent"),
    ("cli-agent", "env-agent", "codex", "cli-agent"),
]


@pytest.mark.parametrize(("agent", "env", "name", "actor"), IDENTITIES)
def test_the_session_acts_as_the_agent_given_else_the_environments_else_the_clients(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str | None,
    env: str | None,
    name: str,
    actor: str,
) -> None:
    if env is not None:
        monkeypatch.setenv(AGENT_ENV, env)

    async def main() -> None:
        async with connected(build(str(root), agent), name) as client:
            emitted = await call(client, "memory_emit", type="task.started")
            assert emitted["actor"] == actor

    run(main)


def test_the_event_loop_and_the_worker_threads_act_as_the_same_client(root: Path) -> None:
    async def main() -> None:
        async with connected(build(str(root)), "gemini") as client:
            ref, body = "CLAUDE.md#build", "- x\n\n"
            await call(client, "memory_patch", ref=ref, body=body, expect_rev=1)  # on the loop
            await call(client, "memory_append", path="memory/decisions.md", text="Why.")  # a thread

    run(main)
    assert logged(root) == [
        ("section.patched", "mcp:gemini"),
        ("entry.appended", "mcp:gemini"),
    ]


def test_without_a_context_the_client_is_just_client() -> None:
    assert client_agent(None) == "mcp:client"


# -- a wait the client gives up ----------------------------------------------------------------


def test_a_cancelled_wait_for_a_claim_leaves_the_queue_at_once(root: Path) -> None:
    holder = Memory(root, "holder")
    holder.claim("src/", ttl=60)

    async def main() -> None:
        async with connected(build(str(root)), "waiter") as client:

            async def wait() -> None:
                await call(client, "memory_claim", targets=["src/"], wait=30)

            async with anyio.create_task_group() as group:
                group.start_soon(wait)
                with anyio.fail_after(5):
                    while not holder.waiters()["waiters"]:
                        await anyio.sleep(0.005)
                group.cancel_scope.cancel()  # the client gives up on the wait
            given_up = time.monotonic()
            with anyio.fail_after(5):
                while (await call(client, "memory_claims"))["waiters"]:
                    await anyio.sleep(0.005)
            assert time.monotonic() - given_up < 1.0

    run(main)
    ends = [(e.type, e.actor, e.data.get("reason")) for e in holder.events()]
    assert ends[1:] == [
        ("claim.queued", "mcp:waiter", None),
        ("message.sent", "mcp:waiter", None),  # the holder told who waits (an overlap)
        ("claim.aborted", "mcp:waiter", "interrupted"),
    ]
    holder.close()

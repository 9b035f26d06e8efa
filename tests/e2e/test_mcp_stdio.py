"""memkeeper's stdio transport over the real ``memkeeper mcp``'s pipes: lines longer than a
read chunk both ways, a bad line answered as the SDK answers it, the wire kept from stray
output, and the SDK's own transport where stdin is no pipe. Driven by raw JSON-RPC lines (the
SDK is an extra); the transport's line reader in this process: tests/mcpserver/test_stdio.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMKEEPER

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'memkeeper[mcp]'")

from memkeeper.limits import MAX_BODY_BYTES
from memkeeper.mcpserver import stdio

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tool_call(n: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def lines(*messages: dict[str, Any] | str) -> bytes:
    return b"".join((m if isinstance(m, str) else json.dumps(m)).encode() + b"\n" for m in messages)


def answers(out: bytes) -> dict[int, dict[str, Any]]:
    found = [json.loads(line) for line in out.splitlines()]
    return {m["id"]: m for m in found if "id" in m}


def serve(root: Path, stdin: bytes, ids: set[int]) -> dict[int, dict[str, Any]]:
    """``memkeeper mcp`` fed ``stdin`` through a pipe, open until the answers to ``ids`` are
    in (the SDK cancels what is still running when stdin closes); those answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    server = subprocess.Popen(
        [MEMKEEPER, "mcp", "--agent", "raw"],
        cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None
    assert server.stdout is not None
    pipe = server.stdin

    def feed() -> None:
        pipe.write(stdin)
        pipe.flush()

    feeding = threading.Thread(target=feed)
    feeding.start()
    got: dict[int, dict[str, Any]] = {}
    try:
        while not ids <= set(got):
            line = server.stdout.readline()
            assert line, f"the server ended with only {sorted(got)} answered"
            got.update(answers(line))
    finally:
        feeding.join()
        server.stdin.close()
        server.stdout.close()
        assert server.wait(timeout=60) == 0
    return got


def test_lines_longer_than_a_read_chunk_both_ways_and_a_bad_line_skipped(root: Path) -> None:
    read = tool_call(1, "memory_read", ref="CLAUDE.md#build")
    # Under the body bound (memkeeper.limits) yet longer than a read chunk on the wire both
    # ways: each "é" is two bytes in the file and six ("\u00e9") in the request's JSON.
    line = "- " + "é" * 50 + "\n"
    body = line * (MAX_BODY_BYTES // len(line.encode()) - 1) + "\n"
    assert len(json.dumps(body)) > stdio.LINE_CHUNK * 2
    patch = tool_call(2, "memory_patch", ref="CLAUDE.md#build", body=body, expect_rev=1)
    got = serve(root, lines(INIT, INITIALIZED, read, "{not json", patch), {0, 1, 2})
    assert got[1]["result"]["structuredContent"]["rev"] == 1  # the bad line skipped
    assert got[2]["result"]["structuredContent"]["rev"] == 2
    assert body in (root / "CLAUDE.md").read_text()
    back = serve(root, lines(INIT, INITIALIZED, read), {0, 1})  # an answer of 2 MiB and more
    section = back[1]["result"]["structuredContent"]
    assert (section["rev"], section["content"]) == (2, body)


def test_with_stdin_a_file_the_sdks_own_transport_serves(root: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(lines(INIT, INITIALIZED, tool_call(1, "memory_read", ref="CLAUDE.md")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    with requests.open("rb") as source:
        done = subprocess.run(
            [MEMKEEPER, "mcp", "--agent", "raw"],
            cwd=root, env=env, stdin=source, capture_output=True, timeout=60, check=True,
        )  # fmt: skip
    got = answers(done.stdout)
    assert got[0]["result"]["serverInfo"]["name"] == "memkeeper"  # the SDK's transport served
    if 1 in got:  # the SDK cancels calls still running at the end of its input: a file's end
        assert got[1]["result"]["structuredContent"]["status"] == "ok"  # comes at once


STRAY = """
import anyio, os, sys
from memkeeper.limits import MAX_BODY_BYTES
from memkeeper.mcpserver import stdio

async def main() -> None:
    assert stdio.on_pipes()
    async with stdio.stdio() as (read_stream, write_stream):
        print("stray print", flush=True)  # fd 1 is stderr while the transport serves
        os.write(1, b"stray write\\n")
        async with read_stream, write_stream:
            async for message in read_stream:
                await write_stream.send(message)  # an echo: the wire is the private pipe
    print("after", flush=True)  # fd 1 is the wire again

anyio.run(main)
"""


def test_stray_output_goes_to_stderr_and_the_wire_is_restored_after() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STRAY],
        input=lines(INIT), capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    out = done.stdout.decode().splitlines()
    assert [json.loads(out[0])["id"], out[1:]] == [0, ["after"]]
    assert "stray print\nstray write\n" in done.stderr.decode()

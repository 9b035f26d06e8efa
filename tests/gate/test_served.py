"""The gate served over HTTP: which requests it answers, and that its answers are the command
gate's, byte for byte — judged here without a socket (``precheck`` and ``answer`` on a
``Request``); tests/e2e/test_served_gate.py runs the real daemon and tests/e2e/test_claude_live.py
the real Claude Code."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper.api import Memory
from memkeeper.fs.gateconfig import GateConfig
from memkeeper.gate import served
from memkeeper.gate.hook import run
from memkeeper.gate.served import MAX_BODY, Reply, Request, answer, precheck, run_gate
from memkeeper.ops.setup import init
from tests.gate.helpers import edit

if TYPE_CHECKING:
    from memkeeper.gate.served import Gate

CONFIG = GateConfig(47123, "s3cret-token")
URL_PATH = "/hook/claude-code"


def headers(body: bytes = b"", **extra: str) -> dict[str, str]:
    found = {
        "host": "127.0.0.1:47123",
        "authorization": "Bearer s3cret-token",
        "content-length": str(len(body)),
        "content-type": "application/json",
    }
    found.update({name.replace("_", "-"): value for name, value in extra.items()})
    return found


def post(body: bytes, **extra: str) -> Request:
    return Request("POST", URL_PATH, headers(body, **extra), body)


def served_reply(request: Request, gate: Gate = run_gate) -> Reply:
    early = precheck(request, CONFIG)
    return early if early is not None else answer(request, CONFIG, gate, lambda _: None)


def denied(reply: Reply) -> str:
    assert reply.status == 200
    out = json.loads(reply.body)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    return str(out["permissionDecisionReason"])


def never(*_: Any) -> tuple[int, str]:
    raise AssertionError("the gate must not run")


# -- what is refused before the gate runs ------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "status"),
    [
        (Request("GET", URL_PATH, headers()), 405),
        (Request("POST", URL_PATH, headers(host="evil.example:47123")), 403),  # DNS rebinding
        (Request("POST", URL_PATH, headers(host="127.0.0.1:80")), 403),
        (Request("POST", URL_PATH, headers(host="")), 403),
        (Request("POST", URL_PATH, headers(origin="http://evil.example")), 403),  # a web page
        (Request("POST", "/hook/codex", headers()), 404),
        (Request("POST", "/other/claude-code", headers()), 404),
        (Request("POST", URL_PATH, {**headers(), "content-length": "x"}), 411),
    ],
)
def test_requests_not_from_the_agents_hook_are_refused_before_any_body_is_read(
    request_: Request, status: int
) -> None:
    reply = precheck(request_, CONFIG)
    assert reply is not None
    assert reply.status == status


def test_localhost_names_the_loopback_address_too() -> None:
    assert precheck(Request("POST", URL_PATH, headers(host="localhost:47123")), CONFIG) is None


def test_a_body_over_the_limit_is_a_deny_for_the_agent_and_a_413_for_anyone_else() -> None:
    big = {**headers(), "content-length": str(MAX_BODY + 1)}
    assert "over" in denied(precheck(Request("POST", URL_PATH, big), CONFIG) or Reply(0))
    stranger = {**big, "authorization": "Bearer guess"}
    reply = precheck(Request("POST", URL_PATH, stranger), CONFIG)
    assert reply is not None
    assert reply.status == 413


def test_a_wrong_token_denies_a_pre_tool_call_without_running_the_gate() -> None:
    body = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write"}).encode()
    for token in ("Bearer s3cret-tokeN", "Bearer ", "s3cret-token", ""):
        reply = served_reply(post(body, authorization=token), gate=never)
        assert "token is not this machine's" in denied(reply)


def test_a_wrong_token_on_other_events_is_a_401_and_the_gate_does_not_run() -> None:
    body = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}).encode()
    assert served_reply(post(body, authorization="Bearer no"), gate=never).status == 401


def test_a_gate_that_raises_is_a_deny_never_a_5xx() -> None:
    def broken(*_: Any) -> tuple[int, str]:
        raise RuntimeError("boom")

    assert "boom" in denied(served_reply(post(b"{}"), gate=broken))


def test_the_agents_identity_and_root_come_from_its_headers_not_the_daemons() -> None:
    seen: list[tuple[str | None, Mapping[str, str]]] = []

    def gate(agent: str, root: str | None, body: bytes, environ: Mapping[str, str], _: Any) -> Any:
        seen.append((root, dict(environ)))
        return 0, ""

    served_reply(post(b"{}", x_memkeeper_agent="$MEMKEEPER_AGENT"), gate)  # not interpolated
    served_reply(post(b"{}", x_memkeeper_agent="", x_memkeeper_root=""), gate)  # unset
    served_reply(post(b"{}", x_memkeeper_agent="alice", x_memkeeper_root="/r"), gate)
    assert seen == [(None, {}), (None, {}), ("/r", {"MEMKEEPER_AGENT": "alice"})]


# -- the same answers as the command gate ------------------------------------------------------


@pytest.fixture
def root(sample: Path) -> Path:
    init(Memory.open(sample).workspace, None)
    return sample


def command_gate(body: bytes) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert run("claude-code", None, None, io.BytesIO(body), out, err, environ={}) == 0
    return out.getvalue()


def payloads(root: Path) -> list[dict[str, Any]]:
    base = {"session_id": "s1", "cwd": str(root), "tool_use_id": "toolu_01"}
    return [
        {**base, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
        for tool, tool_input in [
            ("Write", {"file_path": f"{root}/CLAUDE.md", "content": "x\n"}),
            ("Edit", edit(f"{root}/CLAUDE.md", "make build", "make wheel")),
            ("Write", {"file_path": f"{root}/memory/decisions.md", "content": "gone\n"}),
            ("Write", {"file_path": f"{root}/notes.txt", "content": "free\n"}),
            ("Bash", {"command": f"echo x > {root}/AGENTS.md"}),
            ("Bash", {"command": "ls"}),
        ]
    ] + [
        # as Claude Code 2.1.197 sends one (recorded), and Cursor, which also runs the hooks
        # in .claude/settings.json: told by its shape, answered in Cursor's format
        {**base, "transcript_path": "/home/dev/t.jsonl", "prompt_id": "471392fc",
         "permission_mode": "bypassPermissions", "effort": {"level": "high"},
         "hook_event_name": "PreToolUse", "tool_name": "Write",
         "tool_input": {"file_path": f"{root}/CLAUDE.md", "content": "# gone\n"}},
        {"conversation_id": "c1", "generation_id": "g1", "hook_event_name": "preToolUse",
         "cursor_version": "2026.10.01-e373342", "workspace_roots": [str(root)],
         "session_id": "c1", "cwd": str(root), "tool_name": "Write",
         "tool_input": {"file_path": f"{root}/CLAUDE.md", "content": "x\n"},
         "tool_use_id": "73da88f4"},
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"},
        {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": "true"}, "tool_response": {}},
    ]  # fmt: skip


def test_every_answer_is_the_command_gates_byte_for_byte(root: Path) -> None:
    answers = []
    for payload in payloads(root):
        body = json.dumps(payload).encode()
        reply = served_reply(post(body))
        assert (reply.status, reply.body.decode()) == (200, command_gate(body)), payload
        answers.append(reply.body.decode())
    assert '"permission": "deny"' in answers[-3]  # Cursor's deny, not Claude Code's


def test_a_claim_held_by_another_session_denies_through_both(root: Path) -> None:
    Memory.open(root, agent="claude-code:other").claim(["CLAUDE.md"], strict=True)
    body = json.dumps(payloads(root)[1]).encode()  # the Edit of CLAUDE.md
    reply = served_reply(post(body))
    assert reply.body.decode() == command_gate(body)
    assert "claude-code:other" in denied(reply)


# -- the server itself, on a real loopback socket (no process) ---------------------------------


def test_serving_holds_the_lock_answers_and_drops_a_silent_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl
    import os
    import socket

    from memkeeper.fs.gateconfig import free_port
    from memkeeper.gate.served import serving

    monkeypatch.setattr(served, "IDLE_S", 0.3)
    config = GateConfig(free_port(), "s3cret-token")
    lock = tmp_path / "gate.lock"

    def held() -> bool:
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def gate(*_: Any) -> tuple[int, str]:
        return 0, "{}"

    with serving(str(tmp_path), config, lambda _: None, gate) as port:
        assert port == config.port
        assert held()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as silent:
            silent.settimeout(5)
            assert silent.recv(1) == b""  # closed by the server, not by our timeout
        body = b'{"hook_event_name": "PreToolUse"}'
        request = (
            f"POST /hook/claude-code HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer s3cret-token\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(request)
            assert client.recv(4096).startswith(b"HTTP/1.1 200 ")
    assert not held()

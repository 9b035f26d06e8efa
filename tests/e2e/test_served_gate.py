"""The gate served by the real ``memkeeper watch`` (issue 23 item 6): every row of the gate's
table (``test_gate_table.CASES``) POSTed to the daemon gets, byte for byte, the answer
``memkeeper hook claude-code`` prints for it; what is not Claude Code's hook is refused; the
daemon holds ``.memkeeper/gate.lock`` exactly while it serves."""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import gateconfig
from tests.conftest import run_cli
from tests.e2e.test_daemon import Streamed
from tests.e2e.test_gate_table import CASES, Case, make_repo

PATH = "/hook/claude-code"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Streamed]]:
    root = make_repo(tmp_path_factory.mktemp("served"), dirty=True)
    installed = run_cli(root, "install-hooks", "claude-code", "--served")
    assert installed.code == 0, installed.stderr
    daemon = Streamed(root, "watch", "--json")
    try:
        daemon.wait_for(lambda o: o["action"] == "started")
        yield root, daemon
    finally:
        daemon.close()


def config_of(root: Path) -> gateconfig.GateConfig:
    found = gateconfig.load(str(root / ".memkeeper"))
    assert found is not None
    return found


def post(root: Path, body: bytes, **headers: str) -> tuple[int, bytes]:
    config = config_of(root)
    connection = http.client.HTTPConnection("127.0.0.1", config.port, timeout=30)
    sent = {"Authorization": f"Bearer {config.token}", "Content-Type": "application/json"}
    connection.request("POST", PATH, body, {**sent, **headers})
    response = connection.getresponse()
    try:
        return response.status, response.read()
    finally:
        connection.close()


def payload(root: Path, case: Case) -> bytes:
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": os.path.normpath(root / case.cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": case.tool,
            "tool_input": case.tool_input,
            "tool_use_id": "toolu_01",
        }
    ).encode()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_row_gets_the_command_hooks_answer_byte_for_byte(
    served: tuple[Path, Streamed], case: Case
) -> None:
    root, _ = served
    body = payload(root, case)
    command = run_cli(root, "hook", "claude-code", stdin=body, cwd=root.parent)
    assert (command.code, command.stderr) == (0, "")
    assert post(root, body) == (200, command.stdout.encode())


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
def test_curl_gets_the_deny_and_a_stranger_is_refused(served: tuple[Path, Streamed]) -> None:
    root, _ = served
    config = config_of(root)
    body = payload(root, next(c for c in CASES if c.expect == "deny"))
    url = config.url("claude-code")

    def curl(*args: str) -> tuple[str, str]:
        out = ["curl", "-s", "-w", " %{http_code}", "--data-binary", "@-", *args, url]
        done = subprocess.run(out, input=body, capture_output=True, check=True)
        answer, _, status = done.stdout.decode().rpartition(" ")
        return status, answer

    token = f"Authorization: Bearer {config.token}"
    status, answer = curl("-H", token)
    assert status == "200"
    assert json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "deny"
    status, answer = curl("-H", "Authorization: Bearer guess")
    assert (status, "token is not this machine's" in answer) == ("200", True)  # a deny
    assert curl("-H", token, "-H", "Host: evil.example")[0] == "403"
    assert curl("-H", token, "-H", "Origin: http://evil.example")[0] == "403"


def test_the_lock_is_held_while_serving_and_let_go_on_sigterm(tmp_path: Path) -> None:
    root = make_repo(tmp_path, dirty=False)
    assert run_cli(root, "install-hooks", "claude-code", "--served").code == 0
    lock = root / ".memkeeper" / "gate.lock"
    daemon = Streamed(root, "watch", "--json")
    try:
        serving = daemon.wait_for(lambda o: o["action"] == "serving")
        assert serving["detail"].startswith(f"the gate at {config_of(root).url('claude-code')}")
        assert held(lock)
        assert doctor(root) == "ok"
        code, _ = daemon.signal_and_wait(signal.SIGTERM)
        assert code == 0
        assert not held(lock)
        assert doctor(root) == "warn"  # set up, not served: the command hook answers
    finally:
        daemon.close()


def doctor(root: Path) -> str:
    """``memkeeper doctor claude-code``'s verdict on the served gate."""
    checks = json.loads(run_cli(root, "doctor", "claude-code", "--json").stdout)["checks"]
    (served,) = [c for c in checks if c["check"] == "served"]
    return str(served["status"])


def held(lock: Path) -> bool:
    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_port_taken_is_said_and_the_daemon_watches_on_without_the_lock(tmp_path: Path) -> None:
    import socket

    root = make_repo(tmp_path, dirty=False)
    assert run_cli(root, "install-hooks", "claude-code", "--served").code == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", config_of(root).port))
        taken.listen()
        daemon = Streamed(root, "watch", "--json")
        try:
            said = daemon.next_json()
            assert said["action"] == "error"
            assert said["detail"].startswith("the gate is not served: cannot serve the gate on")
            daemon.wait_for(lambda o: o["action"] == "started")
            assert not held(root / ".memkeeper" / "gate.lock")  # the command hook answers
        finally:
            daemon.close()

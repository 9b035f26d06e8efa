"""Claude Code 2.1.332's ``"onFailure": "block"`` on the served gate's PreToolUse http hook,
with the real CLI (offline, ``fakemodel``): a call the daemon cannot answer — nothing listens
on its port (the daemon killed or never started), or it answers non-2xx — is blocked by the
http hook alone, even where the command hook lets the call through (an unmanaged file), and
the model is told why; with the daemon up the same call passes and a claimed file is denied.

Facts these tests pin (Claude Code 2.1.332, read from its ``--debug-file`` log and from what
the model was sent): the field goes on the hook handler (on a matcher group it is ignored);
a failed hook logs ``PreToolUse http hook failed; blocking (onFailure: "block")`` — a timeout
``timed out; blocking`` — and the model gets ``PreToolUse:Edit hook error: [URL]: failed;
blocking because onFailure is "block"`` (no text of the hook's can be added: the user is not
told to start ``memkeeper watch``; reference §7 says so). Older CLIs (2.1.197) accept the field
and ignore it: those tests skip there.
"""

from __future__ import annotations

import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.fs import gateconfig
from tests.conftest import run_cli
from tests.e2e.claudecli import CLAUDE, Session, finish, session
from tests.e2e.fakemodel import FakeModel, Step, Text, Tool
from tests.e2e.hooktables import initialised
from tests.e2e.test_daemon import Streamed

ON_FAILURE_SINCE = (2, 1, 332)
BLOCKED = 'blocking because onFailure is "block"'


def version() -> tuple[int, ...]:
    if CLAUDE is None:
        return ()
    out = subprocess.run([CLAUDE, "--version"], capture_output=True, text=True, timeout=60)
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", out.stdout.strip())
    return tuple(int(n) for n in found.groups()) if found else ()


pytestmark = pytest.mark.skipif(
    version() < ON_FAILURE_SINCE,
    reason="needs Claude Code 2.1.332 or later (onFailure on hooks): set MEMKEEPER_TEST_CLAUDE",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = initialised(tmp_path / "repo")
    installed = run_cli(root, "install-hooks", "claude-code", "--served")
    assert installed.code == 0, installed.stderr
    claimed = run_cli(root, "--agent", "reviewer", "claim", "CLAUDE.md", "--strict", "--json")
    assert claimed.code == 0, claimed.stderr
    return root


def edit(one: Session, name: str, log: Path) -> tuple[bool, str, str]:
    """The session Reads then Edits ``name``: whether the Edit failed, its result, the log."""
    path = one.root / name
    first = path.read_text().splitlines()[0]
    change = {"file_path": str(path), "old_string": first, "new_string": f"{first} (edited)"}
    steps: list[Step] = [Tool("Read", {"file_path": str(path)}), Tool("Edit", change), Text("Ok")]
    with FakeModel(steps) as model:
        finish(one.start(model, "--session-id", one.id, "--debug-file", str(log)))
    _, edited = model.calls()
    return edited.error, edited.result, log.read_text()


@pytest.fixture
def answering_500(repo: Path) -> Iterator[None]:
    """Something on the gate's port that answers every POST with a 500."""
    config = gateconfig.load(str(repo / ".memkeeper"))
    assert config is not None

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((gateconfig.HOST, config.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def test_with_no_daemon_the_http_hook_alone_blocks_an_edit_the_command_hook_allows(
    repo: Path, tmp_path: Path
) -> None:
    before = (repo / "README.md").read_bytes()
    failed, result, log = edit(session(repo, tmp_path), "README.md", tmp_path / "down.log")
    assert failed, result
    assert BLOCKED in result, result
    assert "ECONNREFUSED" in log
    assert 'PreToolUse http hook failed; blocking (onFailure: "block")' in log
    assert (repo / "README.md").read_bytes() == before


@pytest.mark.usefixtures("answering_500")
def test_a_non_2xx_answer_blocks_the_call(repo: Path, tmp_path: Path) -> None:
    before = (repo / "README.md").read_bytes()
    failed, result, log = edit(session(repo, tmp_path), "README.md", tmp_path / "500.log")
    assert failed, result
    assert BLOCKED in result, result
    assert "HTTP hook response status 500" in log
    assert (repo / "README.md").read_bytes() == before


def test_with_the_daemon_up_an_edit_passes_and_a_claimed_file_is_denied(
    repo: Path, tmp_path: Path
) -> None:
    daemon = Streamed(repo, "watch", "--json")
    try:
        daemon.wait_for(lambda o: o["action"] == "serving")
        failed, result, log = edit(session(repo, tmp_path), "README.md", tmp_path / "up.log")
        assert not failed, result
        assert "onFailure" not in log
        failed, result, _ = edit(session(repo, tmp_path), "CLAUDE.md", tmp_path / "deny.log")
        assert failed, result
        assert "reviewer" in result, result  # the served gate's deny
    finally:
        daemon.close()

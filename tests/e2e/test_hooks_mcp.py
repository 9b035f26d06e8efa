"""Where the agent has memkeeper's MCP server (``install-hooks AGENT --mcp``), the gate's
refusals spell its tools next to the CLI commands (issue 11 item 1); where it has not, they
do not. Through the real ``memkeeper hook AGENT``, with each agent's own payload."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bench import gate as payloads
from tests.conftest import MEMKEEPER

# one agent whose MCP file is JSON and the one whose file is TOML; every agent's file is read
# by tests/gate/test_mcp.py (Cline keeps its servers per user)
AGENTS = ["claude-code", "codex"]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}


def hook(root: Path, agent: str) -> str:
    call = payloads.PAYLOADS[agent](
        root, "CLAUDE.md", "# Project memory\n\nRewritten from scratch.\n"
    )
    done = subprocess.run(
        [MEMKEEPER, *call.argv], cwd=root, input=call.stdin, capture_output=True, env=env(),
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


@pytest.mark.parametrize("agent", AGENTS)
def test_a_refusal_names_the_mcp_tools_only_where_the_server_is_installed(
    sample: Path, agent: str
) -> None:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, env=env(), check=True, capture_output=True)
    before = hook(sample, agent)
    assert "memkeeper patch" in before
    assert "memory_patch" not in before
    installed = subprocess.run(
        [MEMKEEPER, "install-hooks", agent, "--mcp"], cwd=sample, env=env(),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    after = hook(sample, agent)
    assert "memkeeper patch" in after
    assert "memory_read(ref=" in after
    assert "memory_patch(ref=" in after

"""``memkeeper doctor`` through ``main()``: exit 6 with each fix when a gate would not run
(the human lines on stderr, the findings in ``--json``), exit 0 when every gate runs;
``--fix`` adds Claude Code's user-level gate and says so, once; an unknown AGENT is exit 2."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from memkeeper.install.hooks import install

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Cli


def fake_git(args: object, cwd: Path) -> tuple[int, bytes]:
    return 0, b".git/hooks\n"


def home_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # memkeeper as this test's interpreter has it (its virtual environment's bin)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"HOME": str(home), "SHELL": "/bin/sh", "PATH": path}


def test_claude_code_without_the_user_gate_is_exit_6_naming_the_fix(
    cli: Cli, sample: Path, tmp_path: Path
) -> None:
    install(sample, ["claude-code"], run=fake_git)
    done = cli("doctor", env=home_env(tmp_path))
    assert done.code == 6
    assert "would run without the gate" in done.stderr
    assert "[subdirectory]" in done.stderr
    assert "fix: memkeeper doctor --fix claude-code" in done.stderr
    out = json.loads(cli("doctor", "--json", env=home_env(tmp_path)).stdout)
    assert out["status"] == "failed"
    assert out["violations"][0]["rule"] == "subdirectory"
    assert {c["check"] for c in out["checks"]} >= {"memkeeper", "subdirectory", "mcp"}


def test_fix_adds_the_user_gate_once_and_then_every_check_passes(
    cli: Cli, sample: Path, tmp_path: Path
) -> None:
    install(sample, ["claude-code"], mcp=True, run=fake_git)
    env = home_env(tmp_path)
    done = cli("doctor", "--fix", env=env)
    assert done.code == 0, done.stderr
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    assert f"Claude Code user-level gate: added to {settings}" in done.stdout
    assert "ok      claude-code: started in a subdirectory" in done.stdout
    again = json.loads(cli("doctor", "--fix", "--json", env=env).stdout)
    assert again["fixed"] == []
    assert [c["status"] for c in again["checks"]] == ["ok", "ok", "ok"]


def test_a_named_agent_without_a_gate_is_exit_6(cli: Cli, sample: Path, tmp_path: Path) -> None:
    done = cli("doctor", "gemini", "--json", env=home_env(tmp_path))
    assert done.code == 6
    (found,) = json.loads(done.stdout)["violations"]
    assert found["fix"] == "memkeeper install-hooks gemini"


def test_no_gate_installed_is_exit_0_and_says_so(cli: Cli, tmp_path: Path) -> None:
    done = cli("doctor", env=home_env(tmp_path))
    assert (done.code, done.stdout) == (
        0,
        "no agent's gate is installed here (memkeeper install-hooks AGENT...)\n",
    )


def test_an_unknown_agent_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    done = cli("doctor", "vim", env=home_env(tmp_path))
    assert done.code == 2
    assert "unknown agent 'vim'" in done.stderr

"""``memkeeper doctor`` against the agents themselves: Claude Code and Codex run for real,
offline, against a scripted model (``fakemodels``) whose one tool call rewrites CLAUDE.md
with a shell ``>`` — what the gate refuses whenever it runs.

Each trap doctor names is shown to be real (the rewrite goes through), doctor to exit 6 on
it, and its fix to make the gate run (the rewrite is refused): Claude Code started in a
subdirectory and above the repository, before and after ``doctor --fix``; Codex in an
untrusted project, then a trusted one whose hooks nobody reviewed (skipped silently), then
with the hooks allowed as doctor says a headless ``codex exec`` must be.

Gemini CLI with ``--skip-trust`` in an untrusted folder (project hooks off, without a word),
then in a folder trusted as doctor says, then started in a subdirectory, before and after
``doctor --fix gemini``.

The CLIs come from npm (``@anthropic-ai/claude-code``, ``@openai/codex``,
``@google/gemini-cli``): on PATH, or in
``$MEMKEEPER_AGENT_BIN`` (e.g. ``npm install --prefix DIR …`` then ``DIR/node_modules/.bin``);
without them these tests are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memkeeper.doctor.facts import codex_hooks_list
from tests.conftest import MEMKEEPER, run_cli
from tests.e2e.fakemodels import Anthropic, Gemini, Responses
from tests.e2e.hooktables import initialised

SEARCH = os.pathsep.join([os.environ.get("MEMKEEPER_AGENT_BIN", ""), os.environ.get("PATH", "")])
CLAUDE = shutil.which("claude", path=SEARCH)
CODEX = shutil.which("codex", path=SEARCH)
GEMINI = shutil.which("gemini", path=SEARCH)
BASE_PATH = os.pathsep.join([str(Path(MEMKEEPER).parent), "/usr/local/bin", "/usr/bin", "/bin"])
AGENT_PATH = os.pathsep.join([str(Path(CODEX).parent) if CODEX else "", BASE_PATH])
REFUSED = "is section-owned: `>` would rewrite it"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return initialised(tmp_path / "repo")


def rewrite(root: Path) -> str:
    return f"printf '# Gone\\n' > {root / 'CLAUDE.md'}"


def doctor(root: Path, home: Path, *args: str, **env: str) -> dict[str, Any]:
    full = {"HOME": str(home), "PATH": BASE_PATH, **env}
    done = run_cli(root, "doctor", "--json", *args, env=full)
    out: dict[str, Any] = json.loads(done.stdout)
    out["code"] = done.code
    return out


def rules(out: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in out.get("violations") or []]


# -- Claude Code ----------------------------------------------------------------------------------


def run_claude(start: Path, home: Path, root: Path) -> tuple[bool, str]:
    """Claude Code headless in ``start``: whether CLAUDE.md survived, and what the model got."""
    before = (root / "CLAUDE.md").read_bytes()
    with Anthropic(rewrite(root)) as model:
        env = {
            "PATH": BASE_PATH,
            "HOME": str(home),
            "IS_SANDBOX": "1",  # root may bypass permissions only in a sandbox
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        assert CLAUDE is not None
        args = ["-p", "rewrite CLAUDE.md", "--output-format", "stream-json", "--verbose"]
        args += ["--permission-mode", "bypassPermissions"]
        subprocess.run([CLAUDE, *args], cwd=start, env=env, capture_output=True, timeout=180)
        told = "\n".join(model.sent())
    kept = (root / "CLAUDE.md").read_bytes() == before
    (root / "CLAUDE.md").write_bytes(before)
    return kept, told


@pytest.mark.skipif(CLAUDE is None, reason="Claude Code (npm @anthropic-ai/claude-code) not found")
def test_claude_code_in_a_subdirectory_runs_the_gate_once_doctor_fixed_it(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert run_cli(repo, "install-hooks", "claude-code").code == 0
    kept, told = run_claude(repo / "src", home, repo)
    assert not kept  # the trap: no project hook runs there
    found = doctor(repo, home)
    assert found["code"] == 6
    assert rules(found) == ["subdirectory"]
    fixed = doctor(repo, home, "--fix")
    assert fixed["code"] == 0
    for start in (repo / "src", tmp_path, repo):
        kept, told = run_claude(start, home, repo)
        assert kept, start
        assert REFUSED in told, start
        assert told.count(REFUSED) == 1, start  # at the root, the project's gate alone


# -- Codex ----------------------------------------------------------------------------------------


def run_codex(start: Path, home: Path, root: Path, *flags: str) -> tuple[bool, str]:
    before = (root / "CLAUDE.md").read_bytes()
    config = home / ".codex" / "config.toml"
    with Responses(rewrite(root)) as model:
        provider = (
            f'model_providers.fake={{name="fake",base_url="{model.url}/v1",'
            'wire_api="responses",env_key="FAKE_KEY"}'
        )
        env = {"PATH": BASE_PATH, "HOME": str(home), "FAKE_KEY": "x", "SHELL": "/bin/bash"}
        assert CODEX is not None
        assert config.parent.is_dir()
        args = ["exec", "-c", provider, "-c", "model_provider=fake", "-m", "gpt-5.5"]
        args += ["--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", *flags]
        subprocess.run(
            [CODEX, *args, "rewrite CLAUDE.md"],
            cwd=start,
            env=env,
            capture_output=True,
            timeout=180,
        )
        told = "\n".join(model.sent())
    kept = (root / "CLAUDE.md").read_bytes() == before
    (root / "CLAUDE.md").write_bytes(before)
    return kept, told


@pytest.mark.skipif(CODEX is None, reason="Codex (npm @openai/codex) not found")
def test_codex_runs_the_gate_only_once_project_and_hooks_are_trusted(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    assert run_cli(repo, "install-hooks", "codex").code == 0
    assert run_codex(repo, home, repo)[0] is False  # untrusted project: .codex/ ignored
    found = doctor(repo, home)
    assert found["code"] == 6
    assert rules(found) == ["project-trust", "hook-trust"]  # the pre-tool hook: the gate
    (trust,) = [v for v in found["violations"] if v["rule"] == "project-trust"]
    table = [
        line for line in trust["fix"].splitlines() if line.startswith(("[projects.", "trust_"))
    ]
    (home / ".codex" / "config.toml").write_text("\n".join(table) + "\n")
    assert run_codex(repo, home, repo)[0] is False  # unreviewed hooks: skipped, silently
    assert rules(doctor(repo, home)) == ["hook-trust"]
    kept, told = run_codex(repo / "src", home, repo, "--dangerously-bypass-hook-trust")
    assert kept  # doctor's fix for a headless run
    assert "Command blocked by PreToolUse hook: " in told
    assert REFUSED in told
    # Reviewed as /hooks records it: each hook's current hash under its key.
    state = "".join(
        f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
        for key, digest in current_hashes(repo, home).items()
    )
    with (home / ".codex" / "config.toml").open("a") as config:
        config.write(state)
    found = asked_codex(repo, home)
    assert found["code"] == 0
    assert all(
        "(Codex says)" in c["message"] for c in found["checks"] if c["check"] == "hook-trust"
    )
    kept, told = run_codex(repo, home, repo)
    assert kept
    assert REFUSED in told
    # A changed handler (here its timeout) is no longer trusted: Codex skips it, doctor says so.
    hooks = repo / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text().replace('"timeout": 30', '"timeout": 31'))
    found = asked_codex(repo, home)
    assert rules(found) == ["hook-trust"]
    assert all("changed since it was reviewed" in v["message"] for v in found["violations"])
    assert run_codex(repo, home, repo)[0] is False


def asked_codex(root: Path, home: Path) -> dict[str, Any]:
    """doctor with Codex on PATH, again while Codex did not answer in time (a loaded machine)."""
    for _ in range(3):
        found = doctor(root, home, PATH=AGENT_PATH)
        if "Codex did not answer" not in json.dumps(found):
            return found
    return found


def current_hashes(root: Path, home: Path) -> dict[str, str]:
    """Each project hook's hash as ``codex app-server`` ``hooks/list`` gives it (what /hooks
    records when the user trusts it)."""
    assert CODEX is not None
    listed = codex_hooks_list(CODEX, root, {"PATH": BASE_PATH, "HOME": str(home)})
    assert listed, "codex app-server gave no hooks/list answer"
    return {hook["key"]: hook["currentHash"] for hook in listed}


# -- Gemini CLI -----------------------------------------------------------------------------------


def run_gemini(start: Path, home: Path, root: Path, *flags: str) -> tuple[bool, str]:
    before = (root / "CLAUDE.md").read_bytes()
    with Gemini(rewrite(root)) as model:
        env = {
            "PATH": BASE_PATH,
            "HOME": str(home),
            "GEMINI_API_KEY": "x",
            "GOOGLE_GEMINI_BASE_URL": model.url,
        }
        assert GEMINI is not None
        args = [GEMINI, "--yolo", "-p", "rewrite CLAUDE.md", *flags]
        subprocess.run(args, cwd=start, env=env, capture_output=True, timeout=180)
        told = "\n".join(model.sent())
    kept = (root / "CLAUDE.md").read_bytes() == before
    (root / "CLAUDE.md").write_bytes(before)
    return kept, told


@pytest.mark.skipif(GEMINI is None, reason="Gemini CLI (npm @google/gemini-cli) not found")
def test_gemini_runs_the_gate_in_a_trusted_folder_and_from_a_subdirectory_once_fixed(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    auth = '{\n  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n'
    (home / ".gemini" / "settings.json").write_text(auth)
    assert run_cli(repo, "install-hooks", "gemini").code == 0
    assert run_gemini(repo, home, repo, "--skip-trust")[0] is False  # hooks off, silently
    found = doctor(repo, home)
    assert found["code"] == 6
    assert rules(found) == ["folder-trust", "subdirectory"]
    trusted = json.dumps({str(repo): "TRUST_FOLDER"})
    (home / ".gemini" / "trustedFolders.json").write_text(trusted)
    kept, told = run_gemini(repo, home, repo, "--skip-trust")
    assert kept
    assert REFUSED in told
    assert run_gemini(repo / "src", home, repo)[0] is False  # the subdirectory trap
    assert doctor(repo, home, "--fix")["code"] == 0
    assert (home / ".gemini" / "settings.json").read_text().startswith(auth[:-3])
    for start in (repo / "src", repo):
        kept, told = run_gemini(start, home, repo)
        assert kept, start
        assert REFUSED in told, start

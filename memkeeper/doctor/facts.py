"""What ``doctor`` judges, collected on this machine (docs/reference.md §4.30): the gates
installed in the project, where the gate commands and a login shell find memkeeper, and the
user's own configuration each agent decides with — Claude Code's ``~/.claude/settings.json``,
Codex's ``$CODEX_HOME/config.toml`` (project trust, hook trust), Gemini CLI's
``~/.gemini/trustedFolders.json`` and ``settings.json``. Reads only; a file that cannot be
read counts as absent. ``doctor.judge`` decides.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.doctor.judge import LOGIN_SHELL, VENV, CodexHook, Facts, Served, gemini_trusted
from memkeeper.doctor.userhook import SUFFIX
from memkeeper.fs.agentfiles import gate_pattern, installed_gates
from memkeeper.fs.readable import readable
from memkeeper.gate import jsonc
from memkeeper.gate.agents import AGENTS
from memkeeper.gate.mcp import registered
from memkeeper.names import HOME_DIR

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    LoginShell = Callable[[str, Path], str | None]
    CodexReview = Callable[[str, Path, Mapping[str, str]], dict[str, str] | None]


def login_memkeeper(shell: str, where: Path) -> str | None:
    """What ``SHELL -lc 'command -v memkeeper'`` prints in ``where`` (None: nothing found)."""
    try:
        done = subprocess.run(
            [shell, "-lc", "command -v memkeeper"],
            cwd=where,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return found[-1] if done.returncode == 0 and found else None


def codex_review(codex: str, root: Path, env: Mapping[str, str]) -> dict[str, str] | None:
    """Each hook's ``trustStatus`` (``trusted``, ``untrusted``, ``modified``) by its key, as
    Codex itself judges it — ``codex app-server``'s ``hooks/list`` compares the hash of each
    handler with the one its review recorded; None when Codex does not answer."""
    listed = codex_hooks_list(codex, root, env)
    if listed is None:
        return None
    return {
        hook["key"]: hook["trustStatus"]
        for hook in listed
        if isinstance(hook.get("key"), str) and isinstance(hook.get("trustStatus"), str)
    }


def codex_hooks_list(codex: str, root: Path, env: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """The hooks ``codex app-server`` lists for ``root`` (each with its ``key``,
    ``currentHash`` and ``trustStatus``); None when it does not answer within 20 s."""
    calls: list[dict[str, Any]] = [
        {
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "memkeeper-doctor", "version": "1"}},
        },
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    lines = "".join(json.dumps({"jsonrpc": "2.0", **call}) + "\n" for call in calls)
    try:
        server = subprocess.Popen(
            [codex, "app-server"],
            cwd=root,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    try:
        stdin, stdout = server.stdin, server.stdout
        if stdin is None or stdout is None:  # (never: both are pipes)
            return None
        stdin.write(lines.encode())
        stdin.flush()
        answer = _answer(stdout, 2)
    except OSError:
        return None
    finally:
        server.kill()
        server.wait()
        for stream in (server.stdin, server.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    listed = (answer or {}).get("result", {}).get("data")
    if not isinstance(listed, list):
        return None
    return [
        hook
        for entry in listed
        if isinstance(entry, dict)
        for hook in entry.get("hooks", [])
        if isinstance(hook, dict)
    ]


def _answer(stream: Any, wanted: int) -> dict[str, Any] | None:
    """The JSON-RPC answer to call ``wanted`` (None: the stream ended, or 20 s passed)."""
    import time

    deadline = time.monotonic() + 20
    while (left := deadline - time.monotonic()) > 0:
        if not readable(stream, left):
            return None
        line = stream.readline()
        if not line:
            return None
        with contextlib.suppress(ValueError):
            found = json.loads(line)
            if isinstance(found, dict) and found.get("id") == wanted:
                return found
    return None


def collect(
    root: Path,
    named: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    login: LoginShell = login_memkeeper,
    review: CodexReview = codex_review,
) -> Facts:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    gates = tuple(installed_gates(root))
    venv = os.access(root / VENV, os.X_OK)
    found = shutil.which("memkeeper", path=env.get("PATH")) or (str(root / VENV) if venv else None)
    shell = env.get("SHELL") or "/bin/bash"
    wanted = set(named) or {agent for agent, _ in gates}
    asks_login = bool(wanted & LOGIN_SHELL) and found is not None and not venv
    codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
    codex = _toml(codex_home / "config.toml")
    claude = _json(home / ".claude" / "settings.json")
    gemini = _json(home / ".gemini" / "settings.json")
    trust_file = Path(
        env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini/trustedFolders.json"
    )
    return Facts(
        root=str(root),
        named=tuple(named),
        gates=gates,
        found=found,
        venv=venv,
        login=login(shell, root) if asks_login else None,
        shell=shell,
        mcp=frozenset(agent for agent in AGENTS if registered(str(root), agent)),
        user_gates=frozenset(
            agent
            for agent, settings, event in (
                ("claude-code", claude, "PreToolUse"),
                ("gemini", gemini, "BeforeTool"),
            )
            if _runs_user_gate(settings, event)
        ),
        claude_hooks_off=claude.get("disableAllHooks") is True,
        gemini_hooks_off=_member(gemini, "hooksConfig", "enabled") is False,
        claude_settings=str(home / ".claude" / "settings.json"),
        gemini_settings=str(home / ".gemini" / "settings.json"),
        codex_config=str(codex_home / "config.toml"),
        codex_trust=_codex_trust(codex, str(root)),
        codex_hooks=_codex_hooks(codex, root, _reviewed(wanted, env, root, review)),
        gemini_trust=gemini_trusted(_rules(trust_file), os.path.realpath(root)),
        gemini_trust_file=str(trust_file),
        gemini_trust_off=_gemini_off(env, home),
        served=_served(root),
    )


def _served(root: Path) -> Served:
    """The served gate's config, its http hooks in the local settings, and its lock."""
    from memkeeper.errors import Invalid
    from memkeeper.fs import gateconfig

    home = str(root / HOME_DIR)
    try:
        config = gateconfig.load(home)
    except Invalid:
        config = None
    local = _json(root / ".claude" / "settings.local.json")
    hooks = local.get("hooks")
    hooked: list[str] = []
    stale: list[str] = []
    blocking = False
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for handler in inner if isinstance(inner, list) else ():
                url = handler.get("url") if isinstance(handler, dict) else None
                if not (isinstance(url, str) and url.endswith(gateconfig.PATH + "/claude-code")):
                    continue
                token = _member(handler, "headers", "Authorization")
                ours = config is not None and (url, token) == (
                    config.url("claude-code"),
                    f"Bearer {config.token}",
                )
                (hooked if ours else stale).append(event)
                blocking |= ours and event == "PreToolUse" and handler.get("onFailure") == "block"
    url = None if config is None else config.url("claude-code")
    held = _held(os.path.join(home, gateconfig.LOCK_FILE))
    return Served(url, tuple(hooked), tuple(stale), held, blocking)


def _held(lock: str) -> bool:
    """Whether another process holds the ``flock`` on ``lock`` (memkeeper watch, serving)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _member(settings: dict[str, Any], *keys: str) -> Any:
    """``settings[k1][k2]…``, or None where an object on the way is missing."""
    found: Any = settings
    for key in keys:
        found = found.get(key) if isinstance(found, dict) else None
    return found


def _json(path: Path) -> dict[str, Any]:
    """A JSON(C) object file's content; {} when it is missing or unreadable."""
    try:
        found = json.loads(jsonc.blank(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _handlers(settings: dict[str, Any], event: str) -> list[tuple[int, int, str]]:
    """``(group, handler, command)`` for each command handler of ``event``'s hooks."""
    groups = settings.get("hooks", {}) if isinstance(settings.get("hooks"), dict) else {}
    found = []
    listed = groups.get(event)
    for g, group in enumerate(listed if isinstance(listed, list) else ()):
        inner = group.get("hooks") if isinstance(group, dict) else None
        for h, handler in enumerate(inner if isinstance(inner, list) else ()):
            if isinstance(handler, dict) and isinstance(handler.get("command"), str):
                found.append((g, h, handler["command"]))
    return found


def _runs_user_gate(settings: dict[str, Any], event: str) -> bool:
    """Whether the user's settings run memkeeper's user-level gate before each tool."""
    return any(cmd.rstrip().endswith(SUFFIX) for _, _, cmd in _handlers(settings, event))


def _codex_trust(config: dict[str, Any], root: str) -> str | None:
    projects = config.get("projects")
    entry = projects.get(root) if isinstance(projects, dict) else None
    level = entry.get("trust_level") if isinstance(entry, dict) else None
    return level if isinstance(level, str) else None


def _reviewed(
    wanted: set[str], env: Mapping[str, str], root: Path, review: CodexReview
) -> Callable[[str], str]:
    """Codex's own verdict on a hook by its key, where Codex is installed and a Codex gate
    is asked about ("": not asked; ``unanswered``: asked, and Codex gave none)."""
    codex = shutil.which("codex", path=env.get("PATH")) if "codex" in wanted else None
    if codex is None:
        return lambda key: ""
    found = review(codex, root, env)
    if found is None:
        return lambda key: "unanswered"
    return lambda key: found.get(key, "")


def _codex_hooks(
    config: dict[str, Any], root: Path, reviewed: Callable[[str], str]
) -> tuple[CodexHook, ...]:
    """Memkeeper's handlers in the project's .codex/hooks.json, keyed as Codex keys their
    review (``FILE:EVENT:GROUP:HANDLER``), with what ``[hooks.state]`` holds for each and
    Codex's own verdict where it gave one."""
    source = root / ".codex" / "hooks.json"
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    states = states if isinstance(states, dict) else {}
    pattern = gate_pattern("codex")
    settings = _json(source)
    listed = settings.get("hooks")
    events = listed if isinstance(listed, dict) else {}
    found = []
    for event in events:
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", event).lower()  # as Codex keys it
        for g, h, cmd in _handlers(settings, event):
            if pattern.search(cmd):
                key = f"{source}:{snake}:{g}:{h}"
                state = states.get(key)
                state = state if isinstance(state, dict) else {}
                trusted = isinstance(state.get("trusted_hash"), str)
                enabled = state.get("enabled") is not False
                found.append(CodexHook(key, trusted, enabled, reviewed(key)))
    return tuple(found)


def _rules(path: Path) -> dict[str, str]:
    """Gemini CLI's trust rules, each folder resolved as Gemini CLI resolves it."""
    found = _json(path)
    return {
        os.path.realpath(folder): level
        for folder, level in found.items()
        if isinstance(level, str) and re.fullmatch(r"[A-Z_]+", level)
    }


def _gemini_off(env: Mapping[str, str], home: Path) -> str:
    """Why folder trust does not hold Gemini CLI back here ("": it does)."""
    if env.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return "GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder (in this environment)"
    settings = _json(home / ".gemini" / "settings.json")
    security = settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return f"folder trust is off in {home / '.gemini' / 'settings.json'}"
    return ""

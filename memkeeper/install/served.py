"""``install-hooks claude-code --served``: the gate served by ``memkeeper watch`` over HTTP
(docs/reference.md §4.20). This machine's part only — nothing shared changes:

* ``.memkeeper/gate.json`` (mode 0600): the port and token the daemon serves on, kept across
  installs (a second install changes nothing), made once;
* ``.claude/settings.local.json`` (Claude Code's per-user, gitignored settings): one
  ``type: "http"`` hook per event the served gate answers (``Setup.served``), POSTing to
  ``http://127.0.0.1:PORT/hook/claude-code`` with the token and the agent's
  ``$MEMKEEPER_AGENT`` / ``$MEMKEEPER_ROOT`` in headers, edited as text like every hook file.

The shared ``.claude/settings.json`` keeps the command hooks, which step aside while the
daemon serves (``install.command``), and stay the gate whenever it does not.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from memkeeper.fs import gateconfig
from memkeeper.gate.agents import setup as setup_of
from memkeeper.gate.agents.base import CONTEXT_EVENTS
from memkeeper.gate.agents.claude_code import matcher
from memkeeper.install.jsonhooks import JsonHooks, add_hooks, remove_hooks, top_object
from memkeeper.install.plan import Plan, report
from memkeeper.names import AGENT_ENV, HOME_DIR, ROOT_ENV

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from memkeeper.fs.gateconfig import GateConfig
    from memkeeper.fs.git import Runner

LOCAL = ".claude/settings.local.json"
TIMEOUT_S = 30  # Claude Code lets the call through after it: see reference §4.20
# Claude Code 2.1.332+ blocks the call when this hook fails (refused, timed out, non-2xx, not
# JSON); older CLIs ignore the field and let it through (the command hook's guard covers them)
ON_FAILURE = {"PreToolUse": "block"}
URL_PATTERN = r"^http://127\.0\.0\.1:\d+/hook/claude-code$"
_END = "/hook/claude-code"
TODO = (
    "restart memkeeper watch: it serves the gate at {url} while it runs; restart Claude Code "
    "sessions so they read .claude/settings.local.json (/hooks lists both gates)"
)
IGNORE_TODO = "add .claude/settings.local.json to .gitignore: it holds this machine's gate token"


def handler(config: GateConfig, event: str = "") -> dict[str, Any]:
    """One http hook: the served gate's URL, its token, and the agent's identity and root
    as the command hook would read them from its environment; on a pre-tool call, blocking
    the call when the daemon cannot answer (``ON_FAILURE``)."""
    failure = {"onFailure": ON_FAILURE[event]} if event in ON_FAILURE else {}
    return {
        "type": "http",
        "url": config.url("claude-code"),
        "headers": {
            "Authorization": f"Bearer {config.token}",
            "X-Memkeeper-Agent": f"${AGENT_ENV}",
            "X-Memkeeper-Root": f"${ROOT_ENV}",
        },
        "allowedEnvVars": [AGENT_ENV, ROOT_ENV],
        "timeout": TIMEOUT_S,
        **failure,
    }


def nested(event: str, one: dict[str, Any]) -> dict[str, Any]:
    return {"matcher": matcher(event), "hooks": [one]}


def http_hooks(config: GateConfig) -> JsonHooks:
    setup = setup_of("claude-code")
    events = tuple(
        (event, {"hooks": [one]} if event in CONTEXT_EVENTS else nested(event, one))
        for event in setup.served
        for one in (handler(config, event),)
    )
    return JsonHooks("claude-code", LOCAL, events, {}, key="url", pattern=URL_PATTERN)


def add(text: str | None, spec: JsonHooks) -> str:
    """``text`` with the http hooks: unchanged when every one is there as wanted, else
    memkeeper's taken out and put in again (a new port or token)."""
    if text is not None and text.strip() and _current(text, spec):
        return text
    return add_hooks(remove_hooks(text, spec) if text is not None and text.strip() else text, spec)


def remove(text: str | None, config: GateConfig | None = None) -> str:
    spec = http_hooks(config or gateconfig.GateConfig(1, "-"))
    return remove_hooks(text or "{}", spec)


def _current(text: str, spec: JsonHooks) -> bool:
    """Whether each event holds exactly memkeeper's handler, as wanted, once."""
    hooks = top_object(text, spec.rel).value.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for event, entry in spec.events:
        groups = hooks.get(event)
        handlers = [
            h
            for g in (groups if isinstance(groups, list) else [])
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"]
        ]
        found = [h for h in handlers if isinstance(h, dict) and str(h.get("url")).endswith(_END)]
        if found != entry["hooks"]:
            return False
    return True


# -- planned with the other files, the config written once they are ---------------------------


def plan_install(plan: Plan) -> GateConfig:
    """Plan the http hooks; the config they name (the home's, else a new one)."""
    config = gateconfig.load(_home(plan)) or gateconfig.new_config(gateconfig.free_port())
    spec = http_hooks(config)
    plan.edit(LOCAL, "served", lambda text: add(text, spec))
    return config


def finish_install(plan: Plan, config: GateConfig, run: Runner) -> dict[str, Any]:
    """Keep the config (the hooks are written); what was done, and what is left to do."""
    home = _home(plan)
    kept = gateconfig.load(home)
    if kept != config:
        gateconfig.save(home, config)
    hooks = report(plan, LOCAL, "served")
    local = plan.root / LOCAL
    mode = stat.S_IMODE(local.stat().st_mode)
    # it holds the token, its owner's alone as gate.json is: with it, another local user could
    # call the served gate as any agent of this machine
    if hooks.get("created"):
        os.chmod(local, 0o600)
    elif mode & 0o077:
        os.chmod(local, mode & 0o700)
        hooks["private"] = True  # said: the user's own file's mode was changed
    url = config.url("claude-code")
    todo = [TODO.format(url=url)]
    if run(["check-ignore", "-q", LOCAL], plan.root)[0] == 1:
        todo.append(IGNORE_TODO)
    return {
        "url": url,
        "config": os.path.join(home, gateconfig.CONFIG_FILE),
        "config_changed": kept != config,
        "hooks": hooks,
        "todo": todo,
    }


def plan_uninstall(plan: Plan) -> None:
    if plan.read(LOCAL) is not None or LOCAL in plan.edits:
        plan.edit(LOCAL, "served", lambda text: remove(text))


def finish_uninstall(plan: Plan) -> dict[str, Any]:
    removed = gateconfig.remove(_home(plan))
    return {"hooks": report(plan, LOCAL, "served"), "config_removed": removed}


def uninstall_served(root: Path) -> dict[str, Any]:
    """``uninstall-hooks claude-code --served``: the served gate alone out (the command
    hooks stay, and answer every call again); what was done, as ``uninstall`` says it."""
    plan = Plan(root)
    plan_uninstall(plan)
    plan.prune()
    plan.apply()
    served = finish_uninstall(plan)
    return {"root": str(root), "git_hook": None, "git_filter": None, "agents": {}, "served": served}


def _home(plan: Plan) -> str:
    return os.path.join(plan.root, HOME_DIR)

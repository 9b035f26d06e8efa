"""``memkeeper install-hooks`` and ``uninstall-hooks``: the git pre-commit hook
(``install.githook``), the clean filter that keeps live regions out of git
(``install.gitfilter``), and each agent's gate (and, with ``--mcp``, its MCP server) in the
project's configuration.

What goes where is each agent's ``Setup`` (``gate.agents``); the files are edited as text
(``install.jsonhooks``, ``install.scripts``, ``install.mcp``): memkeeper's entries are
added, or their commands updated where they are, and every other byte stays — so a second
install changes nothing, and uninstall takes out exactly what install put in (memkeeper's
entries are told by their command), deleting a file only when nothing else is left in it
than what memkeeper starts a file with. Everything is planned before anything is written
(``install.plan``): a file memkeeper cannot edit (not JSON, a symlink, an MCP server of that
name that is not memkeeper's) stops the whole command with nothing changed.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import AGENTS
from memkeeper.fs.git import Runner, run_git
from memkeeper.gate.agents import setup as setup_of
from memkeeper.install import jsonhooks, scripts
from memkeeper.install import mcp as servers
from memkeeper.install import served as served_gate
from memkeeper.install.command import gate_command, missing
from memkeeper.install.gitfilter import install_filter, uninstall_filter
from memkeeper.install.githook import (
    check_git_hooks,
    hooks_dir,
    install_git_hook,
    uninstall_git_hook,
)
from memkeeper.install.plan import Plan, report

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

SETTINGS = setup_of("claude-code").hook_files[0]
CLAUDE_COMMAND = gate_command("claude-code", guarded=True)  # the tool events
CLAUDE_START_COMMAND = gate_command("claude-code")  # SessionStart's: http hooks cannot serve it
MISSING = missing("claude-code")


def agent_names(names: Sequence[str]) -> list[str]:
    """The agents named (``all``: every one), each once, in ``AGENTS`` order."""
    unknown = [name for name in names if name not in (*AGENTS, "all")]
    if unknown:
        raise Invalid(
            f"unknown agent {unknown[0]!r} — name one or more of {', '.join(AGENTS)}, or all"
        )
    return [agent for agent in AGENTS if agent in names or "all" in names]


def install(
    root: Path,
    agents: Sequence[str] = (),
    *,
    mcp: bool = False,
    served: bool = False,
    python: str = sys.executable,
    run: Runner = run_git,
) -> dict[str, Any]:
    """Install the git hook, the clean filter for generated pages and each agent's gate
    (and MCP server; with ``served``, Claude Code's gate served by ``watch``); what was
    done."""
    if served and "claude-code" not in agents:
        raise Invalid(
            "--served is Claude Code's (its http hooks) — run: memkeeper install-hooks "
            "claude-code --served"
        )
    hooks = hooks_dir(root, run)
    plan = Plan(root)
    for agent in agents:
        _plan_install(plan, agent, mcp)
    config = served_gate.plan_install(plan) if served else None
    check_git_hooks(hooks)  # a legacy hook in the way: refused before anything is written
    live = install_filter(root, python, run)  # (an invalid policy: refused, nothing written)
    payload: dict[str, Any] = {"root": str(root), **install_git_hook(hooks, python)}
    payload["git_filter"] = live
    plan.apply()
    payload["agents"] = {agent: _report(plan, agent, mcp, installing=True) for agent in agents}
    if config is not None:
        payload["served"] = served_gate.finish_install(plan, config, run)
        payload["agents"]["claude-code"]["todo"] += payload["served"]["todo"]
    if "claude-code" in agents:  # the keys of the --claude-code days
        changed = plan.changed(SETTINGS)
        payload.update(
            claude_settings=str(root / SETTINGS),
            claude_command=CLAUDE_COMMAND,
            settings_changed=changed,
        )
    return payload


def uninstall(
    root: Path, agents: Sequence[str] | None = None, *, run: Runner = run_git
) -> dict[str, Any]:
    """Remove what ``install`` added for ``agents``; for None, everything: every agent's
    and the git hook (when ``root`` is in a git repository)."""
    hooks = None
    if agents is None:
        with contextlib.suppress(Invalid):
            hooks = hooks_dir(root, run)
    plan = Plan(root)
    named = list(AGENTS if agents is None else agents)
    for agent in named:
        _plan_uninstall(plan, agent)
    if "claude-code" in named:
        served_gate.plan_uninstall(plan)
    plan.prune()
    payload: dict[str, Any] = {"root": str(root)}
    payload.update(uninstall_git_hook(hooks) if hooks is not None else {"git_hook": None})
    payload["git_filter"] = uninstall_filter(root, run) if hooks is not None else None
    plan.apply()
    payload["agents"] = {agent: _report(plan, agent, True, installing=False) for agent in named}
    if "claude-code" in named:
        payload["served"] = served_gate.finish_uninstall(plan)
    return payload


# -- planning the agents' files -----------------------------------------------------------------


def _plan_install(plan: Plan, agent: str, with_mcp: bool) -> None:
    setup = setup_of(agent)
    if setup.scripts is not None:
        for event in setup.events:
            plan.put(scripts.plan_install(plan, agent, event))
    else:
        spec = jsonhooks.json_hooks(agent)
        plan.edit(spec.rel, "hooks", lambda text: jsonhooks.add_hooks(text, spec))
    if with_mcp and setup.mcp_file:
        plan.edit(setup.mcp_file, "mcp", lambda text: servers.add_server(text, agent))


def _plan_uninstall(plan: Plan, agent: str) -> None:
    setup = setup_of(agent)
    if setup.scripts is not None:
        for event in setup.events:
            edit = scripts.plan_uninstall(plan, agent, event)
            if edit is not None:
                plan.put(edit)
    else:
        spec = jsonhooks.json_hooks(agent)
        if plan.read(spec.rel) is not None or spec.rel in plan.edits:
            plan.edit(spec.rel, "hooks", lambda text: jsonhooks.remove_hooks(text or "{}", spec))
    rel = setup.mcp_file
    if rel and (plan.read(rel) is not None or rel in plan.edits):
        plan.edit(rel, "mcp", lambda text: servers.remove_server(text or "", agent))


# -- what was done, for the CLI -----------------------------------------------------------------


def _report(plan: Plan, agent: str, with_mcp: bool, *, installing: bool) -> dict[str, Any]:
    setup = setup_of(agent)
    hooks = [report(plan, rel, "hooks") for rel in setup.hook_files]
    out: dict[str, Any] = {"label": setup.label, "hooks": hooks, "mcp": None, "todo": []}
    if with_mcp and setup.mcp_file:
        out["mcp"] = report(plan, setup.mcp_file, "mcp")
    if installing:
        out["todo"] = list(setup.todo)
        if with_mcp:
            out["todo"].append(servers.todo(agent, str(plan.root)))
    return out

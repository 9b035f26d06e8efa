"""``memkeeper install-hooks`` and ``uninstall-hooks``: the git pre-commit hook, and each
agent's gate (and, with ``--mcp``, its MCP server) in the project's configuration.

The git hook runs ``memkeeper check --staged``. As pre-commit does, it keeps a hook that was
there before as ``pre-commit.legacy`` and runs it first; re-installing rewrites only our own
hook, so nothing nests. It names the interpreter memkeeper is installed in (found even when
no virtualenv is active, from an IDE or a git GUI), falling back to ``memkeeper`` on PATH if
that interpreter is gone. The hooks directory comes from ``git rev-parse --git-path hooks``:
right in linked worktrees and with ``core.hooksPath``.

Each agent's files (``fs/agentfiles.py`` names them, ``gate/agentconf.py`` says what goes in
them) are edited as text: memkeeper's entries are added, or their commands updated where
they are, and every other byte stays — so a second install changes nothing, and uninstall
takes out exactly what install put in (memkeeper's entries are told by their command),
deleting a file only when nothing else is left in it than what memkeeper starts a file with.
Everything is planned before anything is written: a file memkeeper cannot edit (not JSON, a
symlink, an MCP server of that name that is not memkeeper's) stops the whole command with
nothing changed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs import atomic
from memkeeper.fs.agentfiles import AGENTS, HOOK_FILES, LABELS, MCP_FILES
from memkeeper.fs.git import Runner, run_git
from memkeeper.gate import agentconf, clinehooks, mcpconf
from memkeeper.gate.installplan import Plan, report

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MARKER = "# memkeeper: pre-commit hook, installed by `memkeeper install-hooks`"
LEGACY = "pre-commit.legacy"
SETTINGS = HOOK_FILES["claude-code"][0]
CLAUDE_COMMAND = agentconf.gate_command("claude-code")
MISSING = agentconf.missing("claude-code")

HOOK_TEMPLATE = """#!/bin/sh
{marker}
# Runs the hook that was here before (kept as {legacy}), then `memkeeper check --staged`.
# Delete this file to uninstall (and rename {legacy} back, if there is one).
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/{legacy}" ]; then
    "$here/{legacy}" "$@" || exit $?
fi
python={python}
if [ -x "$python" ]; then
    exec "$python" -P -m memkeeper check --staged
elif command -v memkeeper >/dev/null 2>&1; then
    exec memkeeper check --staged
fi
echo "memkeeper: not found (it was installed in $python) - install it, then run" \\
    "memkeeper install-hooks again" >&2
exit 1
"""


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
    python: str = sys.executable,
    run: Runner = run_git,
) -> dict[str, Any]:
    """Install the git hook and each agent's gate (and MCP server); what was done."""
    hooks = hooks_dir(root, run)
    plan = Plan(root)
    for agent in agents:
        _plan_install(plan, agent, mcp)
    payload: dict[str, Any] = {"root": str(root), **install_git_hook(hooks, python)}
    plan.apply()
    payload["agents"] = {agent: _report(plan, agent, mcp, installing=True) for agent in agents}
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
    plan.prune()
    payload: dict[str, Any] = {"root": str(root)}
    payload.update(uninstall_git_hook(hooks) if hooks is not None else {"git_hook": None})
    plan.apply()
    payload["agents"] = {agent: _report(plan, agent, True, installing=False) for agent in named}
    return payload


def hooks_dir(root: Path, run: Runner = run_git) -> Path:
    code, out = run(["rev-parse", "--git-path", "hooks"], root)
    if code != 0:
        raise Invalid(f"{root}: not a git repository — run git init, then install-hooks")
    return root / os.fsdecode(out.strip())


# -- the git hook -------------------------------------------------------------------------------


def hook_script(python: str) -> str:
    return HOOK_TEMPLATE.format(marker=MARKER, legacy=LEGACY, python=shlex.quote(python))


def install_git_hook(hooks: Path, python: str) -> dict[str, Any]:
    """Write our pre-commit hook, moving a foreign one to ``pre-commit.legacy`` first."""
    hooks.mkdir(parents=True, exist_ok=True)
    hook, legacy = hooks / "pre-commit", hooks / LEGACY
    script = hook_script(python).encode()
    old = hook.read_bytes() if hook.is_file() else None
    moved = os.path.lexists(hook) and (old is None or MARKER.encode() not in old)
    if moved:
        os.replace(hook, legacy)
    if old != script or moved:
        atomic.atomic_write(hooks, "pre-commit", script)
    hook.chmod(0o755)
    return {
        "git_hook": str(hook),
        "legacy_hook": str(legacy) if legacy.exists() else None,
        "moved_existing_hook": moved,
        "git_hook_changed": old != script or moved,
    }


def uninstall_git_hook(hooks: Path) -> dict[str, Any]:
    """Delete our pre-commit hook and put back the one it moved; a foreign hook stays."""
    hook, legacy = hooks / "pre-commit", hooks / LEGACY
    ours = hook.is_file() and not hook.is_symlink() and MARKER.encode() in hook.read_bytes()
    if ours:
        hook.unlink()
    restored = ours and os.path.lexists(legacy)
    if restored:
        os.replace(legacy, hook)
    return {"git_hook": str(hook), "git_hook_removed": ours, "legacy_hook_restored": restored}


# -- planning the agents' files -----------------------------------------------------------------


def _plan_install(plan: Plan, agent: str, mcp: bool) -> None:
    if agent == "cline":
        for event in clinehooks.EVENTS:
            plan.put(clinehooks.plan_install(plan, event))
    else:
        spec = agentconf.json_hooks(agent)
        plan.edit(spec.rel, "hooks", lambda text: agentconf.add_hooks(text, spec))
    if mcp and agent in MCP_FILES:
        plan.edit(MCP_FILES[agent], "mcp", lambda text: mcpconf.add_server(text, agent))


def _plan_uninstall(plan: Plan, agent: str) -> None:
    if agent == "cline":
        for event in clinehooks.EVENTS:
            edit = clinehooks.plan_uninstall(plan, event)
            if edit is not None:
                plan.put(edit)
    else:
        spec = agentconf.json_hooks(agent)
        if plan.read(spec.rel) is not None or spec.rel in plan.edits:
            plan.edit(spec.rel, "hooks", lambda text: agentconf.remove_hooks(text or "{}", spec))
    rel = MCP_FILES.get(agent)
    if rel is not None and (plan.read(rel) is not None or rel in plan.edits):
        plan.edit(rel, "mcp", lambda text: mcpconf.remove_server(text or "", agent))


# -- what was done, for the CLI -----------------------------------------------------------------


def _report(plan: Plan, agent: str, mcp: bool, *, installing: bool) -> dict[str, Any]:
    rels = list(HOOK_FILES[agent])
    hooks = [report(plan, rel, "hooks") for rel in rels]
    out: dict[str, Any] = {"label": LABELS[agent], "hooks": hooks, "mcp": None, "todo": []}
    if mcp and agent in MCP_FILES:
        out["mcp"] = report(plan, MCP_FILES[agent], "mcp")
    if installing:
        out["todo"] = list(agentconf.TODO[agent])
        if mcp:
            extra = mcpconf.MCP_TODO.get(agent) or mcpconf.cline_mcp(str(plan.root))
            out["todo"].append(extra)
    return out

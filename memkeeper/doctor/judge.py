"""Whether each installed gate will run as its agent runs it, judged from collected facts
(docs/reference.md §4.30). Pure: ``doctor.facts`` reads the files and asks the login shell.

Each finding is ``ok``, ``fail`` (the gate would not run: ``doctor`` exits 6), ``warn``
(the gate runs, something around it does not: the MCP server) or ``unknown`` (the agent
keeps what decides it where memkeeper cannot look), with the exact fix where there is one.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memkeeper.gate import agents as adapters

if TYPE_CHECKING:
    from typing import Any

Status = Literal["ok", "fail", "warn", "unknown"]

# The agents in the order doctor reports them. What each agent's installation is — its
# label, whether it runs the model's shell commands in a login shell (``$SHELL -lc``, whose
# profile may reset PATH), where it keeps its MCP servers in the project ("": per user, out
# of sight) — is its own setup's (``gate.agents``), as install-hooks reads it.
ORDER = ("claude-code", "codex", "gemini", "copilot", "cline", "cursor")
_SETUPS = {agent: adapters.setup(agent) for agent in ORDER}
LABELS = {agent: setup.label for agent, setup in _SETUPS.items()}
LOGIN_SHELL = frozenset(agent for agent, setup in _SETUPS.items() if setup.login_shell)
MCP_FILES = {agent: setup.mcp_file for agent, setup in _SETUPS.items()}
# What decides whether the agent runs project hooks where doctor cannot look.
UNSEEN = {
    "copilot": "Copilot CLI runs the repository's hooks only in a folder you trusted (it asks "
    "when it starts there); the Copilot coding agent only if its setup steps install memkeeper",
    "cursor": "Cursor runs the project's hooks only in a trusted workspace: open the project "
    "and trust it when Cursor asks",
    "cline": "Cline runs .clinerules/hooks when hooks are enabled (the default); --yolo turns "
    "them off",
}
VENV = ".venv/bin/memkeeper"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing checked for one agent: how it stands, what it means, what to do."""

    agent: str
    check: str
    status: Status
    message: str
    fix: str = ""
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "fix": self.fix,
            "path": self.path,
        }


@dataclass(frozen=True, slots=True)
class CodexHook:
    """One of memkeeper's handlers in ``.codex/hooks.json`` as Codex's ``[hooks.state]``
    knows it: its key, whether a review recorded a ``trusted_hash``, ``enabled``, and
    Codex's own verdict where Codex was asked (``trusted``, ``untrusted``, ``modified``;
    ``unanswered``: asked, no answer; "": not asked — the recorded hash cannot be checked
    without Codex)."""

    key: str
    trusted: bool
    enabled: bool
    status: str = ""


@dataclass(frozen=True, slots=True)
class Served:
    """Claude Code's gate served by ``memkeeper watch`` on this machine (``install-hooks
    claude-code --served``): the URL its ``.memkeeper/gate.json`` names (None: not set up),
    the events ``.claude/settings.local.json`` has memkeeper's http hook for with that URL
    and token, the events whose http hook names another, whether the daemon serves, and
    whether the PreToolUse http hook blocks the call when it fails (``onFailure``)."""

    url: str | None = None
    hooked: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    serving: bool = False
    blocking: bool = False


@dataclass(frozen=True, slots=True)
class Facts:
    """What decides whether the gates run, as collected on this machine."""

    root: str  # the memory root, absolute
    named: tuple[str, ...]  # the agents asked about (empty: every installed gate)
    gates: tuple[tuple[str, str], ...]  # (agent, file) for each installed gate
    found: str | None  # the memkeeper the gate commands run (PATH, else the .venv); None
    venv: bool  # the project's .venv/bin/memkeeper is there
    login: str | None  # what `SHELL -lc 'command -v memkeeper'` finds
    shell: str  # that login shell
    mcp: frozenset[str]  # agents whose project MCP configuration runs memkeeper mcp
    user_gates: frozenset[str]  # agents whose user settings run memkeeper's user-level gate
    claude_hooks_off: bool  # disableAllHooks in ~/.claude/settings.json
    gemini_hooks_off: bool  # hooksConfig.enabled false in ~/.gemini/settings.json
    claude_settings: str  # ~/.claude/settings.json, for the messages
    gemini_settings: str  # ~/.gemini/settings.json
    codex_config: str  # $CODEX_HOME/config.toml
    codex_trust: str | None  # its [projects."ROOT"] trust_level
    codex_hooks: tuple[CodexHook, ...]
    gemini_trust: bool | None  # ~/.gemini/trustedFolders.json's verdict on the root
    gemini_trust_file: str
    gemini_trust_off: str  # why folder trust does not apply ("": it does)
    served: Served = Served()


def judge(facts: Facts) -> list[Finding]:
    """Every finding, agent by agent (the named ones, else those with a gate installed)."""
    installed = dict(facts.gates)
    agents = list(facts.named) or [agent for agent in LABELS if agent in installed]
    found: list[Finding] = []
    for agent in agents:
        rel = installed.get(agent)
        if rel is None:
            found.append(_not_installed(agent))
            continue
        found.append(_reachable(facts, agent, rel))
        found += _AGENT_CHECKS.get(agent, _unseen)(facts, agent)
        found.append(_mcp(facts, agent))
    return found


def failed(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.status == "fail"]


def _not_installed(agent: str) -> Finding:
    return Finding(
        agent,
        "installed",
        "fail",
        f"no {LABELS[agent]} gate is installed in this project",
        f"memkeeper install-hooks {agent}",
    )


def _reachable(facts: Facts, agent: str, rel: str) -> Finding:
    """The gate's command finds memkeeper (on PATH, else the project's .venv) — for an agent
    that runs it in a login shell, where that shell finds it."""
    label = LABELS[agent]
    if facts.found is None:
        return Finding(
            agent,
            "memkeeper",
            "fail",
            f"the {label} gate in {rel} runs memkeeper, which is neither on PATH nor at "
            f'{VENV}: it answers every call with "memkeeper is not installed"',
            f"python3 -m venv .venv && .venv/bin/pip install memkeeper (in {facts.root}), "
            "or install memkeeper on PATH",
            rel,
        )
    if agent not in LOGIN_SHELL or facts.venv or facts.login:
        where = facts.login if agent in LOGIN_SHELL and facts.login else facts.found
        return Finding(agent, "memkeeper", "ok", f"the gate in {rel} runs {where}", path=rel)
    return Finding(
        agent,
        "login-shell",
        "warn",
        f"{label} runs the model's shell commands in a login shell ({facts.shell} -l), whose "
        f"profile sets PATH anew: there `memkeeper` is not found ({facts.found} is on this "
        "shell's PATH only). The gate still runs (hooks keep the PATH Codex started with) and "
        "its refusals name memkeeper by that path",
        f"ln -s {shlex.quote(facts.found)} /usr/local/bin/memkeeper (or install memkeeper "
        f"in {VENV})",
        rel,
    )


def _claude(facts: Facts, agent: str) -> list[Finding]:
    where = facts.claude_settings
    if facts.claude_hooks_off:
        off = Finding(
            agent,
            "hooks-off",
            "fail",
            f"{where} sets disableAllHooks: Claude Code runs no hook at all",
            f'remove "disableAllHooks": true from {where}',
            where,
        )
        return [off]
    return [_subdirectory(facts, agent, where), *_served(facts.served, agent)]


ON_FAILURE = (
    ": Claude Code 2.1.332+ would block a call the daemon cannot answer, and lets it through"
)


def _served(served: Served, agent: str) -> list[Finding]:
    """The served gate: set up whole (the http hook on every event the command hook steps
    aside on) and served, or not set up at all."""
    local, again = ".claude/settings.local.json", f"memkeeper install-hooks {agent} --served"
    missing = ", ".join(e for e in _SETUPS[agent].served if e not in served.hooked)
    status: Status
    if served.url is None:
        if not (served.hooked or served.stale):
            return []
        why = f"{local} has the served gate's http hooks, but no .memkeeper/gate.json"
        status, said, fix = "warn", f"{why}: they fail on every call", again
    elif missing and served.serving:  # the command hook steps aside: nothing judges them
        status, said, fix = "fail", f"{local} lacks the served gate's hook for {missing}", again
        said += ", which memkeeper watch serves: nothing judges those calls"
    elif missing:
        status, fix = "warn", again
        said = f"{local} lacks the served gate's hook for {missing} (the command hook answers)"
    elif not served.blocking:  # from before onFailure: a hung daemon lets calls through
        status, fix = "warn", again
        said = f'{local}\'s PreToolUse http hook lacks "onFailure": "block"{ON_FAILURE}'
    elif not served.serving:
        status, fix = "warn", "memkeeper watch"
        said = f"memkeeper watch is not serving the gate at {served.url}: the command hook answers"
        said += " (Claude Code 2.1.332+ blocks the calls the gate covers until it does)"
    else:
        status, said, fix = "ok", f"memkeeper watch serves the gate at {served.url}", ""
    return [Finding(agent, "served", status, said, fix, local if status != "ok" else None)]


def _subdirectory(facts: Facts, agent: str, where: str) -> Finding:
    """Claude Code and Gemini CLI read project settings from the directory a session starts
    in only: elsewhere only a user-level gate runs."""
    label = LABELS[agent]
    if agent in facts.user_gates:
        ok = (
            f"started in a subdirectory or above the repository, {label} reads no project "
            f"hook; memkeeper's user-level gate in {where} runs there instead"
        )
        return Finding(agent, "subdirectory", "ok", ok, path=where)
    return Finding(
        agent,
        "subdirectory",
        "fail",
        f"{label} started in a subdirectory of the repository or above it reads that "
        "directory's settings only: no project hook runs, and writes go ungated",
        f"memkeeper doctor --fix {agent} (adds to {where} a gate that runs where the "
        "project's does not, and leaves the project's to run where it does)",
        where,
    )


def _codex(facts: Facts, agent: str) -> list[Finding]:
    return [_codex_project(facts, agent), *_codex_hooks(facts, agent)]


def _codex_project(facts: Facts, agent: str) -> Finding:
    where = facts.codex_config
    table = f'[projects."{facts.root}"]\ntrust_level = "trusted"'
    if facts.codex_trust == "trusted":
        return Finding(agent, "project-trust", "ok", f"{where} trusts this project", path=where)
    state = "marks this project untrusted" if facts.codex_trust else "does not trust this project"
    return Finding(
        agent,
        "project-trust",
        "fail",
        f"{where} {state}: Codex does not load the project's .codex/ (hooks and MCP server), "
        "and says nothing about it",
        f"start codex in {facts.root} and trust the project when it asks, or add to {where}:"
        f"\n{table}\n(`codex exec` never asks: the same table, or `codex exec --trust`)",
        where,
    )


def _codex_hooks(facts: Facts, agent: str) -> list[Finding]:
    """Each of memkeeper's Codex hooks: the gate (``pre_tool_use``) fails where Codex would
    skip it; the others (indexing after a tool, the channel) warn."""
    found = []
    review = (
        f"start codex in {facts.root}, run /hooks and trust memkeeper's hooks (a headless "
        "`codex exec` cannot review them: run it with --dangerously-bypass-hook-trust, or "
        "review once interactively)"
    )
    for hook in facts.codex_hooks:
        trusted = hook.status == "trusted" if hook.status in _VERDICTS else hook.trusted
        if not hook.enabled:
            message = f"{hook.key} is disabled in {facts.codex_config}"
        elif hook.status == "modified":
            message = (
                f"{hook.key} changed since it was reviewed: Codex skips it, silently, until "
                "it is trusted again"
            )
        elif not trusted:
            message = (
                f"{hook.key} has not been reviewed: Codex skips hooks nobody trusted, silently"
            )
        else:
            message = f"{hook.key} is trusted ({_CHECKED.get(hook.status, 'Codex says')})"
            found.append(Finding(agent, "hook-trust", "ok", message, path=facts.codex_config))
            continue
        gate = ":pre_tool_use:" in hook.key
        if not gate:
            message += " (not the gate itself: what this hook does for memkeeper does not happen)"
        status: Status = "fail" if gate else "warn"
        found.append(Finding(agent, "hook-trust", status, message, review, facts.codex_config))
    return found


_VERDICTS = frozenset({"trusted", "untrusted", "modified"})  # what Codex answers
_CHECKED = {  # a review is recorded, but Codex did not say whether it still holds
    "": "a review is recorded; a command changed since is not trusted, and only Codex can "
    "tell: install Codex on PATH for doctor to ask it",
    "unanswered": "a review is recorded; Codex did not answer within 20 s, so whether the "
    "command changed since is unchecked: run doctor again",
}


def _gemini(facts: Facts, agent: str) -> list[Finding]:
    where = facts.gemini_settings
    if facts.gemini_hooks_off:
        told = f"{where} sets hooksConfig.enabled to false: Gemini CLI runs no hook at all"
        fix = f'remove "enabled": false from "hooksConfig" in {where}'
        return [Finding(agent, "hooks-off", "fail", told, fix, where)]
    return [_gemini_trust(facts, agent), _subdirectory(facts, agent, where)]


def _gemini_trust(facts: Facts, agent: str) -> Finding:
    where = facts.gemini_trust_file
    skip = (
        "; --skip-trust would run it there with project hooks off, without a word "
        "(in a trusted folder it changes nothing)"
    )
    if facts.gemini_trust_off:
        return Finding(agent, "folder-trust", "ok", facts.gemini_trust_off, path=where)
    if facts.gemini_trust:
        return Finding(agent, "folder-trust", "ok", f"{where} trusts this folder", path=where)
    state = (
        "marks this folder DO_NOT_TRUST"
        if facts.gemini_trust is False
        else "does not trust this folder"
    )
    return Finding(
        agent,
        "folder-trust",
        "fail",
        f"{where} {state}: Gemini CLI ignores .gemini/settings.json, the gate with it (a "
        f"headless run stops){skip}",
        f'add "{facts.root}": "TRUST_FOLDER" to {where} (or trust the folder when Gemini CLI '
        "asks); for a headless run, GEMINI_CLI_TRUST_WORKSPACE=true",
        where,
    )


def _unseen(facts: Facts, agent: str) -> list[Finding]:
    return [Finding(agent, "trust", "unknown", UNSEEN[agent])]


def _mcp(facts: Facts, agent: str) -> Finding:
    rel = MCP_FILES[agent]
    if not rel:
        told = "Cline keeps MCP servers per user: see install-hooks cline --mcp for what to add"
        return Finding(agent, "mcp", "unknown", told)
    if agent in facts.mcp:
        return Finding(agent, "mcp", "ok", f"{rel} registers memkeeper's MCP server", path=rel)
    return Finding(
        agent,
        "mcp",
        "warn",
        f"no memkeeper MCP server in {rel} (the gate runs without it; refusals then name only "
        "the CLI)",
        f"memkeeper install-hooks {agent} --mcp",
        rel,
    )


_AGENT_CHECKS = {"claude-code": _claude, "codex": _codex, "gemini": _gemini}


def gemini_trusted(rules: dict[str, str], folder: str) -> bool | None:
    """Gemini CLI's verdict on ``folder`` from trustedFolders.json's rules (paths resolved):
    the longest rule whose folder holds it (``TRUST_PARENT``: the rule's parent) decides;
    None when none does."""
    best, verdict = -1, None
    for path, level in rules.items():
        scope = posixpath.dirname(path) if level == "TRUST_PARENT" else path
        inside = folder == scope or folder.startswith(scope.rstrip("/") + "/")
        if inside and len(path) > best and level in _LEVELS:
            best, verdict = len(path), _LEVELS[level]
    return verdict


_LEVELS = {"TRUST_FOLDER": True, "TRUST_PARENT": True, "DO_NOT_TRUST": False}

"""What ``install-hooks`` writes for each agent, as text in and text out (docs/reference.md
§4.20); ``gate/install.py`` does the I/O.

Every file is committed and shared by every clone, so no command names a path of this
machine. Each gate command is ``sh -c 'SCRIPT' memkeeper 'ANSWER'``: the script runs
``memkeeper hook AGENT`` with the ``memkeeper`` on PATH, else the project's
``.venv/bin/memkeeper``; where neither exists it reads the input and prints ``ANSWER`` — the
agent's own *ask* (Claude Code, Copilot) or *deny* (Codex, Gemini CLI, Cursor: they have no
ask that holds for a tool call; Cline's cancel), saying that memkeeper is missing — so the
gate never vanishes silently (a command that is not found is a failed hook, and most agents
let the call through then). The script holds no single quote and no backslash, so it reads
the same to every shell an agent may run it with (Codex uses the user's ``$SHELL``, which
may be fish), and no ``$NAME`` an agent expands itself (Gemini substitutes
``$GEMINI_PROJECT_DIR`` and ``$CLAUDE_PROJECT_DIR`` in commands, and any set ``$NAME`` in its
settings).

MCP servers are ``gate/mcpconf.py``'s, Cline's executable hooks ``gate/clinehooks.py``'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import HOOK_FILES, LABELS, gate_pattern
from memkeeper.gate import jsonedit

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.jsonedit import Child, Node

    Path = list[tuple[Node, Child]]  # containers from the file's top down to one entry

WHERE = "not on PATH, nor in the project .venv"  # where the commands look for memkeeper
MISSING = (
    f"memkeeper is not installed on this machine ({WHERE}), so the memory gate cannot "
    "check this call. Install memkeeper, then restart {agent}; until then approve only calls "
    "that leave CLAUDE.md, AGENTS.md and memory files alone."
)
REFUSED = (
    f"memkeeper is not installed on this machine ({WHERE}), so the memory gate cannot "
    "check this call and {refuses}. Ask the user to install memkeeper, then {again} (the "
    "gate is set up in {file})."
)
_SHORT = "memkeeper is not installed on this machine: the memory gate refused this call."
TOP = "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"  # the project, in sh
_PROJECT = {"claude-code": "${CLAUDE_PROJECT_DIR:-" + TOP + "}"}
_FIND = 'm=$(command -v memkeeper) || m="{project}/.venv/bin/memkeeper"; '
_PRE = 'grep -c -E "hook_event_name.[ ]*:[ ]*.({events})" >/dev/null'


def missing(agent: str) -> str:
    """What the agent's answer says where memkeeper is missing."""
    label, file = LABELS[agent], HOOK_FILES[agent][0]
    if agent in ("claude-code", "copilot"):
        return MISSING.format(agent=label)
    if agent == "cline":
        return REFUSED.format(refuses="stops the task", again="resume the task", file=file)
    return REFUSED.format(refuses="refuses it", again=f"restart {label}", file=file)


def fallback(agent: str) -> str:
    """The agent's ask or deny JSON for a pre-tool call while memkeeper is missing."""
    why = missing(agent)
    answers: dict[str, Any] = {
        "claude-code": {"hookSpecificOutput": _claude_style("ask", why)},
        "codex": {"hookSpecificOutput": _claude_style("deny", why)},
        "gemini": {"decision": "deny", "reason": why},
        "copilot": {"permissionDecision": "ask", "permissionDecisionReason": why},
        "cursor": {"permission": "deny", "user_message": _SHORT, "agent_message": why},
        "cline": {"cancel": True, "errorMessage": why},
    }
    return json.dumps(answers[agent])


def _claude_style(verdict: str, why: str) -> dict[str, str]:
    return {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict,
        "permissionDecisionReason": why,
    }


def gate_command(agent: str, event: str | None = None) -> str:
    """The portable ``sh -c`` line that runs ``memkeeper hook AGENT`` (``event``: Copilot's,
    which its payload does not name)."""
    args = f" --event {event}" if event else ""
    find = _FIND.format(project=_PROJECT.get(agent, TOP))
    run = f'[ -x "$m" ] && exec "$m" hook {agent}{args}; '
    if agent == "copilot":
        tail = 'cat >/dev/null; echo "$1"; exit 0' if event == "preToolUse" else "cat >/dev/null"
    elif agent == "cursor":
        tail = f'if {_PRE.format(events="preToolUse|beforeShellExecution")}; then echo "$1"; '
        tail += 'else echo "{}"; fi; exit 0'
    else:
        pre = "BeforeTool" if agent == "gemini" else "PreToolUse"
        tail = f'{_PRE.format(events=pre)} && echo "$1"; exit 0'
    return f"sh -c '{find + run + tail}' memkeeper '{fallback(agent)}'"


# -- JSON hooks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JsonHooks:
    """One agent's JSON hook file: the entries memkeeper adds, one per event, and the
    members a file it creates starts with."""

    agent: str
    rel: str
    events: tuple[tuple[str, dict[str, Any]], ...]
    skeleton: dict[str, Any]

    def command(self, event: str) -> str:
        entry = dict(self.events)[event]
        handler = entry["hooks"][0] if "hooks" in entry else entry
        found: str = handler.get("command") or handler["bash"]
        return found


def _nested(matcher: str, command: str, **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


def _copilot(event: str) -> dict[str, Any]:
    command = gate_command("copilot", event)
    return {"type": "command", "matcher": "create|edit|apply_patch|bash", "bash": command,
            "timeoutSec": 30}  # fmt: skip


def json_hooks(agent: str) -> JsonHooks:
    """What memkeeper adds to ``agent``'s hook file (agent-hooks/<agent>.md section 1)."""
    rel = HOOK_FILES[agent][0]
    command = gate_command(agent)
    if agent == "claude-code":
        matcher = "Edit|MultiEdit|Write|Bash|PowerShell"
        events = tuple((e, _nested(matcher, command)) for e in ("PreToolUse", "PostToolUse"))
        return JsonHooks(agent, rel, events, {})
    if agent == "codex":
        matcher = "^(Bash|apply_patch)$"
        pairs = tuple(
            (e, _nested(matcher, command, timeout=30)) for e in ("PreToolUse", "PostToolUse")
        )
        return JsonHooks(agent, rel, pairs, {})
    if agent == "gemini":
        matcher = "^(write_file|replace|run_shell_command)$"
        pairs = tuple(
            (e, _nested(matcher, command, name=f"memkeeper-{e}", timeout=30000))
            for e in ("BeforeTool", "AfterTool")
        )
        return JsonHooks(agent, rel, pairs, {})
    if agent == "copilot":  # the event on argv: camelCase payloads do not name it
        pairs = tuple((e, _copilot(e)) for e in ("preToolUse", "postToolUse"))
        return JsonHooks(agent, rel, pairs, {"version": 1})
    if agent == "cursor":
        tools = {"matcher": "Write|Delete|Shell"}
        pairs = (
            ("preToolUse", {"command": command, **tools, "timeout": 30}),
            ("beforeShellExecution", {"command": command, "timeout": 30}),
            ("postToolUse", {"command": command, **tools, "timeout": 30}),
            ("afterFileEdit", {"command": command, "timeout": 30}),
        )
        return JsonHooks(agent, rel, pairs, {"version": 1})
    raise ValueError(agent)


def start(text: str | None, skeleton: dict[str, Any]) -> str:
    """The text to edit: the file's, or for a missing or blank file the one memkeeper
    creates (also what is left of it once everything memkeeper added is taken out)."""
    if text is not None and text.strip():
        return text
    return json.dumps(skeleton, indent=2) + "\n"


def add_hooks(text: str | None, spec: JsonHooks) -> str:
    """``text`` with the agent's entries added, or their commands updated where they are."""
    text = start(text, spec.skeleton)
    for event, entry in spec.events:
        text = _add_hook(text, spec, event, entry)
    return text


def _add_hook(text: str, spec: JsonHooks, event: str, entry: dict[str, Any]) -> str:
    top = top_object(text, spec.rel)
    hooks = top.member("hooks")
    if hooks is None:
        return jsonedit.insert(text, top, {event: [entry]}, "hooks")
    if not isinstance(hooks.node.value, dict):
        raise Invalid(f'{spec.rel}: "hooks" is not an object — fix it, then try again')
    groups = hooks.node.member(event)
    if groups is None:
        return jsonedit.insert(text, hooks.node, [entry], event)
    if not isinstance(groups.node.value, list):
        raise Invalid(f'{spec.rel}: "hooks".{event} is not a list — fix it, then try again')
    found = _our_handler(groups.node, spec.agent)
    if found is None:
        return jsonedit.insert(text, groups.node, entry)
    command, wanted = found[1], spec.command(event)
    return text if command.node.value == wanted else jsonedit.replace(text, command.node, wanted)


def remove_hooks(text: str, spec: JsonHooks) -> str:
    """``text`` without the agent's entries (in any event), and without the lists and
    objects that held nothing else."""
    while True:
        path = _hook_path(top_object(text, spec.rel), spec.agent)
        if path is None:
            return text
        text = remove_path(text, path)


def top_object(text: str, where: str) -> Node:
    top = jsonedit.parse(text, where)
    if not isinstance(top.value, dict):
        raise Invalid(f"{where}: not a JSON object — fix it, then try again", path=where)
    return top


def _hook_path(top: Node, agent: str) -> Path | None:
    hooks = top.member("hooks")
    if hooks is None or not isinstance(hooks.node.value, dict):
        return None
    for event in hooks.node.children:
        if isinstance(event.node.value, list):
            found = _our_handler(event.node, agent)
            if found is not None:
                return [(top, hooks), (hooks.node, event), *found[0]]
    return None


def _our_handler(groups: Node, agent: str) -> tuple[Path, Child] | None:
    """The path to memkeeper's handler in an event's list (the group, then the handler in
    it when groups nest handlers) and its command member."""
    pattern = gate_pattern(agent)
    for group in groups.children:
        if not isinstance(group.node.value, dict):
            continue
        inner = group.node.member("hooks")
        nested = inner is not None and isinstance(inner.node.value, list)
        handlers = inner.node.children if inner is not None and nested else (group,)
        for handler in handlers:
            for key in ("command", "bash"):
                field = handler.node.member(key) if handler.node.keys else None
                if field is not None and pattern.search(str(field.node.value)):
                    path: Path = [(groups, group)]
                    if inner is not None and nested:
                        path.append((inner.node, handler))
                    return path, field
    return None


def remove_path(text: str, path: Path) -> str:
    """Remove the path's last child, or the outermost container that holds nothing else
    (never the file's top object itself)."""
    level = len(path) - 1
    while level > 0 and len(path[level][0].children) == 1:
        level -= 1
    container, child = path[level]
    return jsonedit.remove(text, container, child)


# -- what is left for the user to do -------------------------------------------------------------

TODO = {
    "claude-code": (
        "Claude Code reads .claude/settings.json when a session starts: restart running "
        "sessions (/hooks lists the gate).",
    ),
    "codex": (
        "In Codex, run /hooks once to review and trust the project's hooks: Codex runs no "
        "project hook before that (and reads .codex/ only in a trusted project).",
    ),
    "gemini": (
        "Trust this folder in Gemini CLI: it runs project hooks only in a trusted folder "
        "(and warns once about hooks it has not seen).",
    ),
    "copilot": (
        "Copilot CLI loads .github/hooks/ only once this folder is trusted; the Copilot "
        "coding agent runs them only if its setup steps install memkeeper "
        "(.github/workflows/copilot-setup-steps.yml).",
    ),
    "cline": (
        "Nothing in Cline: it runs .clinerules/hooks/ while hooks are enabled (the default, "
        "not with --yolo). On Windows it runs PreToolUse.ps1 instead, which memkeeper does "
        "not write.",
    ),
    "cursor": (
        "Cursor loads .cursor/hooks.json only in a trusted workspace (it also runs the hooks "
        "of .claude/settings.json, with its own payloads: memkeeper tells them apart).",
    ),
}

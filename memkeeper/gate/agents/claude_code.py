"""Claude Code (docs/reference.md §7): ``PreToolUse`` / ``PostToolUse`` with
``hook_event_name``, ``session_id``, ``cwd``, ``tool_name`` and ``tool_input`` — and, after a
call that failed (a command's non-zero exit), ``PostToolUseFailure`` instead of
``PostToolUse``. The core speaks its vocabulary, so its calls pass through ``gate.payload`` as
they are;
``PowerShell`` is judged as a shell command (its redirections are spelled as a POSIX
shell's), ``NotebookEdit`` not at all (a notebook is no memory file). A deny or a reason is
``hookSpecificOutput`` JSON with exit 0; a silent allow prints nothing.

Installed in ``.claude/settings.json`` (the tool events, matching the tools the core judges;
``$CLAUDE_PROJECT_DIR`` names the project), the MCP server in ``.mcp.json``.
"""

from __future__ import annotations

from memkeeper.gate.agents.base import (
    CONTEXT_EVENTS,
    Adapter,
    Answer,
    HookInput,
    Setup,
    context_input,
    dumps,
    nested_entry,
    tell,
)
from memkeeper.gate.payload import TOOL_EVENTS, parse_payload

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Phase
    from memkeeper.gate.facts import Decision

NAME = "claude-code"
# Keys only other agents put in a payload that also has Claude Code's hook_event_name.
_FOREIGN = (
    "cursor_version",
    "workspace_roots",
    "turn_id",
    "toolName",
    "hookName",
    "conversation_id",  # Cursor
    "generation_id",  # Cursor
    "timestamp",  # Copilot's PascalCase payloads (Claude Code sends none)
)
MATCHER = "Edit|MultiEdit|Write|Bash|PowerShell"
FAILED = "PostToolUseFailure"  # after a call that failed: no PostToolUse comes then
_TOOL_PHASES: dict[str, Phase] = {"PreToolUse": "pre", "PostToolUse": "post", FAILED: "failed"}


def sniff(payload: dict[str, Any]) -> bool:
    event = payload.get("hook_event_name")
    return (event in TOOL_EVENTS or event == FAILED or event in CONTEXT_EVENTS) and not any(
        key in payload for key in _FOREIGN
    )


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    named = payload.get("hook_event_name")
    if isinstance(named, str) and named in CONTEXT_EVENTS:
        return context_input(payload, CONTEXT_EVENTS[named], cwd)
    if named == FAILED:  # read as the PostToolUse it stands for: the tool may have written
        call = parse_payload({**payload, "hook_event_name": "PostToolUse"}, cwd)
        call = call._replace(event=FAILED)
    else:
        call = parse_payload(payload, cwd)
    if call.tool == "PowerShell":
        call = call._replace(tool="Bash")
    phase = _TOOL_PHASES.get(call.event, "other")
    return HookInput(phase, (call,) if call.tool else (), call.session_id)


def hook_output(decision: Decision) -> dict[str, Any] | None:
    """Claude Code's PreToolUse JSON; None (print nothing) for a silent allow. A notice (an
    allow with a reason: another agent's advisory claim) only adds context for the model: a
    ``permissionDecision: "allow"`` would skip Claude Code's own permission prompt, and a
    notice never changes the agent's permission flow."""
    if decision.verdict == "allow":
        if not decision.reason:
            return None
        context = decision.context or decision.reason
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": context}}
    out = _pre_tool(decision.verdict, decision.reason)
    if decision.context:
        out["additionalContext"] = decision.context
    return {"hookSpecificOutput": out}


def _pre_tool(verdict: str, reason: str) -> dict[str, str]:
    return {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    }


def render(decision: Decision) -> Answer:
    """``hookSpecificOutput`` JSON; nothing for a silent allow."""
    out = hook_output(decision)
    return Answer() if out is None else Answer(dumps(out))


def allow(phase: Phase) -> Answer:
    return Answer()


def matcher(event: str) -> str:
    """The tools an event's hook is called for, the command's and the served one's alike;
    after a Read too: what the session read, for the channel's "changed since you read it"."""
    return MATCHER + "|Read" if event == "PostToolUse" else MATCHER


def _entry(event: str, command: str) -> dict[str, Any]:
    if event in CONTEXT_EVENTS:  # every session start (startup, resume, clear), every prompt
        return {"hooks": [{"type": "command", "command": command}]}
    return nested_entry(matcher(event), command)


def _missing(why: str) -> dict[str, Any]:
    """The ask while memkeeper is missing: the user decides each call."""
    return {"hookSpecificOutput": _pre_tool("ask", why)}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Claude Code",
    (".claude/settings.json",),
    ("PreToolUse", "PostToolUse", FAILED, "SessionStart", "UserPromptSubmit"),
    ("PreToolUse",),
    _entry,
    _missing,
    (
        "Claude Code reads .claude/settings.json when a session starts: restart running "
        "sessions (/hooks lists the gate).",
    ),
    project_env="CLAUDE_PROJECT_DIR",
    mcp_file=".mcp.json",
    # Claude Code's http hooks: every event but SessionStart, which they do not serve
    served=("PreToolUse", "PostToolUse", FAILED, "UserPromptSubmit"),
    mcp_todo="Claude Code asks each user to approve the project's MCP servers in "
    ".mcp.json the first time (claude mcp list shows memkeeper).",
)

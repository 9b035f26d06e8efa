"""Gemini CLI (docs/reference.md §7 "Gemini CLI"):
``BeforeTool`` / ``AfterTool`` with ``hook_event_name``, ``session_id``, ``cwd``,
``tool_name`` and ``tool_input`` (the tool's own arguments).

The tools judged: ``write_file {file_path, content}`` (it overwrites) is a ``Write``;
``replace {file_path, old_string, new_string, allow_multiple?}`` an ``Edit`` (an empty
``old_string`` creates a missing file, as an ``Edit``'s does; the older
``expected_replacements`` above 1 counts as ``allow_multiple``); ``run_shell_command
{command, dir_path?}`` a ``Bash`` command run in ``dir_path`` (relative to ``cwd``; the older
``directory`` too), judged as ``cd DIR`` and the command, so that the reasons name paths as
the session does. A relative ``file_path`` is taken from ``cwd``. Other tools (reads, MCP
tools ``mcp_SERVER_TOOL``) are not judged.

A deny is ``{"decision": "deny", "reason": …}`` with exit 0: the model gets the reason as
the tool's error and the turn goes on. Every allow is ``{}`` — explicit JSON, since Gemini
reads stderr as the hook's output when stdout is empty. ``ask`` does not block in a
BeforeTool hook, so it is a deny saying that a human has to make the change; an advisory
``WAIT`` is a ``systemMessage`` (shown to the user: a BeforeTool hook has no channel to the
model that lets the call through).

``SessionStart``, ``BeforeAgent`` (a prompt) and ``AfterTool`` carry memkeeper's channel
(``gate.channel``) as ``hookSpecificOutput.additionalContext``. Installed in
``.gemini/settings.json`` (the tool events for the three tools judged, the two others for
every start and prompt), which also takes the MCP server. Pure.
"""

from __future__ import annotations

import os
import shlex

from memkeeper.gate.agents.base import (
    Adapter,
    Answer,
    HookInput,
    Setup,
    context_input,
    dumps,
    nested_entry,
)
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Phase
    from memkeeper.gate.facts import Decision

NAME = "gemini"
EVENTS = {"BeforeTool": "PreToolUse", "AfterTool": "PostToolUse"}  # → the core's names
# The events the channel speaks on without a tool call (packages/core/src/hooks/types.ts:
# SessionStartOutput, BeforeAgentOutput), and each phase's event for the answer.
CONTEXT_EVENTS: dict[str, Phase] = {"SessionStart": "start", "BeforeAgent": "prompt"}
PHASE_EVENTS = {"start": "SessionStart", "prompt": "BeforeAgent", "post": "AfterTool"}
ASK = (
    "A human has to approve this change, and a Gemini CLI hook cannot ask one, so memkeeper "
    "denied it: ask the user to make it. "
)
ALLOW = Answer(dumps({}))


def sniff(payload: dict[str, Any]) -> bool:
    event = payload.get("hook_event_name")
    return event in EVENTS or (event in CONTEXT_EVENTS and "timestamp" in payload)


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    name = payload.get("hook_event_name") or event
    if isinstance(name, str) and name in CONTEXT_EVENTS:
        return context_input(payload, CONTEXT_EVENTS[name], cwd)
    if name not in EVENTS:
        return HookInput("other")
    phase: Phase = "pre" if name == "BeforeTool" else "post"
    base = ToolCall(
        EVENTS[str(name)],
        _text(payload, "tool_name", "payload"),
        _text(payload, "cwd", "payload") or cwd,
        _text(payload, "session_id", "payload"),
    )
    call = _call(base, payload.get("tool_input"))
    return HookInput(phase, () if call is None else (call,), base.session_id)


def _call(base: ToolCall, tool_input: object) -> ToolCall | None:
    if base.tool not in ("write_file", "replace", "run_shell_command"):
        return None
    if not isinstance(tool_input, dict):
        raise BadPayload(f"{base.tool}: tool_input is not an object")
    if base.tool == "run_shell_command":
        command = _text(tool_input, "command", "tool_input", required=True)
        where = _text(tool_input, "dir_path", "tool_input") or _text(
            tool_input, "directory", "tool_input"
        )
        if where:  # judged as run from the session's directory, so reasons name paths as it does
            command = f"cd {shlex.quote(where)}\n{command}"
        return base._replace(tool="Bash", command=command)
    path = _text(tool_input, "file_path", "tool_input", required=True)
    if not path:
        raise BadPayload(f"{base.tool}: tool_input.file_path is empty")
    base = base._replace(file_path=os.path.normpath(os.path.join(base.cwd, path)))
    if base.tool == "write_file":
        content = _text(tool_input, "content", "tool_input", required=True)
        return base._replace(tool="Write", content=content)
    old = _text(tool_input, "old_string", "tool_input", required=True)
    new = _text(tool_input, "new_string", "tool_input", required=True)
    return base._replace(tool="Edit", edits=((old, new, _every(tool_input)),))


def _every(tool_input: dict[str, Any]) -> bool:
    """Whether ``replace`` changes every occurrence."""
    every = tool_input.get("allow_multiple")
    if isinstance(every, bool):
        return every
    count = tool_input.get("expected_replacements")  # before allow_multiple
    return isinstance(count, int) and not isinstance(count, bool) and count > 1


def render(decision: Decision) -> Answer:
    reason = decision.reason.strip()
    if decision.verdict == "allow":
        return Answer(dumps({"systemMessage": reason})) if reason else ALLOW
    if decision.verdict == "ask":
        reason = ASK + reason
    return Answer(dumps({"decision": "deny", "reason": reason or "memkeeper denied this call."}))


def allow(phase: Phase) -> Answer:
    """``{}``: no decision, so Gemini goes ahead (and does not read stderr as the answer)."""
    return ALLOW


def tell(phase: Phase, text: str) -> Answer:
    """``hookSpecificOutput.additionalContext`` on SessionStart, BeforeAgent and AfterTool:
    Gemini adds it to the model's context (with ``<`` and ``>`` escaped); no decision."""
    event = PHASE_EVENTS.get(phase, "AfterTool")
    return Answer(
        dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    )


def _text(obj: dict[str, Any], key: str, where: str, required: bool = False) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise BadPayload(f"{where}.{key} is {'not a string' if key in obj else 'missing'}")
    return value


def _entry(event: str, command: str) -> dict[str, Any]:
    if event in CONTEXT_EVENTS:  # every session start and prompt: the channel
        hook = {"name": f"memkeeper-{event}", "type": "command", "command": command}
        return {"hooks": [{**hook, "timeout": 30000}]}
    tools = "^(write_file|replace|run_shell_command)$"
    return nested_entry(tools, command, name=f"memkeeper-{event}", timeout=30000)


def _missing(why: str) -> dict[str, Any]:
    """The deny while memkeeper is missing (an ask does not block here)."""
    return {"decision": "deny", "reason": why}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Gemini CLI",
    (".gemini/settings.json",),
    ("BeforeTool", "AfterTool", "SessionStart", "BeforeAgent"),
    ("BeforeTool",),
    _entry,
    _missing,
    (
        "Trust this folder in Gemini CLI: it runs project hooks only in a trusted folder "
        "(and warns once about hooks it has not seen).",
    ),
    refuses="refuses it",
    mcp_file=".gemini/settings.json",
    mcp_todo="Gemini CLI starts the memkeeper server of .gemini/settings.json in this "
    "trusted folder (/mcp lists it).",
)

"""Cursor: the IDE's agent, ``cursor-agent`` and cloud agents (docs/reference.md §7 "Cursor",
after cursor.com/docs/hooks).

``.cursor/hooks.json`` runs the hook with ``hook_event_name`` in the payload, beside the
common ``conversation_id``, ``generation_id``, ``cursor_version``, ``workspace_roots`` (and, as
captured, ``session_id`` and ``cwd``). Gated: ``preToolUse`` (``tool_name``, ``tool_input``)
and ``beforeShellExecution`` (``command``, ``cwd``). Indexed: ``afterFileEdit`` (``file_path``,
``edits``), ``postToolUse`` and ``afterShellExecution``. Cursor runs the hooks of
``.claude/settings.json`` too, with these payloads, so PascalCase event names and Claude's
tool names are read as well.

Tools: ``Write`` — its argument names are not documented and sources disagree, so the path
is ``file_path``, ``path`` or ``target_file`` and the text ``content``, ``contents`` or
``text``; with ``old_string``/``new_string`` it is an edit (Claude's ``Edit`` maps to
``Write``), with ``edits`` several; ``Delete`` → ``rm -- PATH``; ``Shell {command,
cwd|working_directory}`` → Bash. ``tool_name`` is sometimes missing: the tool is told from
the input's shape. A missing or empty ``cwd`` falls back to ``workspace_roots[0]``.

Answers, always JSON (plain text on stdout has been seen to block writes), exit 0:
``{"permission": "deny"|"ask", "user_message": …, "agent_message": …}``, an advisory notice
as ``{"permission": "allow", "agent_message": …}``, else ``{"permission": "allow"}``; ``{}``
after a tool, or the channel's words (§4.28) as postToolUse's ``additional_context``.
Cursor does not enforce ``ask`` on ``preToolUse`` (only on shell and MCP events).

Installed in ``.cursor/hooks.json`` (the four events above: the tool ones for ``Write``,
``Delete`` and ``Shell``), the MCP server in ``.cursor/mcp.json``. Pure.
"""

from __future__ import annotations

import json
import shlex

from memkeeper.gate.agents.base import (
    Adapter,
    Answer,
    HookInput,
    Setup,
    absolute,
    dumps,
    edit_step,
    first_string,
    text_field,
)
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Phase
    from memkeeper.gate.facts import Decision

NAME = "cursor"
_KEYS = ("cursor_version", "workspace_roots", "conversation_id", "generation_id")
_EVENTS: dict[str, tuple[Phase, str]] = {  # the phase, and what the payload holds
    "preToolUse": ("pre", "tool"),
    "PreToolUse": ("pre", "tool"),
    "beforeShellExecution": ("pre", "shell"),
    "postToolUse": ("post", "tool"),
    "PostToolUse": ("post", "tool"),
    "afterFileEdit": ("indexed", "edit"),  # (no answer reaches the model: the channel waits)
    "afterShellExecution": ("indexed", "shell"),
    "sessionStart": ("start", ""),
}
_CURSOR_EVENTS = (  # Cursor's own spelling of its events (cursor.com/docs/hooks)
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
    "beforeTabFileRead",
    "afterTabFileEdit",
    "workspaceOpen",
)
_PATHS = ("file_path", "path", "target_file")
_TEXTS = ("content", "contents", "text")
_SHELLS = ("Shell", "Bash", "PowerShell")
_FILE_TOOLS = ("Write", "Edit", "MultiEdit", "StrReplace", "")  # "": no tool_name sent


def sniff(payload: dict[str, Any]) -> bool:
    """Cursor's common keys, or one of its camelCase event names."""
    return any(key in payload for key in _KEYS) or payload.get("hook_event_name") in _CURSOR_EVENTS


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    name = text_field(payload, "hook_event_name") or event or _guess(payload)
    session = text_field(payload, "session_id") or text_field(payload, "conversation_id")
    phase, holds = _EVENTS.get(name, ("other", ""))
    if phase in ("other", "start"):
        return HookInput(phase, (), session, _cwd(payload, cwd))
    base = ToolCall(
        "PreToolUse" if phase == "pre" else "PostToolUse",
        "",
        _cwd(payload, cwd),
        session,
        text_field(payload, "tool_use_id"),
    )
    if holds == "shell":
        return HookInput(phase, (_shell(base, payload),), session)
    if holds == "edit":
        return HookInput(phase, (_after_edit(base, payload),), session)
    return HookInput(phase, _tool_calls(payload, base), session)


def _guess(payload: dict[str, Any]) -> str:
    """The event of a payload that does not name it."""
    if "edits" in payload and "file_path" in payload:
        return "afterFileEdit"
    if "tool_output" in payload:
        return "postToolUse"
    if "tool_input" in payload or "tool_name" in payload:
        return "preToolUse"
    return "beforeShellExecution" if "command" in payload else ""


def _cwd(payload: dict[str, Any], default: str) -> str:
    roots = payload.get("workspace_roots")
    first = roots[0] if isinstance(roots, list) and roots else None
    return text_field(payload, "cwd") or (first if isinstance(first, str) and first else default)


def _tool_calls(payload: dict[str, Any], base: ToolCall) -> tuple[ToolCall, ...]:
    tool = text_field(payload, "tool_name")
    if tool not in _SHELLS and tool not in _FILE_TOOLS and tool != "Delete":
        return ()  # Read, Grep, Task, MCP:…: nothing the gate judges
    args = _object(payload.get("tool_input"), tool or "tool_input")
    if tool in _SHELLS or (not tool and "command" in args):
        return (_shell(base, args),)
    path = first_string(args, _PATHS, tool or "tool_input")
    if path is None:
        if not tool:
            return ()  # no name and no path: not a file tool
        raise BadPayload(f"{tool}: no path (file_path, path or target_file)")
    path = absolute(base.cwd, path)
    if tool == "Delete":
        return (base._replace(tool="Bash", command=f"rm -- {shlex.quote(path)}"),)
    return (_file_call(tool or "tool_input", args, base._replace(file_path=path)),)


def _file_call(tool: str, args: dict[str, Any], call: ToolCall) -> ToolCall:
    old = first_string(args, ("old_string", "old_str"), tool)
    if old is not None:
        new = first_string(args, ("new_string", "new_str"), tool) or ""
        return call._replace(tool="Edit", edits=((old, new, args.get("replace_all") is True),))
    content = first_string(args, _TEXTS, tool)
    if content is not None:
        return call._replace(tool="Write", content=content)
    steps = args.get("edits")
    if isinstance(steps, list):
        return call._replace(tool="MultiEdit", edits=tuple(edit_step(s, tool) for s in steps))
    raise BadPayload(
        f"{tool}: neither a content (content, contents, text), an old_string nor edits"
    )


def _after_edit(base: ToolCall, payload: dict[str, Any]) -> ToolCall:
    """``afterFileEdit``: the file is indexed; its ``edits`` are kept when readable."""
    path = first_string(payload, ("file_path",), "afterFileEdit")
    if not path:
        raise BadPayload("afterFileEdit: no file_path")
    steps = payload.get("edits")
    edits = tuple(edit_step(s, "afterFileEdit") for s in steps) if isinstance(steps, list) else ()
    return base._replace(tool="Edit", file_path=absolute(base.cwd, path), edits=edits)


def _shell(base: ToolCall, args: dict[str, Any]) -> ToolCall:
    command = args.get("command")
    if not isinstance(command, str):
        raise BadPayload("Shell: the command is missing or not a string")
    where = first_string(args, ("cwd", "working_directory"), "Shell")
    cwd = absolute(base.cwd, where) if where else base.cwd
    return base._replace(tool="Bash", cwd=cwd, command=command)


def _object(args: object, tool: str) -> dict[str, Any]:
    """A tool's input: an object, or a JSON string of one (seen for MCP tools)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            raise BadPayload(f"{tool}: tool_input is neither an object nor JSON") from None
    if not isinstance(args, dict):
        raise BadPayload(f"{tool}: tool_input is not an object")
    return args


def render(decision: Decision) -> Answer:
    """Cursor's permission JSON, printed even for a silent allow."""
    if decision.verdict == "allow":
        out = {"permission": "allow"}
        if decision.reason:
            out["agent_message"] = decision.reason
    else:
        out = {
            "permission": decision.verdict,
            "user_message": f"memkeeper: {decision.reason}",
            "agent_message": decision.reason,
        }
    return Answer(dumps(out))


def allow(phase: Phase) -> Answer:
    """``{"permission": "allow"}`` (``{}`` after a tool, which has nothing to answer)."""
    return Answer(dumps({} if phase in ("post", "indexed") else {"permission": "allow"}))


def tell(phase: Phase, text: str) -> Answer:
    """The channel's words: ``additional_context`` of postToolUse (and of sessionStart, which
    memkeeper does not install: some Cursor versions refuse it as an unknown hook type)."""
    return Answer(dumps({"additional_context": text}))


def _entry(event: str, command: str) -> dict[str, Any]:
    if event in ("preToolUse", "postToolUse"):
        return {"command": command, "matcher": "Write|Delete|Shell", "timeout": 30}
    return {"command": command, "timeout": 30}


def _missing(why: str) -> dict[str, Any]:
    """The deny while memkeeper is missing (Cursor does not enforce an ask on its tools)."""
    short = "memkeeper is not installed on this machine: the memory gate refused this call."
    return {"permission": "deny", "user_message": short, "agent_message": why}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Cursor",
    (".cursor/hooks.json",),
    ("preToolUse", "beforeShellExecution", "postToolUse", "afterFileEdit"),
    ("preToolUse", "beforeShellExecution"),
    _entry,
    _missing,
    (
        "Cursor loads .cursor/hooks.json only in a trusted workspace (it also runs the hooks "
        "of .claude/settings.json, with its own payloads: memkeeper tells them apart).",
    ),
    refuses="refuses it",
    skeleton={"version": 1},
    after="{}",
    mcp_file=".cursor/mcp.json",
    mcp_todo="Enable the memkeeper server in Cursor's settings (MCP): Cursor asks before it "
    "starts a project's server.",
)

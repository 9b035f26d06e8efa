"""Claude Code's hook JSON, read into a typed ``ToolCall`` (or ``BadPayload`` saying what is
wrong). The shapes judged: ``Write {file_path, content}``, ``Edit {file_path, old_string,
new_string, replace_all?}``, ``MultiEdit {file_path, edits: [{old_string, new_string,
replace_all?}]}``, ``Bash {command, …}``; any other tool's input is not looked at.
Paths relative to the session's ``cwd`` are made absolute against it. Pure.
"""

from __future__ import annotations

import json
import os

from memkeeper.records import Record

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

Edit = tuple[str, str, bool]  # old_string, new_string, replace_all
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


class BadPayload(ValueError):
    """The hook's input is not a tool call the gate can read."""


class ToolCall(Record):
    __slots__ = (
        "event",
        "tool",
        "cwd",
        "session_id",
        "tool_use_id",
        "file_path",
        "content",
        "edits",
        "command",
    )
    event: str  # "PreToolUse", "PostToolUse", or another event nobody judges
    tool: str
    cwd: str
    session_id: str
    tool_use_id: str
    file_path: str | None  # Write, Edit, MultiEdit: absolute and normalised
    content: str | None  # Write
    edits: tuple[Edit, ...]  # Edit, MultiEdit
    command: str | None  # Bash

    def __init__(
        self,
        event: str,
        tool: str,
        cwd: str,
        session_id: str = "",
        tool_use_id: str = "",
        file_path: str | None = None,
        content: str | None = None,
        edits: tuple[Edit, ...] = (),
        command: str | None = None,
    ) -> None:
        self._fill(event, tool, cwd, session_id, tool_use_id, file_path, content, edits, command)


def parse_call(raw: bytes | str, default_cwd: str) -> ToolCall:
    """The tool call in a hook's stdin; ``default_cwd`` stands in for a missing ``cwd``."""
    return parse_payload(load_payload(raw), default_cwd)


def load_payload(raw: bytes | str) -> dict[str, Any]:
    """A hook's stdin as a JSON object (a leading BOM tolerated: some agents send one)."""
    if isinstance(raw, bytes):
        raw = raw.removeprefix(b"\xef\xbb\xbf")
    else:
        raw = raw.removeprefix("\ufeff")
    try:
        payload = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
        raise BadPayload(f"not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise BadPayload(f"expected a JSON object, got {type(payload).__name__}")
    return payload


def parse_payload(payload: dict[str, Any], default_cwd: str) -> ToolCall:
    """The tool call in a hook's JSON object (Claude Code's shape)."""
    event = _string(payload, "hook_event_name")
    if event not in TOOL_EVENTS:
        return ToolCall(event, "", default_cwd)
    cwd = _string(payload, "cwd", default_cwd) or default_cwd
    call = ToolCall(
        event,
        _string(payload, "tool_name"),
        cwd,
        _string(payload, "session_id", ""),
        _string(payload, "tool_use_id", ""),
    )
    return _with_input(call, payload.get("tool_input"))


def _with_input(call: ToolCall, tool_input: object) -> ToolCall:
    if call.tool == "Read":  # what it read (PostToolUse, where installed): never judged
        path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
        where = os.path.normpath(os.path.join(call.cwd, path)) if isinstance(path, str) else None
        return call._replace(file_path=where if path else None)
    if call.tool not in ("Write", "Edit", "MultiEdit", "Bash", "PowerShell"):
        return call
    if not isinstance(tool_input, dict):
        raise BadPayload(f"{call.tool}: tool_input is not an object")
    if call.tool in ("Bash", "PowerShell"):
        return call._replace(command=_string(tool_input, "command", where="tool_input"))
    path = _string(tool_input, "file_path", where="tool_input")
    if not path:
        raise BadPayload(f"{call.tool}: tool_input.file_path is empty")
    call = call._replace(file_path=os.path.normpath(os.path.join(call.cwd, path)))
    if call.tool == "Write":
        return call._replace(content=_string(tool_input, "content", where="tool_input"))
    if call.tool == "Edit":
        return call._replace(edits=(_edit(tool_input, "tool_input"),))
    steps = tool_input.get("edits")
    if not isinstance(steps, list):
        raise BadPayload("MultiEdit: tool_input.edits is not a list")
    return call._replace(
        edits=tuple(_edit(e, f"tool_input.edits[{i}]") for i, e in enumerate(steps))
    )


def _edit(step: object, where: str) -> Edit:
    if not isinstance(step, dict):
        raise BadPayload(f"{where} is not an object")
    every = step.get("replace_all", False)
    if not isinstance(every, bool):
        raise BadPayload(f"{where}.replace_all is not true or false")
    return (
        _string(step, "old_string", where=where),
        _string(step, "new_string", where=where),
        every,
    )


_MISSING: Any = object()


def _string(obj: dict[str, Any], key: str, default: Any = _MISSING, where: str = "") -> str:
    value = obj.get(key, default)
    if value is _MISSING:
        raise BadPayload(f"{where or 'payload'}.{key} is missing")
    if not isinstance(value, str):
        raise BadPayload(f"{where or 'payload'}.{key} is not a string")
    return value

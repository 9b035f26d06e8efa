"""GitHub Copilot CLI and cloud agent (docs/reference.md §7 "GitHub Copilot", after
github/docs ``content/copilot/reference/hooks-reference.md``).

Two payloads, chosen by how the hook's event is spelled in the configuration:
- camelCase (``preToolUse`` in ``.github/hooks/*.json``): ``{sessionId, timestamp (ms), cwd,
  toolName, toolArgs}``, plus ``toolResult`` after the tool. It names no event, so the
  installed command passes it on argv (``--event preToolUse``); without one, ``toolResult``
  means post-tool and ``error`` a failed tool.
- PascalCase (``PreToolUse``, also what Copilot sends to the hooks it reads from
  ``.claude/settings.json``): ``{hook_event_name, session_id, timestamp (ISO), cwd, tool_name,
  tool_input}`` with Claude's tool names (``Write``, ``Edit``, ``Bash``) over Copilot's own
  arguments (or Claude's: which is not documented, so both are read).

``toolArgs`` / ``tool_input`` is an object, a JSON string of one, or (``apply_patch``) the
raw patch. Tools: ``create {path, file_text}`` → Write; ``edit {path, old_str, new_str}`` →
Edit; ``str_replace_editor`` by its ``command`` (``create``, ``str_replace``; ``insert`` and
``undo_edit`` are not judged); ``apply_patch`` → per file, add → Write, update → Edit,
delete → ``rm``, move → the Edit and ``mv``; ``bash`` / ``powershell {command}`` → Bash.

Answers, always exit 0: ``{"permissionDecision": "deny"|"ask", "permissionDecisionReason":
…}``; an advisory notice as ``{"additionalContext": …}``; else ``{}`` (the normal permission
flow — never ``allow``, which would skip the user's prompt). Copilot's command hooks fail
closed: a crash or a non-zero exit denies the call, so every failure answers ``{}``.

Installed in ``.github/hooks/memkeeper.json`` (camelCase events, so the command names its
event), the MCP server in VS Code's ``.vscode/mcp.json``. Pure.
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

NAME = "copilot"
_PASCAL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
_OTHERS = ("hookName", "clineVersion", "cursor_version", "workspace_roots")  # Cline's, Cursor's
_NATIVE_ARGS = ("file_text", "old_str", "new_str")  # Copilot's argument names, not Claude's
_SHELLS = ("bash", "powershell", "Bash", "PowerShell")
_FILE_TOOLS = ("create", "edit", "str_replace_editor", "apply_patch", "Write", "Edit", "MultiEdit")
_PHASES: dict[str, Phase] = {"pretooluse": "pre", "posttooluse": "post"}


def sniff(payload: dict[str, Any]) -> bool:
    """camelCase tool events (``toolName``/``toolArgs``), or the PascalCase ones with what
    only Copilot sends among the agents using that spelling: a ``timestamp`` and no
    transcript, or its own argument names."""
    if any(key in payload for key in _OTHERS):
        return False
    if "toolName" in payload or "toolArgs" in payload:
        return True
    if payload.get("hook_event_name") not in _PASCAL_EVENTS or "transcript_path" in payload:
        return False
    args = payload.get("tool_input")
    native = isinstance(args, dict) and any(key in args for key in _NATIVE_ARGS)
    return isinstance(payload.get("timestamp"), str) or native


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    camel = "toolName" in payload or "toolArgs" in payload
    phase = _phase(payload, event)
    session = text_field(payload, "sessionId" if camel else "session_id")
    if phase == "other":
        return HookInput(phase, (), session)
    tool = text_field(payload, "toolName" if camel else "tool_name")
    args = payload.get("toolArgs" if camel else "tool_input")
    where = text_field(payload, "cwd") or cwd
    base = ToolCall(
        "PreToolUse" if phase == "pre" else "PostToolUse",
        tool,
        where,
        session,
        text_field(payload, "toolCallId") or text_field(payload, "tool_use_id"),
    )
    return HookInput(phase, calls(tool, args, base), session)


def _phase(payload: dict[str, Any], event: str | None) -> Phase:
    named = event or payload.get("hook_event_name")
    if isinstance(named, str) and named:
        return _PHASES.get(named.lower(), "other")
    if "toolResult" in payload or "tool_result" in payload:
        return "post"
    return "other" if "error" in payload else "pre"


def calls(tool: str, args: object, base: ToolCall) -> tuple[ToolCall, ...]:
    """The core's calls for one Copilot tool call (``base``: its event, cwd and ids)."""
    if tool not in _SHELLS and tool not in _FILE_TOOLS:
        return ()  # view, grep, glob, task, web_fetch…: nothing the gate judges
    found = _arguments(args, tool)
    if tool in _SHELLS:
        command = found.get("command") if isinstance(found, dict) else None
        if not isinstance(command, str):
            raise BadPayload(f"{tool}: the command is missing or not a string")
        return (base._replace(tool="Bash", command=command),)
    if isinstance(found, str):
        return patch_calls(found, base)
    patch = _patch_in(found)
    if patch is not None:
        return patch_calls(patch, base)
    if found.get("command") in ("view", "insert", "undo_edit"):  # str_replace_editor's verbs
        return ()  # insert and undo_edit change lines the gate cannot see without the file
    return (_file_call(tool, found, base),)


def _arguments(args: object, tool: str) -> dict[str, Any] | str:
    """The tool's arguments: an object (given as one, or as a JSON string of one), or a
    raw patch."""
    if isinstance(args, str):
        from memkeeper.gate.applypatch import is_patch

        text = args
        try:
            args = json.loads(text)
        except ValueError:
            if is_patch(text):
                return text
            raise BadPayload(f"{tool}: the arguments are neither JSON nor a patch") from None
    if not isinstance(args, dict):
        raise BadPayload(f"{tool}: the arguments are not an object")
    return args


def _patch_in(args: dict[str, Any]) -> str | None:
    """The patch of an ``apply_patch`` given as an object (``{input: PATCH}``…)."""
    from memkeeper.gate.applypatch import is_patch

    for key in ("input", "patch", "command"):
        value = args.get(key)
        if isinstance(value, str) and is_patch(value):
            return value
    return None


def _file_call(tool: str, args: dict[str, Any], base: ToolCall) -> ToolCall:
    path = first_string(args, ("path", "file_path"), tool)
    if path is None:
        raise BadPayload(f"{tool}: no path")
    call = base._replace(file_path=absolute(base.cwd, path))
    old = first_string(args, ("old_str", "old_string"), tool)
    if old is not None:
        new = first_string(args, ("new_str", "new_string"), tool) or ""
        return call._replace(tool="Edit", edits=((old, new, args.get("replace_all") is True),))
    content = first_string(args, ("file_text", "content"), tool)
    if content is not None:
        return call._replace(tool="Write", content=content)
    steps = args.get("edits")
    if isinstance(steps, list):
        return call._replace(tool="MultiEdit", edits=tuple(edit_step(s, tool) for s in steps))
    raise BadPayload(f"{tool}: neither an old string, a file text nor edits")


def patch_calls(text: str, base: ToolCall) -> tuple[ToolCall, ...]:
    """An ``apply_patch`` as the core's calls, file by file: an added file is a Write, an
    update an Edit of its chunks, a deleted file ``rm -- PATH``, a move the Edit (if any)
    then ``mv -- SRC DST``."""
    from memkeeper.gate.applypatch import BadPatch, parse_patch

    try:
        ops = parse_patch(text)
    except BadPatch as exc:
        raise BadPayload(f"apply_patch: {exc}") from None
    out: list[ToolCall] = []
    for op in ops:
        path = absolute(base.cwd, op.path)
        if op.kind == "add":
            out.append(base._replace(tool="Write", file_path=path, content=op.content))
        elif op.kind == "delete":
            out.append(_shell(base, f"rm -- {shlex.quote(path)}"))
        else:
            if op.edits:
                edits = tuple((old, new, False) for old, new in op.edits)
                out.append(base._replace(tool="Edit", file_path=path, edits=edits))
            if op.move_to is not None:
                dest = absolute(base.cwd, op.move_to)
                out.append(_shell(base, f"mv -- {shlex.quote(path)} {shlex.quote(dest)}"))
    return tuple(out)


def _shell(base: ToolCall, command: str) -> ToolCall:
    return base._replace(tool="Bash", command=command)


def render(decision: Decision) -> Answer:
    """Copilot's flat preToolUse JSON; ``{}`` for a silent allow."""
    if decision.verdict == "allow":
        out = {"additionalContext": decision.reason} if decision.reason else {}
    else:
        out = {"permissionDecision": decision.verdict, "permissionDecisionReason": decision.reason}
    return Answer(dumps(out))


def allow(phase: Phase) -> Answer:
    """``{}``, exit 0: the normal permission flow (a non-zero exit would deny the call)."""
    return Answer(dumps({}))


def tell(phase: Phase, text: str) -> Answer:
    """postToolUse's top-level ``additionalContext``: memkeeper's channel after a tool call
    (the only phase Copilot's hooks are installed for that can carry it)."""
    return Answer(dumps({"additionalContext": text})) if phase == "post" else allow(phase)


def _entry(event: str, command: str) -> dict[str, Any]:
    tools = "create|edit|apply_patch|bash"
    return {"type": "command", "matcher": tools, "bash": command, "timeoutSec": 30}


def _missing(why: str) -> dict[str, Any]:
    """The ask while memkeeper is missing: the user decides each call."""
    return {"permissionDecision": "ask", "permissionDecisionReason": why}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Copilot",
    (".github/hooks/memkeeper.json",),
    ("preToolUse", "postToolUse"),
    ("preToolUse",),
    _entry,
    _missing,
    (
        "Copilot CLI loads .github/hooks/ only once this folder is trusted; the Copilot "
        "coding agent runs them only if its setup steps install memkeeper "
        "(.github/workflows/copilot-setup-steps.yml).",
    ),
    skeleton={"version": 1},
    on_argv=True,
    mcp_file=".vscode/mcp.json",
    mcp_key="servers",
    mcp_type="stdio",
    mcp_todo="In VS Code, start the memkeeper server of .vscode/mcp.json (it asks you to "
    "trust it first).",
)

"""Codex CLI (docs/reference.md §7 "Codex CLI"):
``PreToolUse`` / ``PostToolUse`` with ``hook_event_name``, ``session_id`` (and ``agent_id``
inside a sub-agent), ``turn_id``, ``model``, ``cwd``, ``tool_name``, ``tool_use_id`` and
``tool_input``.

File edits arrive as ``apply_patch`` with the raw patch in ``tool_input.command``. Each file
the patch touches becomes the core's calls (``gate.applypatch``): an added file a ``Write``
of its whole content; an updated one an ``Edit`` with one ``(old, new)`` step per chunk,
judged hunk by hunk as an ``Edit`` is; a deleted one ``rm -- PATH``; a moved one the
``Edit`` of its source and ``mv -- SRC DST``. A patch that does not parse is not judged
(``apply_patch`` refuses it too). Every shell tool arrives as ``Bash {command}``, argv ones
joined (``bash -lc '…'``, unwrapped here); a patch in a here-document (``apply_patch
<<'EOF'``) is judged as a patch too.

Codex reads exactly ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": "deny", "permissionDecisionReason": …}}`` (the reason non-empty; its
wire structs reject unknown keys). An ``allow`` without ``updatedInput`` and an ``ask`` are
unsupported there (the run is marked failed and the call goes ahead), so a silent allow
prints nothing, an advisory ``WAIT`` is ``additionalContext`` (shown to the model, the call
goes ahead), and an ``ask`` — which no Codex hook can put to the user — is a deny saying
that a human has to make the change.

``SessionStart`` and ``UserPromptSubmit`` carry memkeeper's channel (``gate.channel``): its
``additionalContext`` becomes a developer message. Installed in ``.codex/hooks.json`` (the
tool events for ``Bash`` and ``apply_patch``, the two others for every start and prompt); the MCP
server in ``.codex/config.toml``'s ``[mcp_servers.memkeeper]`` table. Pure.
"""

from __future__ import annotations

import os
import re
import shlex

from memkeeper.gate.agents.base import (
    CONTEXT_EVENTS,
    Adapter,
    Answer,
    HookInput,
    Setup,
    context_input,
    dumps,
    file_op_calls,
    nested_entry,
    tell,
)
from memkeeper.gate.applypatch import BadPatch, is_patch, parse_patch
from memkeeper.gate.payload import TOOL_EVENTS, BadPayload, ToolCall, parse_payload

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Phase
    from memkeeper.gate.facts import Decision

NAME = "codex"
# Keys of other agents' payloads that also carry a PreToolUse/PostToolUse hook_event_name
# (Cursor's, Copilot's, Cline's); Codex sends none of them.
_FOREIGN = (
    "cursor_version",
    "workspace_roots",
    "conversation_id",
    "generation_id",
    "timestamp",
    "toolName",
    "hookName",
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_FLAGS = re.compile(r"-[A-Za-z]+")
# Codex runs `cd DIR && apply_patch <<'EOF' …` in DIR (its own shell-patch parser allows it).
_CD_PATCH = re.compile(r"\s*cd\s+('[^']*'|\"[^\"]*\"|[^\s;&|<>]+)\s*&&\s*apply_patch\b")
ASK = (
    "A human has to approve this change, and a Codex hook cannot ask one, so memkeeper "
    "denied it: ask the user to make it. "
)


def sniff(payload: dict[str, Any]) -> bool:
    """Codex's tool events: Claude Code's event names with its own keys (``turn_id``, a
    ``model`` slug) or its ``apply_patch`` tool."""
    event = payload.get("hook_event_name")
    if event in CONTEXT_EVENTS:  # Claude Code's too: Codex's carry its permission_mode
        return isinstance(payload.get("model"), str) and "permission_mode" in payload
    if event not in TOOL_EVENTS:
        return False
    if "turn_id" in payload:
        return True
    codexish = payload.get("tool_name") == "apply_patch" or isinstance(payload.get("model"), str)
    return codexish and not any(key in payload for key in _FOREIGN)


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    name = payload.get("hook_event_name") or event
    if isinstance(name, str) and name in CONTEXT_EVENTS:
        return context_input(payload, CONTEXT_EVENTS[name], cwd)
    if name not in TOOL_EVENTS:
        return HookInput("other")
    phase: Phase = "pre" if name == "PreToolUse" else "post"
    session = _text(payload, "session_id")
    agent = payload.get("agent_id")
    if isinstance(agent, str) and agent:
        session = f"{session}/{agent}"
    base = ToolCall(
        str(name),
        _text(payload, "tool_name"),
        _text(payload, "cwd") or cwd,
        _text(payload, "session_id"),
        _text(payload, "tool_use_id"),
    )
    return HookInput(phase, _calls(base, payload), session)


def _calls(base: ToolCall, payload: dict[str, Any]) -> tuple[ToolCall, ...]:
    tool_input = payload.get("tool_input")
    if base.tool == "apply_patch":
        text = tool_input if isinstance(tool_input, str) else _patch_text(tool_input)
        return patch_calls(base, text)
    if base.tool == "Bash":
        if not isinstance(tool_input, dict):
            raise BadPayload("Bash: tool_input is not an object")
        command = shell_command(tool_input.get("command"))
        workdir = tool_input.get("workdir")
        if isinstance(workdir, str) and workdir:
            base = base._replace(cwd=os.path.normpath(os.path.join(base.cwd, workdir)))
        call = base._replace(command=command)
        return (call, *_heredoc_patch(call, command))
    if base.tool in ("Write", "Edit", "MultiEdit"):  # Claude's names, should Codex send them
        return (parse_payload({**payload, "cwd": base.cwd}, base.cwd),)
    return ()  # MCP tools and whatever else: not judged


def _patch_text(tool_input: object) -> str:
    if not isinstance(tool_input, dict):
        raise BadPayload("apply_patch: tool_input is not an object")
    for key in ("command", "input", "patch"):  # the hook's key, then the tool's own
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    raise BadPayload("apply_patch: tool_input.command is not a string")


def shell_command(command: object) -> str:
    """The command as a shell would read it: an argv list joined, and ``bash -lc 'SCRIPT'``
    (``sh -c``…, any shell's path) unwrapped to ``SCRIPT``."""
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        command = shlex.join(command)
    if not isinstance(command, str):
        raise BadPayload("Bash: tool_input.command is not a string")
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if (
        len(words) >= 3
        and os.path.basename(words[0]) in _SHELLS
        and all(_FLAGS.fullmatch(word) for word in words[1:-1])
        and "c" in words[-2]
    ):
        return words[-1]
    return command


def _heredoc_patch(call: ToolCall, command: str) -> tuple[ToolCall, ...]:
    if not is_patch(command):
        return ()
    found = _CD_PATCH.match(command)
    if found is not None:
        where = shlex.split(found.group(1))[0]
        call = call._replace(cwd=os.path.normpath(os.path.join(call.cwd, where)))
    return patch_calls(call._replace(tool="apply_patch", command=None), command)


def patch_calls(base: ToolCall, text: str) -> tuple[ToolCall, ...]:
    """The core's calls for every file of the patch in ``text``; none when it does not parse."""
    try:
        ops = parse_patch(text)
    except BadPatch:
        return ()
    return tuple(call for op in ops for call in file_op_calls(base, op))


def render(decision: Decision) -> Answer:
    reason = decision.reason.strip()
    if decision.verdict == "allow":
        if not reason:
            return Answer()
        return Answer(dumps({"hookSpecificOutput": _out(additionalContext=reason)}))
    if decision.verdict == "ask":
        reason = ASK + reason
    reason = reason or "memkeeper denied this call."  # Codex ignores a deny without one
    return Answer(
        dumps(
            {"hookSpecificOutput": _out(permissionDecision="deny", permissionDecisionReason=reason)}
        )
    )


def _out(**fields: str) -> dict[str, str]:
    return {"hookEventName": "PreToolUse", **fields}


def allow(phase: Phase) -> Answer:
    """Empty stdout: Codex's only allow that is not a failed hook run."""
    return Answer()


def _text(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadPayload(f"payload.{key} is not a string")
    return value


def _entry(event: str, command: str) -> dict[str, Any]:
    if event in CONTEXT_EVENTS:  # every session start and prompt: the channel
        return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
    return nested_entry("^(Bash|apply_patch)$", command, timeout=30)


def _missing(why: str) -> dict[str, Any]:
    """The deny while memkeeper is missing: Codex has no ask a hook can give."""
    return {"hookSpecificOutput": _out(permissionDecision="deny", permissionDecisionReason=why)}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Codex",
    (".codex/hooks.json",),
    ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit"),
    ("PreToolUse",),
    _entry,
    _missing,
    (
        "In Codex, run /hooks once to review and trust the project's hooks: Codex runs no "
        "project hook before that (and reads .codex/ only in a trusted project).",
    ),
    refuses="refuses it",
    mcp_file=".codex/config.toml",
    mcp_key="mcp_servers",
    mcp_todo="Codex reads .codex/config.toml only in a trusted project (/mcp lists memkeeper).",
    login_shell=True,
)

"""Cline (docs/reference.md §7 "Cline"): executable files ``.clinerules/hooks/PreToolUse``
/ ``PostToolUse`` (and, for the channel, ``TaskStart`` / ``TaskResume`` /
``UserPromptSubmit``) fed one JSON object. Two runners send it
(cline/cline @ 21cb8d2): the VS Code extension (``hookName: "PreToolUse"``, the tool in
``preToolUse {toolName, parameters}`` with every value a string, JSON-encoded when it is
not one) and the CLI / SDK hosts (``hookName: "tool_call"`` / ``"tool_result"``, the raw
input in ``tool_call {id, name, input}`` beside the same ``preToolUse`` block). The session
is ``taskId``, plus ``/`` and ``agent_id`` for a sub-agent (one with a ``parent_agent_id``);
relative paths are taken from the first of ``workspaceRoots``, where Cline's tools run.

The tools, both generations: ``editor {path, old_text?, new_text, insert_line?}`` — an
``Edit`` of ``old_text``; without it a create (the tool refuses to overwrite an existing
file), with ``insert_line`` not judged (where the line falls needs the file) but indexed;
``apply_patch {input}`` (Codex's grammar, ``gate.applypatch``; Cline overwrites on ``Add
File``, so that is a ``Write``; ``Delete`` → ``rm --``, ``Move to`` → the ``Edit`` and
``mv --``); ``run_commands`` in each of its input shapes (one ``Bash`` call per command,
an argv one quoted); and the pre-SDK ``write_to_file {path, content}`` (a ``Write``),
``replace_in_file {path, diff}`` (its SEARCH/REPLACE blocks as edits) and ``execute_command
{command}``. Other tools are not judged.

Answers, always exit 0: ``{"cancel": false}`` to allow, with ``contextModification`` (put
before the model's next turn) for an advisory ``WAIT``; ``{"cancel": true, "errorMessage":
…}`` to deny. A cancel ends the whole task, not the call, so the message says so and what
to run once the task is resumed; an ``ask`` — which no Cline hook can put to the user — is
a cancel that hands the change to the human.

The channel (§4.28): ``contextModification`` (a ``<hook_context>`` block) on each event.
Installed as those executables (``SCRIPT``); a hook of the user's in their place is kept
as ``EVENT.legacy``, a name neither runner picks up (the SDK takes the event's name with no
extension or one of its script extensions), and run first. Cline keeps its MCP servers per
user, outside the repository: the user is told what to add. Pure.
"""

from __future__ import annotations

import json
import os
import re
import shlex

from memkeeper.gate.agents.base import (
    Adapter,
    Answer,
    HookInput,
    Scripts,
    Setup,
    dumps,
    file_op_calls,
)
from memkeeper.gate.applypatch import BEGIN, END, BadPatch, parse_patch
from memkeeper.gate.payload import BadPayload, ToolCall

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.gate.agents.base import Phase
    from memkeeper.gate.facts import Decision
    from memkeeper.gate.payload import Edit

NAME = "cline"
_PHASES: dict[str, Phase] = {
    "pretooluse": "pre",
    "tool_call": "pre",
    "posttooluse": "post",
    "tool_result": "post",
    "taskstart": "start",  # the channel's events: a task started or resumed, a prompt
    "taskresume": "start",
    "userpromptsubmit": "prompt",
}
CHANNEL_EVENTS = ("TaskStart", "TaskResume", "UserPromptSubmit")
_BLOCKS = {"pre": ("preToolUse", "tool_call"), "post": ("postToolUse", "tool_result")}
_KEYS = ("hookName", "clineVersion", "preToolUse", "postToolUse")  # no other agent's
_WRAPPERS = ("%%bash", "apply_patch", "EOF", "```")  # lines Cline drops around a bare patch
# replace_in_file's markers (compiled on first use: most calls are other tools)
_SEARCH, _DIVIDER = r"(?:-{3,}|<{3,}) SEARCH>?", r"={3,}"
_REPLACE = r"(?:\+{3,}|>{3,}) REPLACE>?"
_ALLOW = {"cancel": False}
DENIED = (
    "memkeeper refused this tool call, and Cline stops the whole task when a hook refuses "
    "one. {reason}\nTo go on, resume the task and do this instead, with the memkeeper "
    "commands named above; the rest of the task can go ahead as planned."
)
ASKED = (
    "memkeeper stopped the task to ask you, since a Cline hook cannot ask about a single "
    "tool call and its refusal ends the whole task. {reason}\nIf you approve, make this "
    "change yourself, then resume the task; if not, resume it and tell Cline to leave this "
    "part alone."
)


def sniff(payload: dict[str, Any]) -> bool:
    return "hook_event_name" not in payload and any(key in payload for key in _KEYS)


def parse(payload: dict[str, Any], event: str | None, cwd: str) -> HookInput:
    session = _session(payload)
    name = payload.get("hookName")
    if not isinstance(name, str):
        if name is not None or event is None:
            raise BadPayload("payload.hookName is missing or not a string")
        name = event
    # (the SDK names its task and prompt events its own way: the file's event, on argv)
    phase = _PHASES.get(name.lower()) or _PHASES.get((event or "").lower(), "other")
    if phase in ("start", "prompt"):
        return HookInput(phase, (), session, _cwd(payload, cwd))
    if phase == "other":
        return HookInput("other", (), session)
    tool, args, call_id = _tool(payload, phase)
    base = ToolCall(
        "PreToolUse" if phase == "pre" else "PostToolUse",
        tool,
        _cwd(payload, cwd),
        session,
        call_id,
    )
    return HookInput(phase, _calls(base, args), session)


def _session(payload: dict[str, Any]) -> str:
    task = payload.get("taskId")
    session = task if isinstance(task, str) else ""
    agent, parent = payload.get("agent_id"), payload.get("parent_agent_id")
    if isinstance(agent, str) and agent and isinstance(parent, str) and parent:
        session = f"{session}/{agent}"
    return session


def _cwd(payload: dict[str, Any], cwd: str) -> str:
    roots = payload.get("workspaceRoots")
    first = roots[0] if isinstance(roots, list) and roots else None
    return first if isinstance(first, str) and os.path.isabs(first) else cwd


def _tool(payload: dict[str, Any], phase: str) -> tuple[str, Any, str]:
    """The tool's name, its input (the raw one where the runner sends it) and its call id."""
    legacy_key, sdk_key = _BLOCKS[phase]
    legacy, sdk = payload.get(legacy_key), payload.get(sdk_key)
    if not isinstance(legacy, dict) and not isinstance(sdk, dict):
        raise BadPayload(f"payload.{legacy_key} is missing or not an object")
    sdk = sdk if isinstance(sdk, dict) else {}
    legacy = legacy if isinstance(legacy, dict) else {}
    tool = legacy.get("toolName", sdk.get("name"))
    if not isinstance(tool, str):
        raise BadPayload(f"payload.{legacy_key}.toolName is not a string")
    call_id = sdk.get("id")
    if "input" in sdk:
        return tool, sdk["input"], call_id if isinstance(call_id, str) else ""
    params = legacy.get("parameters", {})
    if not isinstance(params, dict):
        raise BadPayload(f"payload.{legacy_key}.parameters is not an object")
    return tool, _decoded(params), call_id if isinstance(call_id, str) else ""


def _decoded(params: dict[str, Any]) -> dict[str, Any]:
    """The VS Code runner's string map as the tool's input: ``"null"`` where the tool takes
    a null, and a JSON array or object of commands (or of a command's words), parsed."""
    out = dict(params)
    for key in ("old_text", "insert_line"):
        if out.get(key) == "null":
            out[key] = None
    for key in ("commands", "args"):
        value = out.get(key)
        if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
            out[key] = _json(value)
    return out


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text  # a command that starts with `[`


# -- the tools -----------------------------------------------------------------------------------


def _calls(base: ToolCall, args: Any) -> tuple[ToolCall, ...]:
    tool = base.tool
    if tool == "editor":
        return _editor(base, _object(args, tool))
    if tool == "apply_patch":
        text = args if isinstance(args, str) else _string(_object(args, tool), "input", tool)
        return _patch(base, text)
    if tool in ("run_commands", "execute_command"):
        return tuple(base._replace(tool="Bash", command=c) for c in _commands(args, tool))
    if tool == "write_to_file":
        found = _object(args, tool)
        content = _string(found, "content", tool)
        return (base._replace(tool="Write", file_path=_path(base, found), content=content),)
    if tool == "replace_in_file":
        found = _object(args, tool)
        edits = search_replace(_string(found, "diff", tool))
        return (base._replace(tool="Edit", file_path=_path(base, found), edits=edits),)
    return ()  # read_files, search_codebase, MCP tools (`server__tool`)…: not judged


def _editor(base: ToolCall, args: dict[str, Any]) -> tuple[ToolCall, ...]:
    path, new = _path(base, args), _string(args, "new_text", "editor")
    edit = base._replace(tool="Edit", file_path=path)
    if args.get("insert_line") is not None:
        return () if base.event == "PreToolUse" else (edit,)
    old = args.get("old_text")
    if old is not None and not isinstance(old, str):
        raise BadPayload("editor: old_text is not a string")
    return (edit._replace(edits=((old or "", new, False),)),)


def _patch(base: ToolCall, text: str) -> tuple[ToolCall, ...]:
    try:
        ops = parse_patch(_enveloped(text))
    except BadPatch as exc:
        raise BadPayload(f"apply_patch: {exc}") from None
    calls: list[ToolCall] = []
    for op in ops:  # Cline joins the added lines: no newline after the last
        calls += file_op_calls(base, op, add_content=op.content.removesuffix("\n"))
    return tuple(calls)


def _enveloped(text: str) -> str:
    """The patch as ``parse_patch`` reads it: Cline takes one without its Begin/End lines
    too, once the shell wrapper lines around it are dropped."""
    if BEGIN in text or END in text:
        return text
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    while lines and (not lines[0].strip() or lines[0].startswith(_WRAPPERS)):
        lines.pop(0)
    while lines and (not lines[-1].strip() or lines[-1].startswith(_WRAPPERS)):
        lines.pop()
    return "\n".join([BEGIN, *lines, END]) + "\n"


def _commands(args: Any, tool: str) -> list[str]:
    """Every shell command in ``run_commands``' input shapes (strings, ``{command, args}``
    entries run without a shell, and the objects holding either), or ``execute_command``'s."""
    if isinstance(args, str):
        return [args]
    if isinstance(args, list):
        return [command for entry in args for command in _commands(entry, tool)]
    if not isinstance(args, dict):
        raise BadPayload(f"{tool}: the input is neither a command nor a list of them")
    if "commands" in args:
        return _commands(args["commands"], tool)
    command = args.get("command", args.get("cmd"))
    if not isinstance(command, str):
        raise BadPayload(f"{tool}: no command in the input")
    argv = args.get("args")
    if "args" not in args or tool == "execute_command":
        return [command]
    if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
        raise BadPayload(f"{tool}: args is not a list of strings")
    return [shlex.join([command, *argv])]


def search_replace(diff: str) -> tuple[Edit, ...]:
    """``replace_in_file``'s SEARCH/REPLACE blocks as ``(old, new, False)`` edits (the
    ``-------``/``+++++++`` markers and the older ``<<<<<<<``/``>>>>>>>`` ones; a last block
    left open ends with the diff, as Cline reads it)."""
    edits: list[Edit] = []
    old: list[str] | None = None
    new: list[str] | None = None
    for line in diff.split("\n"):
        if re.fullmatch(_SEARCH, line):
            old, new = [], None
        elif old is not None and new is None and re.fullmatch(_DIVIDER, line):
            new = []
        elif new is not None and re.fullmatch(_REPLACE, line):
            edits.append(("".join(old or ()), "".join(new), False))
            old = new = None
        elif new is not None:
            new.append(line + "\n")
        elif old is not None:
            old.append(line + "\n")
    if old is not None and new is not None:
        edits.append(("".join(old), "".join(new), False))
    return tuple(edits)


def _object(args: Any, tool: str) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise BadPayload(f"{tool}: the input is not an object")
    return args


def _string(args: dict[str, Any], key: str, tool: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise BadPayload(f"{tool}: {key} is missing or not a string")
    return value


def _path(base: ToolCall, args: dict[str, Any]) -> str:
    path = _string(args, "path", base.tool)
    if not path:
        raise BadPayload(f"{base.tool}: path is empty")
    return os.path.normpath(os.path.join(base.cwd, path))


# -- the answers ---------------------------------------------------------------------------------


def render(decision: Decision) -> Answer:
    reason = decision.reason.strip()
    if decision.verdict == "allow":
        context = (decision.context or reason).strip()
        return Answer(dumps({**_ALLOW, "contextModification": context} if context else _ALLOW))
    message = (DENIED if decision.verdict == "deny" else ASKED).format(
        reason=reason or "A memkeeper rule forbids it."
    )
    return Answer(dumps({"cancel": True, "errorMessage": message}))


def allow(phase: Phase) -> Answer:
    """``{"cancel": false}`` for every event: both runners read it as going ahead."""
    return Answer(dumps(_ALLOW))


def tell(phase: Phase, text: str) -> Answer:
    """The channel's words: ``contextModification``, before the model's next turn."""
    return Answer(dumps({**_ALLOW, "contextModification": text}))


# -- what install-hooks writes -------------------------------------------------------------------

MARKER = "# memkeeper: Cline's {event} hook, installed by `memkeeper install-hooks cline`"
LEGACY_SUFFIX = ".legacy"
SCRIPT = """#!/bin/sh
{marker}
# Runs `memkeeper hook cline` (memkeeper from PATH, else the project's .venv). A hook that was
# here before is kept as {event}{legacy} and runs first: its cancel stands; otherwise this
# answers memkeeper's, unless memkeeper has nothing to say and that hook has.
# `memkeeper uninstall-hooks cline` removes this file and puts that hook back.
here=$(cd "$(dirname "$0")" && pwd)
m=$(command -v memkeeper) || m="$here/../../.venv/bin/memkeeper"
gate() {{
    if [ -x "$m" ]; then
        "$m" hook cline --event {event}
    else
        cat >/dev/null
        printf '%s\\n' '{missing}'
    fi
}}
theirs="$here/{event}{legacy}"
if [ ! -x "$theirs" ]; then
    [ -x "$m" ] && exec "$m" hook cline --event {event}
    gate
    exit 0
fi
cancels() {{ printf '%s' "$1" | grep -q '"cancel"[[:space:]]*:[[:space:]]*true'; }}
says() {{ cancels "$1" || printf '%s' "$1" | grep -q '"context[A-Za-z]*"[[:space:]]*:'; }}
input=$(cat)
answer=$(printf '%s\\n' "$input" | "$theirs")
if ! cancels "$answer"; then
    ours=$(printf '%s\\n' "$input" | gate)
    if says "$ours" || [ -z "$answer" ]; then
        answer=$ours
    fi
fi
printf '%s\\n' "$answer"
"""


def script(event: str, missing: str) -> str:
    """The executable ``.clinerules/hooks/EVENT`` (``missing``: its answer while memkeeper
    is missing)."""
    marker = MARKER.format(event=event)
    return SCRIPT.format(marker=marker, event=event, legacy=LEGACY_SUFFIX, missing=missing)


def _missing(why: str) -> dict[str, Any]:
    """The cancel while memkeeper is missing (Cline has no ask a hook can give)."""
    return {"cancel": True, "errorMessage": why}


ADAPTER = Adapter(NAME, sniff, parse, render, allow, tell)
SETUP = Setup(
    NAME,
    "Cline",
    tuple(f".clinerules/hooks/{event}" for event in ("PreToolUse", "PostToolUse", *CHANNEL_EVENTS)),
    ("PreToolUse", "PostToolUse", *CHANNEL_EVENTS),
    ("PreToolUse",),
    None,
    _missing,
    (
        "Nothing in Cline: it runs .clinerules/hooks/ while hooks are enabled (the default, "
        "not with --yolo). On Windows it runs PreToolUse.ps1 instead, which memkeeper does "
        "not write.",
    ),
    refuses="stops the task",
    again="resume the task",
    scripts=Scripts(
        script,
        MARKER,
        LEGACY_SUFFIX,
        "move the file into .clinerules/ (as .clinerules/rules.md)",
    ),
    mcp_todo="Cline keeps MCP servers per user, outside the repository: in Cline, open MCP "
    "Servers → Configure MCP Servers (cline_mcp_settings.json) and add to its mcpServers: ",
)

"""What every agent is: its adapter — its payload read into the core's tool calls, the core's
``Decision`` written in its answer format, and its allow on the non-blocking path — and its
setup: what ``install-hooks`` writes into the project for it, as data.

The core (``gate.decide``) speaks one vocabulary, Claude Code's: a ``ToolCall`` is a
``Write`` (a whole file), an ``Edit``/``MultiEdit`` (old → new text), or a ``Bash`` command.
An adapter maps its agent's tools onto those — Codex's ``apply_patch`` becomes one call per
file, a deleted or moved file the ``rm``/``mv`` it amounts to — and answers in its agent's own
format (docs/reference.md §7). Pure.
"""

from __future__ import annotations

import json
import os
import shlex

from memkeeper.gate.payload import BadPayload
from memkeeper.records import Record

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from memkeeper.gate.applypatch import FileOp
    from memkeeper.gate.facts import Decision
    from memkeeper.gate.payload import ToolCall

    # before a tool runs (judge it), after, after one that failed, a session starting, a
    # prompt submitted, else
    # "indexed": after a tool, on an event whose answer the agent shows no model (Cursor's
    # afterFileEdit): indexed, and the channel keeps what it has for a later event
    Phase = Literal["pre", "post", "failed", "indexed", "start", "prompt", "other"]


class HookInput(Record):
    """One hook call as the core sees it."""

    __slots__ = ("phase", "calls", "session", "cwd")
    phase: Phase
    calls: tuple[ToolCall, ...]
    session: str  # the agent id's suffix: the session id, "/" and a sub-agent's id
    cwd: str  # the session's directory, for the phases without a tool call ("": unknown)

    def __init__(
        self, phase: Phase, calls: tuple[ToolCall, ...] = (), session: str = "", cwd: str = ""
    ) -> None:
        self._fill(phase, calls, session, cwd)


class Answer(Record):
    """What the hook process writes and how it exits."""

    __slots__ = ("stdout", "code")
    stdout: str
    code: int

    def __init__(self, stdout: str = "", code: int = 0) -> None:
        self._fill(stdout, code)


class Adapter(Record):
    """One agent's protocol: ``sniff`` (is this payload in my shape?), ``parse`` (payload,
    the event named on argv if any, the process's cwd), ``render`` (a PreToolUse decision),
    ``allow`` (the answer that lets the call through: the silent allow, a post-tool event,
    and every failure of memkeeper's own), ``tell`` (the answer that adds text to the model's
    context on a phase — session start, prompt, after a tool — where the agent has one; None:
    it has none, and memkeeper's channel does not reach it through hooks)."""

    __slots__ = ("name", "sniff", "parse", "render", "allow", "tell")
    name: str
    sniff: Callable[[dict[str, Any]], bool]
    parse: Callable[[dict[str, Any], str | None, str], HookInput]
    render: Callable[[Decision], Answer]
    allow: Callable[[Phase], Answer]
    tell: Callable[[Phase, str], Answer] | None

    def __init__(
        self,
        name: str,
        sniff: Callable[[dict[str, Any]], bool],
        parse: Callable[[dict[str, Any], str | None, str], HookInput],
        render: Callable[[Decision], Answer],
        allow: Callable[[Phase], Answer],
        tell: Callable[[Phase, str], Answer] | None = None,
    ) -> None:
        self._fill(name, sniff, parse, render, allow, tell)


class Scripts(Record):
    """Hooks that are executable files, one per event at the event's hook file: ``text``
    (the event, the answer while memkeeper is missing → the file), the ``marker`` line that
    tells ours (``{event}`` in it), the suffix a user's hook in that place is kept under
    (``kept_as``: a name the agent does not run) and what to do when a directory on the
    way is a file (``in_the_way``)."""

    __slots__ = ("text", "marker", "kept_as", "in_the_way")
    text: Callable[[str, str], str]
    marker: str
    kept_as: str
    in_the_way: str

    def __init__(
        self, text: Callable[[str, str], str], marker: str, kept_as: str, in_the_way: str
    ) -> None:
        self._fill(text, marker, kept_as, in_the_way)


class Setup(Record):
    """What ``install-hooks AGENT`` writes for one agent, as data (``memkeeper.install``
    writes it and takes it out again).

    The gate: ``hook_files`` (root-relative: the JSON file, or one executable per event,
    ``scripts``) run ``memkeeper hook NAME`` on ``events``, each with the JSON ``entry``
    built from the gate's command (None: ``scripts`` instead); a hook file memkeeper creates
    starts as ``skeleton``. Where memkeeper is missing the command answers by itself: on the
    ``pre`` events the agent's ``fallback`` for a reason (its ask, or where it has none that
    holds for one tool call, its deny: it ``refuses`` the call, and the user must ``again``
    once memkeeper is installed), on the others ``after`` ("": nothing). ``on_argv``: the
    event goes on the command line (the payload does not name it); ``project_env``: the
    variable the agent sets to the project's directory, if any. ``todo``: what is left for
    the user to do. ``login_shell``: the agent runs its shell commands in a login shell, whose
    profile may reset PATH, so refusals name memkeeper by a path that works there.
    ``served``: the events ``memkeeper watch`` can answer over HTTP (``gate.served``), whose
    commands step aside while it does.

    The MCP server: registered under ``mcp_key`` in ``mcp_file`` (a ``.toml`` one as a
    table; "": the agent keeps its servers per user, and ``mcp_todo`` says what to add by
    hand), with ``mcp_type`` as its ``type`` where the agent wants one.
    """

    __slots__ = (
        "name",
        "label",
        "hook_files",
        "events",
        "pre",
        "entry",
        "fallback",
        "todo",
        "refuses",
        "again",
        "skeleton",
        "after",
        "on_argv",
        "project_env",
        "scripts",
        "mcp_file",
        "mcp_key",
        "mcp_type",
        "mcp_todo",
        "login_shell",
        "served",
    )
    name: str
    label: str
    hook_files: tuple[str, ...]
    events: tuple[str, ...]
    pre: tuple[str, ...]
    entry: Callable[[str, str], dict[str, Any]] | None
    fallback: Callable[[str], dict[str, Any]]
    todo: tuple[str, ...]
    refuses: str
    again: str
    skeleton: dict[str, Any]
    after: str
    on_argv: bool
    project_env: str
    scripts: Scripts | None
    mcp_file: str
    mcp_key: str
    mcp_type: str
    mcp_todo: str
    login_shell: bool  # the agent runs shell commands in a login shell (PATH reset)
    served: tuple[str, ...]  # the events the served gate answers (HTTP hooks)

    def __init__(
        self,
        name: str,
        label: str,
        hook_files: tuple[str, ...],
        events: tuple[str, ...],
        pre: tuple[str, ...],
        entry: Callable[[str, str], dict[str, Any]] | None,
        fallback: Callable[[str], dict[str, Any]],
        todo: tuple[str, ...],
        *,
        refuses: str = "",
        again: str = "",
        skeleton: dict[str, Any] | None = None,
        after: str = "",
        on_argv: bool = False,
        project_env: str = "",
        scripts: Scripts | None = None,
        mcp_file: str = "",
        mcp_key: str = "mcpServers",
        mcp_type: str = "",
        mcp_todo: str = "",
        login_shell: bool = False,
        served: tuple[str, ...] = (),
    ) -> None:
        self._fill(
            *(name, label, hook_files, events, pre, entry, fallback, todo, refuses),
            *(again or f"restart {label}", {} if skeleton is None else skeleton, after),
            *(on_argv, project_env, scripts, mcp_file, mcp_key, mcp_type, mcp_todo),
            login_shell,
            served,
        )


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def nested_entry(matcher: str, command: str, **extra: Any) -> dict[str, Any]:
    """A hook entry in Claude Code's nesting (also Codex's and Gemini CLI's): a matcher
    over tool names and its handlers, here one command."""
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


# -- what several adapters read the same way ------------------------------------------------

# Claude Code's and Codex's events that carry no tool call, and the phase each is (memkeeper's
# channel speaks on them, and after a tool call).
CONTEXT_EVENTS: dict[str, Phase] = {"SessionStart": "start", "UserPromptSubmit": "prompt"}
PHASE_EVENTS = {
    "start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "post": "PostToolUse",
    "failed": "PostToolUseFailure",  # Claude Code's, after a call that failed
}


def context_input(payload: dict[str, Any], phase: Phase, cwd: str) -> HookInput:
    """A SessionStart or UserPromptSubmit call: its session and directory, no tool call."""
    session, where = payload.get("session_id"), payload.get("cwd")
    return HookInput(
        phase,
        (),
        session if isinstance(session, str) else "",
        where if isinstance(where, str) and where else cwd,
    )


def tell(phase: Phase, text: str) -> Answer:
    """``hookSpecificOutput.additionalContext`` on SessionStart, UserPromptSubmit and
    PostToolUse (Claude Code's and Codex's), and Claude Code's PostToolUseFailure — named as
    the event it answers (Claude Code drops it otherwise): it reaches the model, and answers
    no permission."""
    context = {"hookEventName": PHASE_EVENTS.get(phase, "PostToolUse"), "additionalContext": text}
    return Answer(dumps({"hookSpecificOutput": context}))


def absolute(cwd: str, path: str) -> str:
    """``path`` as the tool reaches it: relative ones from ``cwd``, normalised."""
    return os.path.normpath(os.path.join(cwd, path))


def first_string(args: dict[str, Any], keys: tuple[str, ...], tool: str) -> str | None:
    """The first of ``keys`` that ``args`` holds (agents disagree on argument names)."""
    for key in keys:
        value = args.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise BadPayload(f"{tool}: {key} is not a string")
        return value
    return None


def text_field(payload: dict[str, Any], key: str) -> str:
    """A string field of the payload, or "" where it is missing or not a string."""
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def edit_step(step: object, tool: str) -> tuple[str, str, bool]:
    """One ``{old_string|old_str, new_string|new_str, replace_all}`` edit."""
    if not isinstance(step, dict):
        raise BadPayload(f"{tool}: an edit is not an object")
    old = first_string(step, ("old_string", "old_str"), tool) or ""
    new = first_string(step, ("new_string", "new_str"), tool) or ""
    return (old, new, step.get("replace_all") is True)


def file_op_calls(base: ToolCall, op: FileOp, *, add_content: str | None = None) -> list[ToolCall]:
    """One file of an ``apply_patch`` as the core's calls, paths as the patch spells them:
    an added file a Write (of ``add_content``, where the agent writes something else than
    the added lines), an update an Edit of its chunks, a deleted file ``rm -- PATH``, a move
    the Edit then ``mv -- SRC DST``. A chunk with neither context nor removed lines has no
    old text to find: it is left out (an Edit with an empty old string only creates)."""
    path = absolute(base.cwd, op.path)
    if op.kind == "add":
        content = op.content if add_content is None else add_content
        return [base._replace(tool="Write", file_path=path, content=content)]
    if op.kind == "delete":
        return [base._replace(tool="Bash", command=f"rm -- {shlex.quote(op.path)}")]
    edits = tuple((old, new, False) for old, new in op.edits if old)
    out = [base._replace(tool="Edit", file_path=path, edits=edits)]
    if op.move_to is not None:
        move = f"mv -- {shlex.quote(op.path)} {shlex.quote(op.move_to)}"
        out.append(base._replace(tool="Bash", command=move))
    return out

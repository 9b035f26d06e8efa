"""What every agent's adapter is: its payload read into the core's tool calls, the core's
``Decision`` written in its answer format, and its allow on the non-blocking path.

The core (``gate.decide``) speaks one vocabulary, Claude Code's: a ``ToolCall`` is a
``Write`` (a whole file), an ``Edit``/``MultiEdit`` (old → new text), or a ``Bash`` command.
An adapter maps its agent's tools onto those — Codex's ``apply_patch`` becomes one call per
file, a deleted or moved file the ``rm``/``mv`` it amounts to — and answers in its agent's own
format (docs/reference.md §10, /work/shared/AGENT-HOOKS.md). Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from memkeeper.gate.facts import Decision
    from memkeeper.gate.payload import ToolCall

    Phase = Literal["pre", "post", "other"]  # before a tool runs (judge it), after, else


@dataclass(frozen=True, slots=True)
class HookInput:
    """One hook call as the core sees it."""

    phase: Phase
    calls: tuple[ToolCall, ...] = ()
    session: str = ""  # the agent id's suffix: the session id, "/" and a sub-agent's id


@dataclass(frozen=True, slots=True)
class Answer:
    """What the hook process writes and how it exits."""

    stdout: str = ""
    code: int = 0


@dataclass(frozen=True, slots=True)
class Adapter:
    """One agent's protocol: ``sniff`` (is this payload in my shape?), ``parse`` (payload,
    the event named on argv if any, the process's cwd), ``render`` (a PreToolUse decision),
    ``allow`` (the answer that lets the call through: the silent allow, a post-tool event,
    and every failure of memkeeper's own)."""

    name: str
    sniff: Callable[[dict[str, Any]], bool]
    parse: Callable[[dict[str, Any], str | None, str], HookInput]
    render: Callable[[Decision], Answer]
    allow: Callable[[Phase], Answer]


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"

"""Cline's gate: no configuration file, an executable named after the event in
``.clinerules/hooks/`` is the hook (docs/reference.md §4.20; agent-hooks/cline.md section 1).

Cline runs one such file per event and directory, so a hook of the user's already there is
kept as ``EVENT.legacy`` — a name neither of Cline's runners picks up (the SDK takes the
event's name with no extension or one of its script extensions) — and ours runs it first
with the same input: its cancel stands; otherwise memkeeper's answer, unless memkeeper has
nothing to say (no cancel, no notice) and the user's hook has. Uninstalling puts it back.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.gate.agentconf import fallback
from memkeeper.gate.installplan import Edit

if TYPE_CHECKING:
    from memkeeper.gate.installplan import Plan

MARKER = "# memkeeper: Cline's {event} hook, installed by `memkeeper install-hooks cline`"
EVENTS = ("PreToolUse", "PostToolUse")
LEGACY_SUFFIX = ".legacy"

_TEMPLATE = """#!/bin/sh
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


def script(event: str) -> str:
    """The executable ``.clinerules/hooks/EVENT``."""
    missing_answer = fallback("cline") if event == "PreToolUse" else "{}"
    return _TEMPLATE.format(
        marker=MARKER.format(event=event),
        event=event,
        legacy=LEGACY_SUFFIX,
        missing=missing_answer,
    )


def is_ours(data: bytes) -> bool:
    return b"# memkeeper: Cline's " in data and b"memkeeper install-hooks cline" in data


def plan_install(plan: Plan, event: str) -> Edit:
    """Our script at ``.clinerules/hooks/EVENT``, a hook of the user's there moved aside."""
    rel = f".clinerules/hooks/{event}"
    for directory in (".clinerules", ".clinerules/hooks"):
        if (plan.root / directory).exists() and not (plan.root / directory).is_dir():
            raise Invalid(
                f"{directory}: is a file — Cline's hooks live in the directory "
                ".clinerules/hooks/: move the file into .clinerules/ (as .clinerules/rules.md), "
                "then try again",
                path=directory,
            )
    old = plan.read(rel)
    ours = script(event).encode()
    legacy = rel + LEGACY_SUFFIX
    theirs = old is not None and not is_ours(old)
    if theirs and os.path.lexists(plan.root / legacy):
        raise Invalid(
            f"{rel} and {legacy} are both there and neither is memkeeper's — keep one of "
            "them, then try again",
            path=rel,
        )
    edit = Edit(rel, None if theirs else old, ours, True, legacy if theirs else None)
    edit.steps["hooks"] = ours != old
    return edit


def plan_uninstall(plan: Plan, event: str) -> Edit | None:
    """Our script deleted and the user's hook put back; None when ours is not there."""
    rel = f".clinerules/hooks/{event}"
    old = plan.read(rel)
    if old is None or not is_ours(old):
        return None
    legacy = rel + LEGACY_SUFFIX
    restore = legacy if os.path.lexists(plan.root / legacy) else None
    edit = Edit(rel, old, None, restore_from=restore)
    edit.steps["hooks"] = True
    return edit

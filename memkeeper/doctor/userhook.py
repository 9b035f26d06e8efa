"""Claude Code's user-level gate, the one thing ``doctor --fix`` writes (docs/reference.md §4.27).

A session started in a subdirectory of the repository, or above it, reads that directory's
``.claude/`` only: the project's gate does not run. A gate in ``~/.claude/settings.json``
runs in every session; it defers to the project's own where Claude Code reads that one (the
directory the session started in, ``$CLAUDE_PROJECT_DIR``, holds a ``.claude/settings.json``
or ``settings.local.json`` running memkeeper's gate, and is not the home directory, whose
``.claude/settings.json`` is this very file), and otherwise runs ``memkeeper hook
claude-code``, which finds the memory root from the file a call touches. Where memkeeper is
missing it says nothing (it runs for every project of the user, most without memkeeper).

The file is per machine, so the command may name this machine's memkeeper by its path, after
the one on PATH. It is edited as ``install-hooks`` edits the project's (``install.plan``):
memkeeper's entries added or their command updated where they are, every other byte kept, a
symlink refused, nothing overwritten that changed since it was read — so ``--fix`` run twice
changes nothing the second time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.gate.agents.base import nested_entry
from memkeeper.gate.agents.claude_code import MATCHER
from memkeeper.install.jsonhooks import JsonHooks, add_hooks
from memkeeper.install.plan import Plan, report

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

SETTINGS = ".claude/settings.json"  # under the home directory
EVENTS = ("PreToolUse", "PostToolUse")
_UNSAFE = set("'\"$`\\\n")  # what cannot stand inside the script's double quotes
_DEFER = (
    'd="${CLAUDE_PROJECT_DIR:-$(pwd)}"; '
    'if [ "$d" != "$HOME" ] && grep -qs "hook claude-code" "$d/.claude/settings.json" '
    '"$d/.claude/settings.local.json"; then cat >/dev/null; exit 0; fi; '
)


def command(program: str | None) -> str:
    """The user-level gate's ``sh -c`` line: defer to the project's gate where it runs, else
    run memkeeper's (``program``: this machine's memkeeper, tried after PATH)."""
    fallback = f' || m="{program}"' if program and not _UNSAFE & set(program) else " || m="
    find = f"m=$(command -v memkeeper){fallback}; "
    run = '[ -x "$m" ] && exec "$m" hook claude-code; cat >/dev/null; exit 0'
    return f"sh -c '{_DEFER}{find}{run}' memkeeper-user-gate"


def spec(program: str | None) -> JsonHooks:
    line = command(program)
    events: tuple[tuple[str, dict[str, Any]], ...] = tuple(
        (event, nested_entry(MATCHER, line)) for event in EVENTS
    )
    return JsonHooks("claude-code", SETTINGS, events, {})


def install(home: Path, program: str | None) -> dict[str, Any]:
    """Add (or bring up to date) the user-level gate in ``home``'s Claude Code settings."""
    plan = Plan(home)
    wanted = spec(program)
    plan.edit(SETTINGS, "hooks", lambda text: add_hooks(text, wanted))
    plan.apply()
    return {**report(plan, SETTINGS, "hooks"), "path": str(home / SETTINGS)}

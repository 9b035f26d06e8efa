"""The user-level gates ``doctor --fix`` writes, for Claude Code and Gemini CLI
(docs/reference.md §4.30).

Both read a project's settings — and its gate — from the directory a session starts in
only: started in a subdirectory of the repository, or above it, the project's gate does not
run. A gate in the user's settings (``~/.claude/settings.json``, ``~/.gemini/settings.json``)
runs in every session; it defers to the project's own where the agent reads that one (the
directory the session started in — ``$CLAUDE_PROJECT_DIR``; Gemini CLI's hooks run in it — holds
project settings running memkeeper's gate, and is not the home directory, whose settings are
this very file), and otherwise runs ``memkeeper hook AGENT``, which finds the memory root
from the file a call touches. Where memkeeper is missing it says nothing (it runs for every
project of the user, most without memkeeper).

The file is per machine, so the command may name this machine's memkeeper by its path, after
the one on PATH. It is edited as ``install-hooks`` edits the project's (``install.plan``):
memkeeper's entries added or their command updated where they are, every other byte kept, a
symlink refused, nothing overwritten that changed since it was read — so ``--fix`` run twice
changes nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.gate.agents import setup as setup_of
from memkeeper.install.jsonhooks import JsonHooks, add_hooks
from memkeeper.install.plan import Plan, report

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


@dataclass(frozen=True, slots=True)
class UserGate:
    """Where an agent keeps the user's settings, and how a session names its directory."""

    agent: str
    settings: str  # under the home directory
    project_env: str  # the variable naming the directory the session started in ("": cwd)
    project_files: tuple[str, ...]  # the project settings that may run the project's gate


GATES = {
    "claude-code": UserGate(
        "claude-code",
        ".claude/settings.json",
        "CLAUDE_PROJECT_DIR",
        (".claude/settings.json", ".claude/settings.local.json"),
    ),
    # Gemini CLI rewrites $GEMINI_PROJECT_DIR in a command's text (``${…:-…}`` would break);
    # it runs hooks in the session's directory, so that is the working directory.
    "gemini": UserGate("gemini", ".gemini/settings.json", "", (".gemini/settings.json",)),
}
SUFFIX = "memkeeper-user-gate"  # the last word of every user-level gate's command
_UNSAFE = set("'\"$`\\\n")  # what cannot stand inside the script's double quotes


def command(agent: str, program: str | None) -> str:
    """The user-level gate's ``sh -c`` line: defer to the project's gate where it runs, else
    run memkeeper's (``program``: this machine's memkeeper, tried after PATH)."""
    gate = GATES[agent]
    files = " ".join(f'"$d/{rel}"' for rel in gate.project_files)
    start = f"${{{gate.project_env}:-$(pwd)}}" if gate.project_env else "$(pwd)"
    defer = (
        f'd="{start}"; '
        f'if [ "$d" != "$HOME" ] && grep -qs "hook {agent}" {files}; '
        "then cat >/dev/null; exit 0; fi; "
    )
    fallback = f' || m="{program}"' if program and not _UNSAFE & set(program) else " || m="
    find = f"m=$(command -v memkeeper){fallback}; "
    run = f'[ -x "$m" ] && exec "$m" hook {agent}; cat >/dev/null; exit 0'
    return f"sh -c '{defer}{find}{run}' {SUFFIX}"


def spec(agent: str, program: str | None) -> JsonHooks:
    """The entries: the project's (``gate.agents`` setup) around the user-level command,
    named apart from the project's where the agent names its hooks."""
    setup = setup_of(agent)
    line = command(agent, program)
    events = []
    for event in setup.events:
        assert setup.entry is not None  # (both agents' hooks are JSON)
        entry = setup.entry(event, line)
        for handler in entry["hooks"]:
            if "name" in handler:
                handler["name"] = f"memkeeper-user-{event}"
        events.append((event, entry))
    return JsonHooks(agent, GATES[agent].settings, tuple(events), {})


def install(home: Path, agent: str, program: str | None) -> dict[str, Any]:
    """Add (or bring up to date) the user-level gate in ``home``'s settings of ``agent``."""
    plan = Plan(home)
    wanted = spec(agent, program)
    try:
        plan.edit(wanted.rel, "hooks", lambda text: add_hooks(text, wanted))
        plan.apply()
    except (Invalid, EnvironmentFailure) as exc:  # named as the user knows it, not home-relative
        where = str(home / wanted.rel)
        fields = {**exc.fields, "path": where}
        raise type(exc)(exc.message.replace(wanted.rel, where, 1), **fields) from None
    label = setup_of(agent).label
    return {**report(plan, wanted.rel, "hooks"), "path": str(home / wanted.rel), "label": label}

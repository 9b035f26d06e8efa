"""The command that runs an agent's gate, as ``install-hooks`` writes it into the agent's
configuration, and what it answers where memkeeper is missing (docs/reference.md §4.20).

Every file is committed and shared by every clone, so no command names a path of this
machine. Each gate command is ``sh -c 'SCRIPT' memkeeper 'ANSWER'``: the script runs
``memkeeper hook AGENT`` with the ``memkeeper`` on PATH, else the project's
``.venv/bin/memkeeper``; where neither exists it reads the input and prints ``ANSWER`` — the
agent's own *ask* (Claude Code, Copilot) or *deny* (Codex, Gemini CLI, Cursor: they have no
ask that holds for a tool call; Cline's cancel), saying that memkeeper is missing — so the
gate never vanishes silently (a command that is not found is a failed hook, and most agents
let the call through then). On the events Claude Code's http hooks can carry, the script
first steps aside (exit 0, nothing said) when ``memkeeper watch`` serves the gate
(``gate.served``): only in a Claude Code session (``$CLAUDE_CODE_SESSION_ID`` set, so the
other agents reading ``.claude/settings.json`` never skip their gate), only where this machine
configured the served gate (``.memkeeper/gate.json``), and only while the daemon holds
``.memkeeper/gate.lock`` (``flock -n`` exits 75 then); a missing ``flock`` (127) or any other
failure runs the gate as before. The script holds no single quote and no backslash, so it reads
the same to every shell an agent may run it with (Codex uses the user's ``$SHELL``, which
may be fish), and no ``$NAME`` an agent expands itself (Gemini substitutes
``$GEMINI_PROJECT_DIR`` and ``$CLAUDE_PROJECT_DIR`` in commands, and any set ``$NAME`` in its
settings). What differs between agents is their ``Setup`` (``gate.agents``).
"""

from __future__ import annotations

import json

from memkeeper.gate.agents import setup as setup_of

WHERE = "not on PATH, nor in the project .venv"  # where the commands look for memkeeper
MISSING = (
    f"memkeeper is not installed on this machine ({WHERE}), so the memory gate cannot "
    "check this call. Install memkeeper, then {again}; until then approve only calls "
    "that leave CLAUDE.md, AGENTS.md and memory files alone."
)
REFUSED = (
    f"memkeeper is not installed on this machine ({WHERE}), so the memory gate cannot "
    "check this call and {refuses}. Ask the user to install memkeeper, then {again} (the "
    "gate is set up in {file})."
)
TOP = "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"  # the project, in sh
_FIND = 'm=$(command -v memkeeper) || m="{project}/.venv/bin/memkeeper"; '
_PRE = 'grep -c -E "hook_event_name.[ ]*:[ ]*.({events})" >/dev/null'
# Steps aside while memkeeper watch serves the gate (builtins but for flock, run only then).
GUARD = (
    "g=${CLAUDE_PROJECT_DIR:-.}/.memkeeper/gate; "
    'if [ -n "$CLAUDE_CODE_SESSION_ID" ] && [ -e "$g.json" ]; then '
    'flock -n -E 75 "$g.lock" true; [ $? -eq 75 ] && exit 0; fi; '
)


def missing(agent: str) -> str:
    """What the agent's answer says where memkeeper is missing."""
    setup = setup_of(agent)
    if not setup.refuses:
        return MISSING.format(again=setup.again)
    return REFUSED.format(refuses=setup.refuses, again=setup.again, file=setup.hook_files[0])


def fallback(agent: str) -> str:
    """The agent's ask or deny JSON for a pre-tool call while memkeeper is missing."""
    return json.dumps(setup_of(agent).fallback(missing(agent)))


def gate_command(agent: str, event: str | None = None, *, guarded: bool = False) -> str:
    """The portable ``sh -c`` line that runs ``memkeeper hook AGENT`` (``event``: for an
    agent whose payload does not name it; ``guarded``: it steps aside while the gate is
    served over HTTP)."""
    setup = setup_of(agent)
    args = f" --event {event}" if event else ""
    project = "${" + setup.project_env + ":-" + TOP + "}" if setup.project_env else TOP
    run = f'[ -x "$m" ] && exec "$m" hook {setup.name}{args}; '
    pre = _PRE.format(events="|".join(setup.pre))
    if setup.on_argv:
        tail = 'cat >/dev/null; echo "$1"; exit 0' if event in setup.pre else "cat >/dev/null"
    elif setup.after:
        tail = f'if {pre}; then echo "$1"; else echo "{setup.after}"; fi; exit 0'
    else:
        tail = f'{pre} && echo "$1"; exit 0'
    script = (GUARD if guarded else "") + _FIND.format(project=project) + run + tail
    return f"sh -c '{script}' memkeeper '{fallback(agent)}'"

"""The CLI verb ``doctor [AGENT...] [--fix]`` (docs/reference.md §4.30): whether each installed
gate runs as its agent runs it; exit 6 (``Failed``) when one would not, each with its fix.

Cheap to import: the modules doing the work load only when the verb runs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]

_NAMES = "claude-code, codex, gemini, copilot, cline, cursor, or all (default: each installed)"


def add_verbs(verb: Verb) -> None:
    doctor = verb("doctor", "whether each installed gate will run as its agent runs it")
    doctor.add_argument("agents", nargs="*", metavar="AGENT", help=_NAMES)
    doctor.add_argument(
        "--fix",
        action="store_true",
        help="add Claude Code's and Gemini CLI's user-level gates (for sessions started in a "
        "subdirectory or above the repository); the other fixes are printed, not made",
    )


def cmd_doctor(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    import os
    from pathlib import Path

    from memkeeper.doctor import judge, userhook
    from memkeeper.doctor.facts import collect
    from memkeeper.errors import Failed
    from memkeeper.install.hooks import agent_names
    from memkeeper.records import Violation

    named = agent_names(args.agents) if args.agents else []
    facts = collect(memory.root, named)
    fixed = []
    wanted = _user_gates_wanted(facts) if args.fix else []
    for agent in wanted:
        home = Path(os.environ.get("HOME") or Path.home())
        fixed.append(userhook.install(home, agent, _this_memkeeper()))
    if wanted:
        facts = collect(memory.root, named)
    findings = judge.judge(facts)
    payload: dict[str, Any] = {
        "root": str(memory.root),
        "checks": [f.to_json() for f in findings],
        "fixed": fixed,
    }
    failing = judge.failed(findings)
    if failing:
        violations = [Violation(f.path, None, f.check, f.message, f.fix) for f in failing]
        gates = len({f.agent for f in failing})
        raise Failed(
            f"{gates} agent(s) would run without the gate here — each fix follows "
            "(doctor --json lists every check, the passing ones too)",
            violations=violations,
            **payload,
        )
    return payload


def _user_gates_wanted(facts: Any) -> list[str]:
    """The agents asked about, with a gate installed, that lack their user-level gate."""
    from memkeeper.doctor.userhook import GATES

    installed = {agent for agent, _ in facts.gates}
    asked = set(facts.named) or installed
    return [a for a in GATES if a in asked & installed and a not in facts.user_gates]


def _this_memkeeper() -> str | None:
    """This machine's memkeeper, by its absolute path: the script running, else PATH's."""
    import os
    import shutil
    import sys

    script = os.path.abspath(sys.argv[0])
    if os.path.basename(script) == "memkeeper" and os.access(script, os.X_OK):
        return script
    return shutil.which("memkeeper")


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "doctor": cmd_doctor,
}

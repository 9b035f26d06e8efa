"""The CLI verbs for hooks (docs/reference.md §4, §7, §10): ``hook AGENT`` and ``install-hooks``.

``hook`` is not an ordinary verb: it speaks the agent's own protocol on stdin and stdout and
exits as that agent expects, so ``cli.main`` hands it the raw streams instead of printing a
payload.
Cheap to import: the modules doing the work load only when a verb runs.
"""

from __future__ import annotations

import sys

from memkeeper.gate.agents import AGENTS

HOOK_KINDS = AGENTS  # the agents `hook` speaks for

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare the verbs with ``verb(name, help)`` (which adds the common options)."""
    hook = verb("hook", "an agent's gate: its hook JSON on stdin, its answer on stdout")
    hook.add_argument("kind", choices=HOOK_KINDS, metavar="AGENT", help=", ".join(HOOK_KINDS))
    hook.add_argument("--event", help="the hook's event, for agents that do not send it")
    install = verb("install-hooks", "install the git pre-commit hook (keeping an existing one)")
    install.add_argument(
        "--claude-code", action="store_true", help="also add the gate to .claude/settings.json"
    )


def run_hook(args: argparse.Namespace) -> int:
    """``memkeeper hook AGENT``: the exit code that agent reads (a failure of memkeeper's own
    is that agent's allow)."""
    from memkeeper.gate.hook import run

    streams = (sys.stdin.buffer, sys.stdout, sys.stderr)
    return run(args.kind, args.root, args.agent, *streams, event=args.event)


def cmd_install_hooks(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.gate.install import install

    return install(memory.root, claude_code=args.claude_code)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "install-hooks": cmd_install_hooks,
}

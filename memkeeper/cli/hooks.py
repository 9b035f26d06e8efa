"""The CLI verbs for hooks (docs/reference.md §4, §7): ``hook claude-code`` and ``install-hooks``.

``hook`` is not an ordinary verb: it speaks Claude Code's protocol on stdin and stdout and
always exits 0, so ``cli.main`` hands it the raw streams instead of printing a payload.
Cheap to import: the modules doing the work load only when a verb runs.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from memkeeper.api import Memory

    Verb = Callable[[str, str], argparse.ArgumentParser]

HOOK_KINDS = ("claude-code",)


def add_verbs(verb: Verb) -> None:
    """Declare the verbs with ``verb(name, help)`` (which adds the common options)."""
    hook = verb("hook", "Claude Code gate: hook JSON on stdin, decision JSON on stdout")
    hook.add_argument("kind", choices=HOOK_KINDS)
    install = verb("install-hooks", "install the git pre-commit hook (keeping an existing one)")
    install.add_argument(
        "--claude-code", action="store_true", help="also add the gate to .claude/settings.json"
    )


def run_hook(args: argparse.Namespace) -> int:
    """``memkeeper hook claude-code``: always 0 (a failure of its own allows the call)."""
    from memkeeper.gate.hook import run

    return run(args.kind, args.root, args.agent, sys.stdin.buffer, sys.stdout, sys.stderr)


def cmd_install_hooks(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.gate.install import install

    return install(memory.root, claude_code=args.claude_code)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "install-hooks": cmd_install_hooks,
}

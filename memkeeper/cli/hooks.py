"""The CLI verbs for hooks (docs/reference.md §4, §7, §10): ``hook AGENT``,
``install-hooks [AGENT...]`` and ``uninstall-hooks [AGENT...]``.

The agents to install for are positional (``all``: every one), since ``--agent`` is every
command's identity option: ``install-hooks --agent all`` is refused with the spelling meant.

``hook`` is not an ordinary verb: it speaks the agent's own protocol on stdin and stdout and
exits as that agent expects, so ``cli.main`` hands it the raw streams instead of printing a
payload.
Cheap to import: the modules doing the work load only when a verb runs.
"""

from __future__ import annotations

import sys

from memkeeper.gate.agents import AGENTS

HOOK_KINDS = AGENTS  # the agents `hook` speaks for
# fs.agentfiles.AGENTS, spelled out: `hook`, on every tool call, need not import it
_NAMES = "claude-code, codex, gemini, copilot, cline, cursor, or all"

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
    install = verb(
        "install-hooks", "install the git pre-commit hook and each AGENT's gate (in the project)"
    )
    install.add_argument("agents", nargs="*", metavar="AGENT", help=_NAMES)
    install.add_argument("--claude-code", action="store_true", help="the same as claude-code")
    install.add_argument(
        "--mcp", action="store_true", help="also register `memkeeper mcp` for each AGENT"
    )
    install.add_argument(
        "--served",
        action="store_true",
        help="claude-code: also its http hooks, answered by memkeeper watch (this machine)",
    )
    uninstall = verb(
        "uninstall-hooks", "remove what install-hooks added (no AGENT: all of it, git hook too)"
    )
    uninstall.add_argument("agents", nargs="*", metavar="AGENT", help=_NAMES)
    uninstall.add_argument(
        "--served", action="store_true", help="claude-code: only the gate served by watch"
    )
    filter_ = verb("filter", "git's clean filter for generated pages (git runs it, not you)")
    filter_.add_argument("direction", choices=("clean",), help="clean: stdin to what git stores")
    filter_.add_argument("path", metavar="PATH", help="the file's path, as git gives it (%%f)")


def run_hook(args: argparse.Namespace) -> int:
    """``memkeeper hook AGENT``: the exit code that agent reads (a failure of memkeeper's own
    is that agent's allow)."""
    from memkeeper.gate.hook import run

    streams = (sys.stdin.buffer, sys.stdout, sys.stderr)
    return run(args.kind, args.root, args.agent, *streams, event=args.event)


def run_filter(args: argparse.Namespace) -> int:
    """``memkeeper filter clean PATH``: the page on stdin, what git stores on stdout."""
    from memkeeper.cli.gitfilter import run_clean

    return run_clean(args.path, sys.stdin.buffer, sys.stdout.buffer)


def cmd_install_hooks(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.errors import Invalid
    from memkeeper.fs.agentfiles import AGENTS as INSTALLABLE
    from memkeeper.install.hooks import agent_names, install

    names = [*args.agents, *(["claude-code"] if args.claude_code else [])]
    if not names and getattr(args, "agent", None) in (*INSTALLABLE, "all"):
        raise Invalid(
            "--agent names who is acting, not the agents to install for (they are "
            f"positional) — run: memkeeper install-hooks {args.agent}"
        )
    if args.mcp and not names:
        raise Invalid(
            "--mcp registers the server for the agents named — run: memkeeper "
            "install-hooks AGENT... --mcp"
        )
    return install(memory.root, agent_names(names), mcp=args.mcp, served=args.served)


def cmd_uninstall_hooks(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    from memkeeper.install.hooks import agent_names, uninstall

    names = agent_names(args.agents)
    if args.served:
        from memkeeper.errors import Invalid
        from memkeeper.install.served import uninstall_served

        if names != ["claude-code"]:
            raise Invalid(
                "--served takes out Claude Code's served gate alone — run: memkeeper "
                "uninstall-hooks claude-code --served"
            )
        return uninstall_served(memory.root)
    everything = not args.agents or "all" in args.agents
    return uninstall(memory.root, None if everything else names)


COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], dict[str, Any]]] = {
    "install-hooks": cmd_install_hooks,
    "uninstall-hooks": cmd_uninstall_hooks,
}

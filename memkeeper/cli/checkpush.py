"""``memkeeper check`` on the command line: ``--push`` reads git's pre-push input from stdin
(or the pre-commit framework's variables), and the claims' warnings (an advisory claim over
the commit) go to stderr, where git shows a hook's words, whatever the output format."""

from __future__ import annotations

import sys

from memkeeper.errors import Failed, Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from memkeeper.api import Memory
    from memkeeper.ops.commitguard import Pushed


def run_check(memory: Memory, args: argparse.Namespace) -> dict[str, Any]:
    push, remote = None, None
    if args.push:
        if args.staged or args.paths:
            raise Invalid(
                "check --push judges the commits git pushes (its pre-push input on stdin) — "
                "give it no PATH and no --staged"
            )
        push, remote = _pushed(args.remote)
    elif args.remote is not None:
        raise Invalid("--remote goes with --push — run: memkeeper check --push --remote NAME")
    if args.full and (args.staged or args.push):
        raise Invalid(
            "--full reads the working tree's files again; --staged and --push judge what git "
            "holds, which is always read — leave --full out"
        )
    try:
        payload = memory.check(
            args.paths, staged=args.staged, push=push, remote=remote, full=args.full
        )
    except Failed as exc:
        _warn(getattr(exc, "claim_warnings", ()))
        raise
    _warn(payload.get("claim_warnings", ()))
    return payload


def _pushed(remote: str | None) -> tuple[list[Pushed], str | None]:
    """What is pushed: git's pre-push input on stdin or, under the pre-commit framework (which
    reads that input itself), the first ref's range it names in ``$PRE_COMMIT_*``."""
    import os

    from memkeeper.ops.commitguard import Pushed, parse_pushed

    env = os.environ
    # (no TO_REF with a LOCAL_BRANCH: the framework pushes a branch down to its root commit)
    local = env.get("PRE_COMMIT_TO_REF") or env.get("PRE_COMMIT_LOCAL_BRANCH")
    if not local:
        return parse_pushed(sys.stdin.read()), remote
    line = Pushed(
        env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD",
        local,
        env.get("PRE_COMMIT_REMOTE_BRANCH") or "HEAD",
        env.get("PRE_COMMIT_FROM_REF") or "0" * 40,
    )
    return [line], remote or env.get("PRE_COMMIT_REMOTE_NAME")


def _warn(warnings: Any) -> None:
    for warning in warnings:
        print(f"memkeeper: warning: {warning}", file=sys.stderr)


def push_lines(p: dict[str, Any]) -> list[str]:
    """What ``install-hooks`` or ``uninstall-hooks`` did to the pre-push hook, for people."""
    hook = p.get("push_hook")
    if hook is None:
        return []
    if "push_hook_changed" in p:
        done = "installed" if p["push_hook_changed"] else "already installed"
        lines = [f"git pre-push hook {done}: {hook} (runs memkeeper check --push)"]
        if p["push_legacy_hook"]:
            kept = "moved the existing hook to" if p["push_moved_existing_hook"] else "runs first:"
            lines.append(f"  {kept} {p['push_legacy_hook']}")
        return lines
    done = "removed:" if p["push_hook_removed"] else "- nothing of memkeeper's at"
    lines = [f"git pre-push hook {done} {hook}"]
    if p["push_legacy_hook_restored"]:
        lines.append("  put back the hook it had moved to pre-push.legacy")
    return lines

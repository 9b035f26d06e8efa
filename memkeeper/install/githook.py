"""The git pre-commit hook ``install-hooks`` writes: it runs ``memkeeper check --staged``
(docs/reference.md §4.20).

As pre-commit does, it keeps a hook that was there before as ``pre-commit.legacy`` and runs
it first; re-installing rewrites only our own hook, so nothing nests. It names the
interpreter memkeeper is installed in (found even when no virtualenv is active, from an IDE
or a git GUI), falling back to ``memkeeper`` on PATH if that interpreter is gone. The hooks
directory comes from ``git rev-parse --git-path hooks``: right in linked worktrees and with
``core.hooksPath``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs import atomic
from memkeeper.fs.git import Runner, run_git

if TYPE_CHECKING:
    from typing import Any

MARKER = "# memkeeper: pre-commit hook, installed by `memkeeper install-hooks`"
LEGACY = "pre-commit.legacy"

HOOK_TEMPLATE = """#!/bin/sh
{marker}
# Runs the hook that was here before (kept as {legacy}), then `memkeeper check --staged`.
# Delete this file to uninstall (and rename {legacy} back, if there is one).
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/{legacy}" ]; then
    "$here/{legacy}" "$@" || exit $?
fi
python={python}
if [ -x "$python" ]; then
    exec "$python" -P -m memkeeper check --staged
elif command -v memkeeper >/dev/null 2>&1; then
    exec memkeeper check --staged
fi
echo "memkeeper: not found (it was installed in $python) - install it, then run" \\
    "memkeeper install-hooks again" >&2
exit 1
"""


def hooks_dir(root: Path, run: Runner = run_git) -> Path:
    code, out = run(["rev-parse", "--git-path", "hooks"], root)
    if code != 0:
        raise Invalid(f"{root}: not a git repository — run git init, then install-hooks")
    return root / os.fsdecode(out.strip())


def hook_script(python: str) -> str:
    return HOOK_TEMPLATE.format(marker=MARKER, legacy=LEGACY, python=shlex.quote(python))


def install_git_hook(hooks: Path, python: str) -> dict[str, Any]:
    """Write our pre-commit hook, moving a foreign one to ``pre-commit.legacy`` first."""
    hooks.mkdir(parents=True, exist_ok=True)
    hook, legacy = hooks / "pre-commit", hooks / LEGACY
    script = hook_script(python).encode()
    old = hook.read_bytes() if hook.is_file() else None
    moved = os.path.lexists(hook) and (old is None or MARKER.encode() not in old)
    if moved:
        os.replace(hook, legacy)
    if old != script or moved:
        atomic.atomic_write(hooks, "pre-commit", script)
    hook.chmod(0o755)
    return {
        "git_hook": str(hook),
        "legacy_hook": str(legacy) if legacy.exists() else None,
        "moved_existing_hook": moved,
        "git_hook_changed": old != script or moved,
    }


def uninstall_git_hook(hooks: Path) -> dict[str, Any]:
    """Delete our pre-commit hook and put back the one it moved; a foreign hook stays."""
    hook, legacy = hooks / "pre-commit", hooks / LEGACY
    ours = hook.is_file() and not hook.is_symlink() and MARKER.encode() in hook.read_bytes()
    if ours:
        hook.unlink()
    restored = ours and os.path.lexists(legacy)
    if restored:
        os.replace(legacy, hook)
    return {"git_hook": str(hook), "git_hook_removed": ours, "legacy_hook_restored": restored}

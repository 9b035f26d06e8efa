"""The git hooks ``install-hooks`` writes (docs/reference.md §4.20): ``pre-commit`` runs
``memkeeper check --staged``, ``pre-push`` runs ``memkeeper check --push`` on git's pre-push
input (the claims guard, ``ops.commitguard``).

As pre-commit does, each keeps a hook that was there before as ``NAME.legacy`` and runs it
first (a pre-push hook hands it the same input); re-installing rewrites only our own hook,
so nothing nests, and never overwrites a ``NAME.legacy`` (a second foreign hook is refused).
Each hook is replaced by a compare-and-swap on its bytes (``install.hookswap``): a save made
by someone else meanwhile is kept, never overwritten. It names the
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
from memkeeper.fs.git import Runner, run_git
from memkeeper.install import hookswap

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


PUSH_MARKER = "# memkeeper: pre-push hook, installed by `memkeeper install-hooks`"
PUSH_LEGACY = "pre-push.legacy"

PUSH_TEMPLATE = """#!/bin/sh
{marker}
# Runs the hook that was here before (kept as {legacy}) on git's input, then
# `memkeeper check --push` on it. Delete this file to uninstall (and rename {legacy} back,
# if there is one).
here=$(cd "$(dirname "$0")" && pwd)
refs=$(cat)
if [ -x "$here/{legacy}" ]; then
    printf '%s\\n' "$refs" | "$here/{legacy}" "$@" || exit $?
fi
python={python}
if [ -x "$python" ]; then
    printf '%s\\n' "$refs" | "$python" -P -m memkeeper check --push --remote "$1"
    exit $?
elif command -v memkeeper >/dev/null 2>&1; then
    printf '%s\\n' "$refs" | memkeeper check --push --remote "$1"
    exit $?
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


def push_script(python: str) -> str:
    return PUSH_TEMPLATE.format(marker=PUSH_MARKER, legacy=PUSH_LEGACY, python=shlex.quote(python))


def install_git_hook(hooks: Path, python: str) -> dict[str, Any]:
    """Write our pre-commit and pre-push hooks, moving a foreign one to ``NAME.legacy``
    first; each a compare-and-swap on the hook's bytes (``install.hookswap``). Refused, with
    nothing written, when a foreign hook would have to replace an existing ``NAME.legacy``."""
    hooks.mkdir(parents=True, exist_ok=True)
    check_git_hooks(hooks)
    hook, legacy, moved, changed = _install(hooks, "pre-commit", MARKER, hook_script(python))
    push = _install(hooks, "pre-push", PUSH_MARKER, push_script(python))
    return {
        "git_hook": hook,
        "legacy_hook": legacy,
        "moved_existing_hook": moved,
        "git_hook_changed": changed,
        **dict(zip(_PUSH_KEYS, push, strict=True)),
    }


_PUSH_KEYS = ("push_hook", "push_legacy_hook", "push_moved_existing_hook", "push_hook_changed")
_HOOKS = (("pre-commit", MARKER), ("pre-push", PUSH_MARKER))


def check_git_hooks(hooks: Path) -> None:
    """``Refused`` if installing would have to overwrite a ``NAME.legacy``, ``Invalid`` if a
    hook's name is a directory (nothing written)."""
    for name, marker in _HOOKS:
        hook, legacy = hooks / name, hooks / f"{name}.legacy"
        if hook.is_dir() and not hook.is_symlink():
            raise Invalid(f"{hook} is a directory, not a hook — move it away, then run: "
                          "memkeeper install-hooks")  # fmt: skip
        if _foreign(hookswap.seen(hook), marker) and os.path.lexists(legacy):
            raise hookswap.legacy_exists(hook, legacy)


def _foreign(seen: hookswap.Seen, marker: str) -> bool:
    exists, data = seen
    return exists and (data is None or marker.encode() not in data)


def _install(hooks: Path, name: str, marker: str, text: str) -> tuple[str, str | None, bool, bool]:
    """Our hook ``name`` written; (its path, the legacy hook's, moved one, changed)."""
    hook, legacy = hooks / name, hooks / f"{name}.legacy"
    script = text.encode()
    old = hookswap.seen(hook)
    moved = _foreign(old, marker)
    changed = old[1] != script or moved
    if changed:
        hookswap.swap(hook, old, script, legacy if moved else None)
    else:
        hook.chmod(0o755)
    return str(hook), str(legacy) if legacy.exists() else None, moved, changed


def uninstall_git_hook(hooks: Path) -> dict[str, Any]:
    """Delete our hooks and put back the ones they moved; a foreign hook stays."""
    hook, removed, restored = _uninstall(hooks, "pre-commit", MARKER)
    push, push_removed, push_restored = _uninstall(hooks, "pre-push", PUSH_MARKER)
    return {
        "git_hook": hook,
        "git_hook_removed": removed,
        "legacy_hook_restored": restored,
        "push_hook": push,
        "push_hook_removed": push_removed,
        "push_legacy_hook_restored": push_restored,
    }


def _uninstall(hooks: Path, name: str, marker: str) -> tuple[str, bool, bool]:
    hook, legacy = hooks / name, hooks / f"{name}.legacy"
    ours = hook.is_file() and not hook.is_symlink() and marker.encode() in hook.read_bytes()
    if ours:
        hook.unlink()
    restored = ours and os.path.lexists(legacy)
    if restored:
        os.replace(legacy, hook)
    return str(hook), ours, restored

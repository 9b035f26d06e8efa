"""``memkeeper install-hooks``: the git pre-commit hook and the Claude Code gate's settings.

The git hook runs ``memkeeper check --staged``. As pre-commit does, it keeps a hook that was
there before as ``pre-commit.legacy`` and runs it first; re-installing rewrites only our own
hook, so nothing nests. It names the interpreter memkeeper is installed in (found even when
no virtualenv is active, from an IDE or a git GUI), falling back to ``memkeeper`` on PATH if
that interpreter is gone. The hooks directory comes from ``git rev-parse --git-path hooks``:
right in linked worktrees and with ``core.hooksPath``.

``--claude-code`` merges the PreToolUse and PostToolUse entries into ``.claude/settings.json``
(a file teams commit), keeping every other key and hook and the file's indentation; an entry
already there is updated in place. The file is shared by every clone, so its command names
no path of this machine (``CLAUDE_COMMAND``): it runs ``memkeeper`` from PATH, else the
project's ``.venv/bin/memkeeper`` (``$CLAUDE_PROJECT_DIR`` is the project's directory, as
Claude Code sets it). Where neither exists the gate is not silently gone (Claude Code ignores
a hook command that fails): each PreToolUse call gets an ``ask`` saying memkeeper is missing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from memkeeper.errors import Invalid
from memkeeper.fs import files as fsio
from memkeeper.fs.git import Runner, run_git

MARKER = "# memkeeper: pre-commit hook, installed by `memkeeper install-hooks`"
LEGACY = "pre-commit.legacy"
SETTINGS = ".claude/settings.json"
MATCHER = "Edit|MultiEdit|Write|Bash"
EVENTS = ("PreToolUse", "PostToolUse")
_OURS = re.compile(r"\bmemkeeper\b.*\bhook\s+claude-code\b")
MISSING = (
    "memkeeper is not installed on this machine (not on PATH, nor in the project .venv), so "
    "the memory gate cannot check this call. Install memkeeper, then restart Claude Code; "
    "until then approve only calls that leave CLAUDE.md, AGENTS.md and memory files alone."
)
_ASK = json.dumps(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": MISSING,
        }
    }
)
# POSIX sh, as Claude Code runs it. Found: exec the gate; not found: read the input, and
# answer a PreToolUse call with an ask (PostToolUse: nothing to say).
CLAUDE_COMMAND = (
    'm=$(command -v memkeeper || echo "$CLAUDE_PROJECT_DIR/.venv/bin/memkeeper"); '
    '[ -x "$m" ] || { grep -c \'"hook_event_name" *: *"PreToolUse"\' >/dev/null && '
    f"printf '%s\\n' '{_ASK}'; exit 0; }}; "
    'exec "$m" hook claude-code'
)

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


def install(
    root: Path, *, claude_code: bool, python: str = sys.executable, run: Runner = run_git
) -> dict[str, Any]:
    """Install the git hook (and the Claude Code settings); what was done, for the CLI."""
    hooks = hooks_dir(root, run)
    payload: dict[str, Any] = {"root": str(root), **install_git_hook(hooks, python)}
    if claude_code:
        payload.update(install_settings(root, CLAUDE_COMMAND))
    return payload


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
        fsio.atomic_write(hooks, "pre-commit", script)
    hook.chmod(0o755)
    return {
        "git_hook": str(hook),
        "legacy_hook": str(legacy) if legacy.exists() else None,
        "moved_existing_hook": moved,
        "git_hook_changed": old != script or moved,
    }


def install_settings(root: Path, command: str) -> dict[str, Any]:
    path = root / SETTINGS
    old = path.read_text(encoding="utf-8") if path.exists() else None
    new = merge_settings(old, command, str(path))
    if new != old:
        path.parent.mkdir(parents=True, exist_ok=True)
        fsio.atomic_write(root, SETTINGS, new.encode("utf-8"))
    return {"claude_settings": str(path), "claude_command": command, "settings_changed": new != old}


def merge_settings(text: str | None, command: str, where: str = SETTINGS) -> str:
    """``text`` (a settings.json, or None) with the gate's hooks added or updated. Pure."""
    settings = _load(text, where)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise Invalid(f'{where}: "hooks" is not an object — fix it, then install-hooks again')
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise Invalid(f'{where}: "hooks".{event} is not a list — fix it, then try again')
        _ensure(groups, command)
    return json.dumps(settings, indent=_indent(text), ensure_ascii=False) + "\n"


def _load(text: str | None, where: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Invalid(
            f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}) — fix it, then "
            "run memkeeper install-hooks --claude-code again",
            path=where,
            line=exc.lineno,
        ) from None
    if not isinstance(settings, dict):
        raise Invalid(f"{where}: not a JSON object — fix it, then try again", path=where)
    return settings


def _ensure(groups: list[Any], command: str) -> None:
    """Our hook in ``groups`` once: updated where it is, else added as a group of its own."""
    for group in groups:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and _OURS.search(str(hook.get("command", ""))):
                hook["command"] = command
                return
    groups.append({"matcher": MATCHER, "hooks": [{"type": "command", "command": command}]})


def _indent(text: str | None) -> int | str:
    found = re.search(r"\n([ \t]+)\S", text or "")
    if found is None:
        return 2
    return "\t" if found.group(1).startswith("\t") else len(found.group(1))

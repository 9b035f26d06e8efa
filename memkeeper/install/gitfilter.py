"""The clean filter ``install-hooks`` sets up (docs/reference.md §4.20, §4.32): live regions
invisible to git.

Two things, both idempotent, both taken out by ``uninstall-hooks``:

- in the root's ``.gitattributes``, between two marker lines, ``GLOB filter=memkeeper`` for
  each ``generated`` rule whose ``git`` is ``placeholder`` (the policy's own globs: git reads
  them as it reads ``.gitignore``; a glob ending in ``/`` is written ``GLOB/**``, since an
  attribute on a directory does not reach the files below it). The block is rewritten when
  the policy's rules change; every other line is the user's and stays as it is;
- in the repository's config, ``filter.memkeeper.clean`` — the interpreter memkeeper is
  installed in, running ``memkeeper filter clean %f``. No smudge command: git writes what
  it stores, and the daemon (or ``regen``) renders it. The filter is not ``required``: a
  clone without memkeeper ignores the attribute and shows the stored form, a valid page;
- ``core.trustctime`` false, unless the user set it (``_ctime_untrusted``).
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.fs import atomic
from memkeeper.fs.git import Runner, run_git
from memkeeper.policy.loader import load_policy

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from memkeeper.policy.model import Policy

ATTRIBUTES = ".gitattributes"
FILTER = "memkeeper"
BEGIN = "# memkeeper: live regions of generated pages are stored as a placeholder (install-hooks)"
END = "# memkeeper: end"
TRUSTCTIME = "core.trustctime"
OURS = f"filter.{FILTER}.trustctime-off"  # set beside the filter when memkeeper turned it off


def patterns(policy: Policy) -> list[str]:
    """The attribute patterns for the policy's ``git: placeholder`` generated rules, once each."""
    found: list[str] = []
    for rule in policy.rules:
        if rule.file_class == "generated" and rule.git == "placeholder":
            glob = rule.path + "**" if rule.path.endswith("/") else rule.path
            if glob not in found:
                found.append(glob)
    return found


def block(globs: Sequence[str]) -> str:
    """memkeeper's lines of ``.gitattributes`` (empty without a glob)."""
    if not globs:
        return ""
    lines = [BEGIN, *(f"{_quoted(glob)} filter={FILTER}" for glob in globs), END]
    return "\n".join(lines) + "\n"


def with_block(text: str, new: str) -> str:
    """``text`` (a ``.gitattributes``) with memkeeper's block replaced by ``new`` — in the
    same place, or added at the end; every other line as it was."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BEGIN]
    if not starts:
        if not new:
            return text
        return text + ("\n" if text and not text.endswith("\n") else "") + new
    first = starts[0]
    ends = [i for i, line in enumerate(lines) if i > first and line.rstrip("\r\n") == END]
    last = ends[0] if ends else len(lines) - 1
    return "".join(lines[:first]) + new + "".join(lines[last + 1 :])


def install_filter(root: Path, python: str, run: Runner = run_git) -> dict[str, Any]:
    """The attributes for the policy's pages and the filter's command in git's config."""
    globs = patterns(load_policy(root))
    changed = _rewrite(root, block(globs))
    command = f"{shlex.quote(python)} -P -m memkeeper filter clean %f"
    key = f"filter.{FILTER}.clean"
    code, out = run(["config", "--get", key], root)
    configured = code == 0 and out.decode("utf-8", "replace").strip() == command
    if not configured:
        code, _ = run(["config", key, command], root)
        if code != 0:
            raise EnvironmentFailure(f"{root}: git config {key} failed — run it by hand: {command}")
    return {
        "attributes": str(root / ATTRIBUTES),
        "filtered": globs,
        "attributes_changed": changed,
        "filter_command": command,
        "filter_changed": not configured,
        "trustctime_off": _ctime_untrusted(root, run),
    }


def _ctime_untrusted(root: Path, run: Runner) -> bool:
    """``core.trustctime`` false, unless the user set it (noted in memkeeper's own section,
    so that ``uninstall_filter`` takes out only what this put in): a live page's current file
    is linked aside while its new version is staged (``fs.atomic``'s kept link), which moves
    its change time but not its content, size or modification time — git would call the page
    changed, and a checkout refuse it, for that moment. True when it is memkeeper's."""
    code, out = run(["config", "--get", TRUSTCTIME], root)
    if code == 0:
        return out.strip() == b"false" and run(["config", "--get", OURS], root)[0] == 0
    for args in (["config", TRUSTCTIME, "false"], ["config", OURS, "true"]):
        if run(args, root)[0] != 0:
            raise EnvironmentFailure(
                f"{root}: git config {' '.join(args[1:])} failed — run it by hand"
            )
    return True


def uninstall_filter(root: Path, run: Runner = run_git) -> dict[str, Any]:
    """memkeeper's block out of ``.gitattributes`` (the file deleted when nothing else is
    left in it) and its section out of git's config."""
    changed = _rewrite(root, "")
    if run(["config", "--get", OURS], root)[0] == 0:  # core.trustctime is memkeeper's
        run(["config", "--unset", TRUSTCTIME], root)
    code, _ = run(["config", "--remove-section", f"filter.{FILTER}"], root)
    return {"attributes": str(root / ATTRIBUTES), "attributes_changed": changed,
            "filter_removed": code == 0}  # fmt: skip


def _rewrite(root: Path, new: str) -> bool:
    path = root / ATTRIBUTES
    if path.is_symlink():
        raise Invalid(f"{path}: a symlink — memkeeper edits only a regular .gitattributes")
    try:
        old = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        old = ""
    except UnicodeDecodeError as exc:
        raise Invalid(f"{path}: not UTF-8 — save it as UTF-8, then run the command again") from exc
    text = with_block(old, new)
    if text == old:
        return False
    if text.strip():
        atomic.atomic_write(root, ATTRIBUTES, text.encode("utf-8"))
    else:
        os.unlink(path)
    return True


def _quoted(glob: str) -> str:
    """A pattern as ``.gitattributes`` reads it: in double quotes when it has a blank."""
    if not any(ch.isspace() or ch in '"\\' for ch in glob):
        return glob
    return '"' + glob.replace("\\", "\\\\").replace('"', '\\"') + '"'

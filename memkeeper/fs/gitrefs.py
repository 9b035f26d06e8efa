"""Where a claim's work lands in git, read from git's files (no ``git`` process: the watchdog
asks often): the commit its branch points to and the one its worktree has checked out."""

from __future__ import annotations

import os

from memkeeper.fs.git import _read, git_dir, head_of


def tips(worktree: str, branch: str) -> tuple[str, str]:
    """The commit of ``refs/heads/BRANCH`` (empty: no such branch, or no ``branch``) and the
    worktree's ``HEAD`` commit (empty outside a repository, or before the first commit)."""
    found = git_dir(worktree)
    if found is None:
        return "", ""
    head = head_of(worktree)[1]
    if not branch:
        return "", head
    common = found
    commondir = _read(os.path.join(found, "commondir"))
    if commondir:
        common = os.path.normpath(os.path.join(found, commondir))
    ref = f"refs/heads/{branch}"
    commit = _read(os.path.join(common, ref))
    if not commit:
        packed = _read(os.path.join(common, "packed-refs"))
        line = next((ln for ln in packed.splitlines() if ln.endswith(" " + ref)), "")
        commit = line.partition(" ")[0]
    return commit, head

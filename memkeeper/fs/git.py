"""The few git questions ``check`` asks, through an injectable runner (tests pass a fake).

``fs/root.py`` reads git's files directly to stay fast on the hot path; these need git's object
store and index (``git show HEAD:path``, ``git show :path``, the staged and deleted file
lists), so they run the ``git`` executable. Inside a pre-commit hook git sets
``GIT_INDEX_FILE`` and friends; the runner passes the environment through, so the hook's view
of the index is the one judged.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from memkeeper.errors import EnvironmentFailure

Runner = Callable[[Sequence[str], Path], tuple[int, bytes]]


def run_git(args: Sequence[str], cwd: Path) -> tuple[int, bytes]:
    """Run ``git ARGS`` in ``cwd``; its exit code and stdout."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise EnvironmentFailure(f"cannot run git: {exc.strerror} — install git") from exc
    return done.returncode, done.stdout


class Git:
    """One repository's working tree, index and HEAD, as ``check`` needs them."""

    def __init__(self, root: Path, run: Runner = run_git) -> None:
        self.root = root
        self._run = run

    def is_repo(self) -> bool:
        code, out = self._run(["rev-parse", "--is-inside-work-tree"], self.root)
        return code == 0 and out.strip() == b"true"

    def show(self, spec: str) -> bytes | None:
        """``HEAD:path`` (committed) or ``:path`` (staged) bytes; ``None`` if there are none."""
        code, out = self._run(["show", spec], self.root)
        return out if code == 0 else None

    def head(self, path: str) -> bytes | None:
        """The committed bytes of ``path`` (relative to the root, which may lie below the top
        of the repository: ``./`` makes git read it so)."""
        return self.show(f"HEAD:./{path}")

    def wrote(self, path: str) -> bool:
        """Whether ``path`` is tracked and its file is as git last wrote or recorded it (the
        index's stat data still match: a checkout, a pull or a reset put it there, and nobody
        saved it since — or ``git status`` found a save that left the bytes as they were)."""
        code, out = self._run(["ls-files", "-z", "--", f"./{path}"], self.root)
        if code != 0 or not out.strip(b"\0"):
            return False
        code, _ = self._run(["diff-files", "--quiet", "--", f"./{path}"], self.root)
        return code == 0

    def staged_blob(self, path: str) -> bytes | None:
        return self.show(f":./{path}")

    def staged(self) -> list[str]:
        """Paths under the root added, copied, modified, renamed or retyped in the index
        against HEAD, relative to the root."""
        args = ["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=ACMRT"]
        args.append("--relative")
        code, out = self._run(args, self.root)
        if code != 0:  # no HEAD yet: everything in the index is staged
            code, out = self._run(["ls-files", "--cached", "-z"], self.root)
        if code != 0:
            raise EnvironmentFailure(f"{self.root}: git cannot list the staged files")
        return _names(out)

    def deleted(self, *, staged: bool) -> list[str]:
        """Paths under the root that HEAD holds and the index (``staged``) or the working
        tree no longer does, relative to the root — a rename deletes its old path; none
        before the first commit. (A path removed from the index only, still on disk, counts
        for the working tree too: git compares HEAD with the tracked files.)"""
        where = ["--cached"] if staged else []
        args = ["diff", *where, "--name-only", "-z", "--no-renames", "--diff-filter=D"]
        code, out = self._run([*args, "--relative", "HEAD", "--"], self.root)
        return _names(out) if code == 0 else []

    def changed_since(self, base: str) -> list[str]:
        """Files of the working tree that differ from commit ``base`` (committed since, staged
        or not) and untracked files git does not ignore, relative to the top."""
        code, out = self._run(["diff", "--name-only", "-z", "--no-renames", base, "--"], self.root)
        if code != 0:
            raise EnvironmentFailure(
                f"{self.root}: git cannot compare with {base} — is it a commit?"
            )
        _, others = self._run(["ls-files", "--others", "--exclude-standard", "-z"], self.root)
        return _names(out) + _names(others)

    def diffstat(self, base: str) -> str:
        """``git diff --stat`` of the working tree against ``base`` (tracked files)."""
        code, out = self._run(["diff", "--stat=120", base, "--"], self.root)
        return out.decode("utf-8", "replace") if code == 0 else ""


def head_of(worktree: str) -> tuple[str, str]:
    """The branch (empty when detached) and the commit (empty before the first) checked out
    in ``worktree``, read from git's files — no ``git`` process on a claim's path."""
    found = git_dir(worktree)
    if found is None:
        return "", ""
    head = _read(os.path.join(found, "HEAD"))
    if not head.startswith("ref:"):
        return "", head
    ref = head.removeprefix("ref:").strip()
    common = found
    commondir = _read(os.path.join(found, "commondir"))
    if commondir:
        common = os.path.normpath(os.path.join(found, commondir))
    commit = _read(os.path.join(found, ref)) or _read(os.path.join(common, ref))
    if not commit:
        packed = _read(os.path.join(common, "packed-refs"))
        line = next((ln for ln in packed.splitlines() if ln.endswith(" " + ref)), "")
        commit = line.partition(" ")[0]
    return ref.removeprefix("refs/heads/"), commit


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _names(out: bytes) -> list[str]:
    """``-z`` output as paths, bytes that are not UTF-8 kept as surrogates."""
    return [name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name]


def git_dir(root: str) -> str | None:
    """The git directory of the repository ``root`` is in, found by reading the file system
    (no ``git`` process): ``.git`` in ``root`` or an ancestor, or where a ``.git`` file's
    ``gitdir:`` line points (a linked worktree, a submodule). ``None`` outside a repository."""
    here = os.path.abspath(root)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8", errors="surrogateescape") as handle:
                    line = handle.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                found = os.path.join(here, line.removeprefix("gitdir:").strip())
                return os.path.normpath(found) if os.path.isdir(found) else None
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent

"""Where the memory root is (docs/reference.md §1) and how user paths map onto it.

The root is ``--root``, else ``$MEMKEEPER_ROOT``, else the top of the *main* working tree of
the git repository around the current directory (linked worktrees share one memory home),
else the current directory. Git's files are read directly: spawning ``git`` would cost more
than a whole ``memkeeper read``, and so would importing pathlib (this is the hot path).
"""

from __future__ import annotations

import os

from memkeeper.errors import Invalid
from memkeeper.names import ROOT_ENV


def find_root(
    explicit: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> str:
    """The memory root for this invocation, as an absolute, resolved path."""
    chosen = explicit if explicit is not None else os.environ.get(ROOT_ENV) or None
    if chosen is not None:
        root = os.path.expanduser(os.fspath(chosen))
        if not os.path.isdir(root):
            raise Invalid(f"{root}: memory root is not a directory — pass an existing --root")
        return os.path.realpath(root)
    here = os.path.realpath(os.getcwd() if cwd is None else cwd)
    return main_worktree(here) or here


def main_worktree(start: str | os.PathLike[str]) -> str | None:
    """The top of the main working tree of the repository holding ``start``, if any."""
    directory = os.fspath(start)
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return directory
        if os.path.isfile(dot_git):
            return _worktree_owner(directory, dot_git)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def working_tree(start: str | os.PathLike[str]) -> str | None:
    """The top of the working tree holding ``start`` — a linked worktree's own, unlike
    ``main_worktree`` — if any."""
    directory = os.fspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _worktree_owner(directory: str, dot_git: str) -> str:
    """Follow a ``.git`` file (linked worktree or submodule) to the main working tree."""
    with open(dot_git, encoding="utf-8", errors="replace") as handle:
        text = handle.read().strip()
    if not text.startswith("gitdir:"):
        return directory
    gitdir = os.path.realpath(os.path.join(directory, text.removeprefix("gitdir:").strip()))
    commondir_file = os.path.join(gitdir, "commondir")
    if not os.path.isfile(commondir_file):
        return directory  # a submodule: its own top is the root
    with open(commondir_file, encoding="utf-8") as handle:
        common = os.path.realpath(os.path.join(gitdir, handle.read().strip()))
    return os.path.dirname(common) if os.path.basename(common) == ".git" else directory


def relative_path(
    root: str | os.PathLike[str], user_path: str, cwd: str | os.PathLike[str] | None = None
) -> str:
    """A user's PATH as a root-relative POSIX path (docs/reference.md §3).

    Relative to the current directory when that is inside the root, else to the root;
    absolute paths must lie inside the root. Confinement of symlinks is ``fs.files.confine``'s job.
    """
    if not user_path:
        raise Invalid("empty path — name a file inside the memory root")
    if "\x00" in user_path:
        shown = user_path.replace("\x00", "\\0")
        raise Invalid(f"{shown}: a path cannot contain a NUL character — name a file", path=shown)
    top = os.path.realpath(root)
    here = os.path.realpath(os.getcwd() if cwd is None else cwd)
    base = here if here == top or here.startswith(top + os.sep) else top
    candidate = os.path.normpath(os.path.join(base, user_path))
    if candidate == top:
        raise Invalid(
            f"{user_path}: names the root directory — name a file inside it", path=user_path
        )
    if not candidate.startswith(top + os.sep):
        raise Invalid(
            f"{user_path}: path is outside the memory root {top} — give a path inside it",
            path=user_path,
        )
    return candidate[len(top) + 1 :].replace(os.sep, "/")

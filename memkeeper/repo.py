"""Where the memory root is (contract §1) and how user paths map onto it.

The root is ``--root``, else ``$MEMKEEPER_ROOT``, else the top of the *main* working tree of
the git repository around the current directory (linked worktrees share one memory home),
else the current directory. Git's files are read directly: spawning ``git`` would cost more
than a whole ``memkeeper read``.
"""

from __future__ import annotations

import os
from pathlib import Path

from memkeeper.errors import Invalid

ROOT_ENV = "MEMKEEPER_ROOT"


def find_root(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """The memory root for this invocation."""
    chosen = explicit if explicit is not None else os.environ.get(ROOT_ENV) or None
    if chosen is not None:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise Invalid(f"{root}: memory root is not a directory — pass an existing --root")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    return main_worktree(here) or here


def main_worktree(start: Path) -> Path | None:
    """The top of the main working tree of the repository holding ``start``, if any."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory
        if dot_git.is_file():
            return _worktree_owner(directory, dot_git)
    return None


def _worktree_owner(directory: Path, dot_git: Path) -> Path:
    """Follow a ``.git`` file (linked worktree or submodule) to the main working tree."""
    text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return directory
    gitdir = (directory / text.removeprefix("gitdir:").strip()).resolve()
    commondir_file = gitdir / "commondir"
    if not commondir_file.is_file():
        return directory  # a submodule: its own top is the root
    common = (gitdir / commondir_file.read_text(encoding="utf-8").strip()).resolve()
    return common.parent if common.name == ".git" else directory


def relative_path(root: Path, user_path: str, cwd: Path | None = None) -> str:
    """A user's PATH as a root-relative POSIX path (contract §3).

    Relative to the current directory when that is inside the root, else to the root;
    absolute paths must lie inside the root. Confinement of symlinks is ``fsio.confine``'s job.
    """
    if not user_path:
        raise Invalid("empty path — name a file inside the memory root")
    root = root.resolve()
    here = (cwd or Path.cwd()).resolve()
    base = here if here == root or root in here.parents else root
    candidate = Path(os.path.normpath(base / user_path))
    try:
        rel = candidate.relative_to(root)
    except ValueError:
        raise Invalid(
            f"{user_path}: path is outside the memory root {root} — give a path inside it",
            path=user_path,
        ) from None
    if str(rel) == ".":
        raise Invalid(
            f"{user_path}: names the root directory — name a file inside it", path=user_path
        )
    return rel.as_posix()

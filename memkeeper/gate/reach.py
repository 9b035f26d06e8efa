"""Where a tool call's paths lead, for the gate: the file a path reaches (through symlinks, or
to the link itself), the memory root holding that file — found from the file, not from the
session's directory — the git working tree a sweep covers, and what git sees changed there.
"""

from __future__ import annotations

import os

from memkeeper.fs import root as repo
from memkeeper.names import HOME_DIR, POLICY_FILE, ROOT_ENV, STATE_DB

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.fs.git import Runner
    from memkeeper.shell.effects import Effect, GitState, Sweep

    States = Mapping[str, frozenset[GitState]]


def reached(path: str, follow: bool) -> str:
    """The absolute ``path`` as the file it reaches: every symlink followed, or (``follow``
    false: ``rm`` and ``mv`` act on a link, not on what it points to) all but the last."""
    if follow:
        return os.path.realpath(path)
    parent, name = os.path.split(path)
    return os.path.join(os.path.realpath(parent), name) if name else os.path.realpath(path)


def used(top: str) -> bool:
    """Whether memkeeper is used at ``top``: it has a policy or a state store."""
    home = os.path.join(top, HOME_DIR, STATE_DB)
    return os.path.exists(os.path.join(top, POLICY_FILE)) or os.path.exists(home)


def memory_root(path: str, explicit: str | None = None, *, directory: bool = False) -> str | None:
    """The memory root holding the resolved ``path`` (or, ``directory``, at or above it):
    ``explicit`` (``--root``), else ``$MEMKEEPER_ROOT``, else the main working tree of the git
    repository around the path, else the nearest directory above it with a policy or state.
    None when memkeeper is not used there, or the path lies outside it."""
    chosen = explicit if explicit is not None else os.environ.get(ROOT_ENV) or None
    start = path if directory else os.path.dirname(path)
    if chosen is not None:
        top: str | None = repo.find_root(chosen)
    else:
        top = repo.main_worktree(start)
        if top is None or not used(top):
            top = _nearest_used(start)
    inside = path.startswith(top.rstrip(os.sep) + os.sep) if top is not None else False
    if top is None or not used(top) or not (inside or (directory and path == top)):
        return None
    return top


def _nearest_used(directory: str) -> str | None:
    while True:
        if used(directory):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def worktree(directory: str) -> str | None:
    """The top of the git working tree (a linked one is its own) holding ``directory``."""
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def resolved(sweep: Sweep) -> Sweep | None:
    """``sweep`` with its paths resolved (``top`` and the paths left out up to their last
    part, the directory it runs in wholly) and a whole-tree one's ``top`` the working tree;
    None when it names a working tree and there is none."""
    moved = sweep.moved(lambda p: reached(p, False))._replace(
        top=reached(sweep.top, sweep.follow),
        where=reached(sweep.where, True),
    )
    if not sweep.repo:
        return moved
    top = worktree(moved.where)
    return None if top is None else moved._replace(top=top)


def root_of(effect: Effect, explicit: str | None = None) -> str | None:
    """The memory root that judges ``effect``: the one holding the file a target reaches,
    or the directory a sweep starts from."""
    from memkeeper.shell.effects import Target

    if isinstance(effect, Target):
        return memory_root(reached(effect.path, effect.follow), explicit)
    sweep = resolved(effect)
    return None if sweep is None else memory_root(sweep.top, explicit, directory=True)


def git_states(top: str, *, ignored: bool, run: Runner | None = None) -> States:
    """What ``git status`` sees in the working tree at ``top``: each changed or untracked
    path (a directory one ends in ``/``) and its states; empty when git cannot tell."""
    from pathlib import Path

    from memkeeper.fs.git import run_git

    args = ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=normal"]
    code, out = (run or run_git)([*args, *(["--ignored"] * ignored)], Path(top))
    return parse_status(out) if code == 0 else {}


def parse_status(out: bytes) -> dict[str, frozenset[GitState]]:
    """``git status --porcelain -z --no-renames`` as ``{path: states}``. Pure."""
    found: dict[str, frozenset[GitState]] = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            found[path] = frozenset({"untracked-dir" if path.endswith("/") else "untracked"})
        elif code == "!!":
            found[path] = frozenset({"ignored"})
        else:
            staged: frozenset[GitState] = frozenset({"staged"} if code[0] != " " else ())
            unstaged: frozenset[GitState] = frozenset({"unstaged"} if code[1] != " " else ())
            found[path] = staged | unstaged
    return found


def state_of(rel: str, states: Mapping[str, frozenset[GitState]]) -> frozenset[GitState]:
    """The git states of the file ``rel`` (relative to the working tree), its own or those
    of an untracked or ignored directory holding it."""
    if rel in states:
        return states[rel]
    parts = rel.split("/")
    for i in range(len(parts) - 1, 0, -1):
        held = states.get("/".join(parts[:i]) + "/")
        if held is not None:
            return held
    return frozenset()

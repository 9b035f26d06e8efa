"""What a shell command does to files, as the gate judges it. Pure.

A ``Target`` is one path the command writes, or deletes, moves away or restores over
(``discards``). A ``Sweep`` is every file at or below a directory that a filter picks out:
``rm -r DIR``, ``find DIR -name X -exec sed -i …``, ``git checkout -- .``, ``git stash``.
Paths are absolute and normalised but not resolved: the hook resolves symlinks and finds the
memory root of the file a path reaches.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from memkeeper.records import Value
from memkeeper.shell.parse import Word

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from typing import Literal

    When = Literal["not-dir", "is-file", "parent-is-dir"]
    GitState = Literal["staged", "unstaged", "untracked", "untracked-dir", "ignored"]

NameTest = tuple[str, bool, bool]  # (fnmatch pattern, ignore case, negated): find's -name
SEARCHED = "\0{}"  # the path of `{}` in `find … -exec CMD {}`: each file the find reaches


class Target(Value):
    """``path`` is written (or, ``discards``, deleted or restored over) by ``how``, provided
    ``when`` holds on disk: ``not-dir`` (the path is not a directory), ``is-file`` (``git
    checkout X`` names a file, not a branch) or ``parent-is-dir`` (``cp SRC DEST`` writes
    ``DEST/SRC`` when ``DEST`` is a directory). ``follow``: the file a symlink there reaches
    is what changes (``rm`` and ``mv`` act on the link itself)."""

    __slots__ = ("path", "how", "when", "follow", "discards")
    path: str
    how: str
    when: When
    follow: bool
    discards: bool

    def __init__(
        self,
        path: str,
        how: str,
        when: When = "not-dir",
        follow: bool = True,
        discards: bool = False,
    ) -> None:
        self._fill(path, how, when, follow, discards)


class Sweep(Value):
    """``how`` acts on every file at or below ``top`` (depth 0 is ``top`` itself) that the
    filters pick out: a depth range, find's name tests, the git states that lose something
    (None: every file counts), and paths left out. ``repo``: ``top`` stands for the whole
    git working tree around it; ``follow``: a symlink at ``top`` is followed (``rm -r
    link/`` empties the directory it points to, ``rm -r link`` removes just the link).
    ``where`` is the command's directory and ``instead`` the same command leaving files
    out, ``{}`` standing for their ``':!PATH'``s ("": none)."""

    __slots__ = (
        "top",
        "how",
        "where",
        "discards",
        "mindepth",
        "maxdepth",
        "names",
        "git",
        "repo",
        "excluded",
        "instead",
        "follow",
    )
    top: str
    how: str
    where: str
    discards: bool
    mindepth: int
    maxdepth: int | None
    names: tuple[NameTest, ...]
    git: frozenset[GitState] | None
    repo: bool
    excluded: tuple[str, ...]
    instead: str
    follow: bool

    def __init__(
        self,
        top: str,
        how: str,
        where: str,
        discards: bool = True,
        mindepth: int = 0,
        maxdepth: int | None = None,
        names: tuple[NameTest, ...] = (),
        git: frozenset[GitState] | None = None,
        repo: bool = False,
        excluded: tuple[str, ...] = (),
        instead: str = "",
        follow: bool = False,
    ) -> None:
        self._fill(
            *(top, how, where, discards, mindepth, maxdepth, names, git),
            *(repo, excluded, instead, follow),
        )

    def covers(self, path: str) -> bool:
        """Whether the absolute ``path`` is one of the files this sweep reaches."""
        if path != self.top and not path.startswith(self.top.rstrip("/") + "/"):
            return False
        if any(path == x or path.startswith(x.rstrip("/") + "/") for x in self.excluded):
            return False
        rest = path[len(self.top) :].strip("/")
        depth = rest.count("/") + 1 if rest else 0
        if depth < self.mindepth or (self.maxdepth is not None and depth > self.maxdepth):
            return False
        return all(_named(os.path.basename(path), test) for test in self.names)

    def moved(self, where: Callable[[str], str]) -> Sweep:
        """This sweep with its paths mapped through ``where`` (the hook resolves them)."""
        return self._replace(
            top=where(self.top),
            where=where(self.where),
            excluded=tuple(where(x) for x in self.excluded),
        )


Effect = Target | Sweep
Placer = Callable[[Word], str | None]  # a word as the path it names, if it names one
Finder = Callable[[tuple[Word, ...], Placer], list[Effect]]  # a command's arguments: effects


def _named(name: str, test: NameTest) -> bool:
    from fnmatch import fnmatchcase

    pattern, fold, negated = test
    hit = fnmatchcase(name.lower(), pattern.lower()) if fold else fnmatchcase(name, pattern)
    return hit != negated


def place(base: str | None, word: Word) -> str | None:
    """The absolute path ``word`` names from directory ``base``; None when the shell would
    expand it, it is empty or ``-`` (standard input or output), or ``base`` is unknown."""
    if not word.plain or word.text in ("", "-"):
        return None
    if os.path.isabs(word.text):
        return os.path.normpath(word.text)
    return None if base is None else os.path.normpath(os.path.join(base, word.text))


def each(
    at: Placer,
    words: Iterable[Word],
    how: str,
    *,
    when: When = "not-dir",
    follow: bool = True,
    discards: bool = False,
) -> list[Target]:
    """A ``Target`` for each of ``words`` that names a path."""
    placed = (at(w) for w in words)
    return [Target(p, how, when, follow, discards) for p in placed if p is not None]

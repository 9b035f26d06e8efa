"""git's commands that write or discard files in the working tree. Pure.

``git checkout [REV] [--] PATH…`` and ``git restore PATH…`` write each file they name, and a
directory named loses the changes of the files below it; ``git checkout -f``/``git switch
-f``, ``git stash [push]`` and ``git reset --hard`` lose the working tree's uncommitted
changes; ``git clean`` deletes untracked files (``-d``: in untracked directories too, ``-x``:
ignored ones too); ``git rm`` deletes and ``git mv`` moves away. ``-C DIR`` is followed;
``--git-dir``/``--work-tree`` are not (nothing is reported). Pathspecs may leave paths out
(``':!PATH'``, ``':^PATH'``, ``':(exclude)PATH'``); other pathspec magic or a glob is unknown.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from functools import partial

from memkeeper.shell.effects import Effect, Placer, Sweep, each, place
from memkeeper.shell.options import DOT, given, options
from memkeeper.shell.parse import Word

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from memkeeper.shell.effects import GitState, When

UNSTAGED: frozenset[GitState] = frozenset({"unstaged"})
CHANGED: frozenset[GitState] = frozenset({"staged", "unstaged"})
UNTRACKED: frozenset[GitState] = frozenset({"untracked", "untracked-dir"})
_EXCLUDE = (":!", ":^", ":(exclude)")
_GLOB = frozenset("*?[")
_CHECKOUT = frozenset({"b", "B", "orphan", "conflict", "pathspec-from-file"})
Subcommand = Callable[[tuple[Word, ...], Placer, str], list[Effect]]


def git(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    """What ``git ARGS`` does to the working tree's files."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        if text.startswith(("--git-dir", "--work-tree")) or (text == "-C" and i + 1 == len(args)):
            return []  # another tree: not worth guessing
        if text == "-C":
            at = partial(place, at(args[i + 1]))
        i += 2 if text in ("-C", "-c") else 1
    run = _SUBCOMMANDS.get(args[i].text) if i < len(args) else None
    if run is None:
        return []
    return run(args[i + 1 :], at, shlex.join(["git", *(w.text for w in args[: i + 1])]))


class _Specs:
    """Pathspecs: the paths named and the words naming them, the paths left out."""

    def __init__(self, words: list[Word], at: Placer) -> None:
        self.paths: list[str] = []
        self.words: list[Word] = []
        self.excluded: list[str] = []
        self.excluding: list[Word] = []
        self.known = True  # False: a path left out cannot be named
        for word in words:
            self._add(word, at)

    def _add(self, word: Word, at: Placer) -> None:
        text = word.text
        prefix = next((p for p in _EXCLUDE if text.startswith(p)), None)
        if prefix is not None:
            gone = at(Word(text[len(prefix) :] or ".", word.plain))
            self.known = self.known and gone is not None and not _GLOB & set(text)
            self.excluded += [gone] if gone is not None else []
            self.excluding.append(word)
        elif not text.startswith(":") and not _GLOB & set(text):
            path = at(word)
            if path is not None:
                self.paths.append(path)
                self.words.append(word)

    def instead(self, command: str) -> str:
        """``command -- SPECS {}``: the same pathspecs, ``{}`` standing for more left out."""
        named = [w.text for w in self.words] or ["."]
        return f"{command} -- {shlex.join(named + [w.text for w in self.excluding])} {{}}"


def _restores(
    how: str, paths: list[Word], at: Placer, lost: frozenset[GitState], command: str, when: When
) -> list[Effect]:
    """Each file named is written; the files below a directory named lose their changes."""
    specs = _Specs(paths, at)
    if not specs.known:
        return []
    where, excluded, instead = at(DOT) or "", tuple(specs.excluded), specs.instead(command)
    found: list[Effect] = []
    for target in each(at, specs.words, how, when=when):
        below = Sweep(target.path, how, where, mindepth=1, git=lost, excluded=excluded)
        found += [target, below._replace(instead=instead)]
    return found


def _checkout(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    texts = [w.text for w in args]
    when: When
    if "--" in texts:
        split = texts.index("--")
        revs, opts = options(args[:split], _CHECKOUT)
        paths, when, kept = list(args[split + 1 :]), "not-dir", args[:split]
    else:
        operands, opts = options(args, _CHECKOUT)
        if given(opts, "f", "force") is not None and len(operands) <= 1:
            return _lose_all("git checkout -f", at)
        revs = operands[:1] if len(operands) > 1 else []  # `git checkout REV PATH…`
        paths, when = operands[len(revs) :], "is-file"
        kept = (*_without(args, operands), *revs)
    if given(opts, "b", "B", "orphan", "p", "patch", "pathspec-from-file") is not None:
        return []
    lost = CHANGED if revs else UNSTAGED
    return _restores("git checkout", paths, at, lost, _join(prefix, kept), when)


def _restore(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    valued = frozenset({"s", "source", "conflict", "pathspec-from-file"})
    operands, opts = options(args, valued)
    staged = given(opts, "S", "staged") is not None
    if given(opts, "p", "patch", "pathspec-from-file") is not None or (
        staged and given(opts, "W", "worktree") is None
    ):
        return []  # interactive, or the index only
    lost = CHANGED if staged or given(opts, "s", "source") else UNSTAGED
    command = _join(prefix, _without(args, operands))
    return _restores("git restore", operands, at, lost, command, "not-dir")


def _stash(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    named = bool(args) and not args[0].text.startswith("-")  # `git stash push`, not `git stash`
    sub, rest = (args[0].text, args[1:]) if named else ("push", args)
    if sub not in ("push", "save"):
        return []  # list, show, apply, pop… lose nothing in the working tree
    operands, opts = options(rest, frozenset({"m", "message", "pathspec-from-file"}))
    if given(opts, "p", "patch", "pathspec-from-file") is not None:
        return []
    lost = UNSTAGED if given(opts, "k", "keep-index") else CHANGED
    lost |= UNTRACKED if given(opts, "u", "include-untracked", "a", "all") else frozenset()
    lost |= frozenset({"ignored"}) if given(opts, "a", "all") else frozenset()
    command = _join(f"{prefix} push", _without(rest, operands))
    return _sweeps("git stash", [] if sub == "save" else operands, at, lost, command, repo=True)


def _clean(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    operands, opts = options(args, frozenset({"e", "exclude"}))
    if given(opts, "n", "dry-run") is not None:
        return []
    lost: frozenset[GitState] = frozenset({"untracked"})
    lost |= frozenset({"untracked-dir"}) if "d" in opts else frozenset()
    lost |= frozenset({"ignored"}) if "x" in opts else frozenset()
    lost = frozenset({"ignored"}) if "X" in opts else lost
    command = _join(prefix, _without(args, operands))
    return _sweeps("git clean", operands, at, lost, command, repo=False)  # from the cwd down


def _sweeps(
    how: str,
    operands: list[Word],
    at: Placer,
    lost: frozenset[GitState],
    command: str,
    *,
    repo: bool,
) -> list[Effect]:
    """A sweep of each path named (at any depth), or of the tree (``repo``: the whole
    working tree, else the command's directory) when none is."""
    specs = _Specs(operands, at)
    where = at(DOT)
    if not specs.known or where is None:
        return []
    excluded, instead = tuple(specs.excluded), specs.instead(command)
    if not specs.paths:
        return [Sweep(where, how, where, git=lost, repo=repo, excluded=excluded, instead=instead)]
    return [Sweep(p, how, where, git=lost, excluded=excluded, instead=instead) for p in specs.paths]


def _reset(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    operands, opts = options(args, frozenset())
    where = at(DOT)
    if "hard" not in opts or where is None:
        return []
    instead = "" if operands else "git restore --source=HEAD --staged --worktree -- . {}"
    return [Sweep(where, "git reset --hard", where, git=CHANGED, repo=True, instead=instead)]


def _switch(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    _, opts = options(args, frozenset({"c", "C", "create", "force-create", "orphan"}))
    if given(opts, "f", "force", "discard-changes") is None:
        return []
    return _lose_all("git switch -f", at)


def _lose_all(how: str, at: Placer) -> list[Effect]:
    where = at(DOT)
    return [] if where is None else [Sweep(where, how, where, git=CHANGED, repo=True)]


def _rm(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    operands, opts = options(args, frozenset({"pathspec-from-file"}))
    if given(opts, "cached", "n", "dry-run", "pathspec-from-file") is not None:
        return []  # the index only, or nothing
    specs = _Specs(operands, at)
    found: list[Effect] = []
    for target in each(at, specs.words, "git rm", discards=True, follow=False):
        found.append(target)
        if "r" in opts:
            found.append(Sweep(target.path, "git rm -r", at(DOT) or "", mindepth=1))
    return found


def _mv(args: tuple[Word, ...], at: Placer, prefix: str) -> list[Effect]:
    operands, opts = options(args, frozenset())
    if len(operands) < 2 or given(opts, "n", "dry-run") is not None:
        return []
    found: list[Effect] = []
    if given(opts, "f", "force") is not None:
        found += each(at, operands[-1:], "git mv", follow=False)
    for target in each(at, operands[:-1], "git mv", discards=True, follow=False):
        found += [target, Sweep(target.path, "git mv", at(DOT) or "", mindepth=1)]
    return found


def _join(prefix: str, words: tuple[Word, ...] | list[Word]) -> str:
    return " ".join([prefix, *(shlex.quote(w.text) for w in words)])


def _without(args: tuple[Word, ...], operands: list[Word]) -> tuple[Word, ...]:
    """``args`` less ``operands`` (the very words) and ``--``: the command's options."""
    return tuple(w for w in args if w.text != "--" and not any(w is o for o in operands))


_SUBCOMMANDS: dict[str, Subcommand] = {
    "checkout": _checkout,
    "restore": _restore,
    "stash": _stash,
    "clean": _clean,
    "reset": _reset,
    "switch": _switch,
    "rm": _rm,
    "mv": _mv,
}

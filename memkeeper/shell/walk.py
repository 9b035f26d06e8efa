"""A command line as the simple commands it runs, each with the directory it runs in. Pure.

Followed: ``cd DIR``, ``cd -``, ``pushd DIR``/``popd`` (a subshell's ``( cd x; … )`` ends with
it), and the scripts a command runs itself: ``bash -c 'SCRIPT'`` (and ``sh``, ``zsh`` …),
``eval WORDS``, command substitutions ``$(…)``/`` `…` `` (nested up to 3 deep). Prefixes are
dropped: ``VAR=value``, ``if``/``then``/``do``/…, ``sudo``, ``env``, ``nice``, ``timeout``,
``xargs``, ``npx`` and the like with their options. A directory that cannot be named (``cd $X``,
``cd ~``, ``pushd +1``) is ``None``: relative paths there are unknown.
"""

from __future__ import annotations

import os
import re

from memkeeper.records import Record
from memkeeper.shell.effects import place
from memkeeper.shell.parse import Command, Word, commands, tokenize

Redirects = tuple[tuple[str, Word | None], ...]
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"})
_WRAPPERS: dict[str, frozenset[str]] = {  # prefixes, and their options that take a value
    "sudo": frozenset("ugChpU"),
    "doas": frozenset("uC"),
    "env": frozenset({"u", "C", "S", "unset", "chdir"}),
    "nice": frozenset("n"),
    "ionice": frozenset("cnp"),
    "stdbuf": frozenset("ioe"),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset("a"),
    "time": frozenset("of"),
    "timeout": frozenset({"s", "k", "signal", "kill-after"}),
    "xargs": frozenset({*"adEILnPs", "arg-file", "delimiter", "max-args", "max-procs"}),
    "npx": frozenset({"p", "package", "c", "call"}),
    "pnpx": frozenset(),
    "bunx": frozenset(),
}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
MAX_DEPTH = 3


class Step(Record):
    """One simple command without its prefixes, and the directory it runs in."""

    __slots__ = ("words", "redirects", "base")
    words: tuple[Word, ...]
    redirects: Redirects
    base: str | None

    def __init__(self, words: tuple[Word, ...], redirects: Redirects, base: str | None) -> None:
        self._fill(words, redirects, base)


def steps(command: str, cwd: str) -> list[Step]:
    """The simple commands ``command`` runs, started in ``cwd``; none if it cannot be read."""
    out: list[Step] = []
    _walk(command, cwd, 0, out)
    return out


class _Dirs:
    """The shell's directory, its ``cd -`` and its ``pushd`` stack."""

    def __init__(self, base: str | None) -> None:
        self.base = base
        self.previous: str | None = None
        self.stack: list[str | None] = []

    def copy(self) -> _Dirs:
        other = _Dirs(self.base)
        other.previous, other.stack = self.previous, list(self.stack)
        return other

    def move(self, name: str, args: tuple[Word, ...]) -> None:
        operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if name == "popd":
            self.base = self.stack.pop() if self.stack else None
            return
        if name == "pushd" and not operands:
            top = self.stack.pop() if self.stack else None
            self.stack.append(self.base)
            self.base = top
            return
        if name == "pushd":
            self.stack.append(self.base)
        self.previous, self.base = self.base, self._to(operands[0] if operands else None)

    def _to(self, word: Word | None) -> str | None:
        if word is None or word.text.startswith("+"):
            return None  # `cd` (home), `pushd +N`: somewhere we cannot name
        if word.text == "-":
            return self.previous
        return place(self.base, word)


def _walk(line: str, base: str | None, depth: int, out: list[Step]) -> None:
    try:
        parsed = commands(tokenize(line))
    except ValueError:
        return
    dirs = _Dirs(base)
    saved: list[_Dirs] = []
    for cmd in parsed:
        saved += [dirs.copy() for _ in range(cmd.opens)]
        for script in _scripts(cmd) if depth < MAX_DEPTH else ():
            _walk(script, dirs.base, depth + 1, out)
        words = strip(cmd.words)
        out.append(Step(words, cmd.redirects, dirs.base))
        if words and words[0].plain:
            _run(os.path.basename(words[0].text), words[1:], dirs, depth, out)
        for _ in range(cmd.closes):
            dirs = saved.pop() if saved else dirs


def _run(name: str, args: tuple[Word, ...], dirs: _Dirs, depth: int, out: list[Step]) -> None:
    """What a command that changes directory or runs a script of its own does."""
    if name in ("cd", "pushd", "popd"):
        dirs.move(name, args)
    elif depth >= MAX_DEPTH:
        return
    elif name in SHELLS:
        script = _dash_c(args)
        if script is not None:
            _walk(script, dirs.base, depth + 1, out)
    elif name == "eval" and all(w.plain for w in args):
        _walk(" ".join(w.text for w in args), dirs.base, depth + 1, out)


def _scripts(cmd: Command) -> list[str]:
    words = [*cmd.words, *(target for _, target in cmd.redirects if target is not None)]
    return [script for word in words for script in word.scripts]


def strip(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """The command without ``VAR=value`` assignments, keywords and wrappers like ``sudo``."""
    i = 0
    while i < len(words):
        text = words[i].text
        if _ASSIGNMENT.match(text) or text in _KEYWORDS:
            i += 1
        elif text in _WRAPPERS:
            takes, i = _WRAPPERS[text], i + 1
            while i < len(words) and words[i].text.startswith("-"):
                i += 2 if words[i].text.lstrip("-") in takes else 1
            i += text == "timeout"  # its duration
        else:
            break
    return words[i:]


def _dash_c(args: tuple[Word, ...]) -> str | None:
    """The script of ``bash -c 'SCRIPT'`` (also ``-lc``, ``-e -c``); None for anything else."""
    seen_c = False
    for word in args:
        if seen_c:
            return word.text
        if word.text.startswith("-") and not word.text.startswith("--"):
            seen_c = "c" in word.text[1:]
        elif not word.text.startswith("--"):
            return None
    return None

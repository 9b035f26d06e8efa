"""Which files a Bash command line writes, as far as can be told without running it.

Found: redirections (``>``, ``>>``, ``&>``, ``2>``…), ``tee [-a]``, ``sed -i``, ``perl -i``,
``cp``/``mv`` onto a path or into a directory, ``git checkout [REV] -- PATH`` and
``git restore PATH``, ``dd of=PATH``, ``truncate``; through ``&&``, ``;``, ``|``, newlines,
``sudo``/``env``/``VAR=…`` prefixes, ``cd DIR &&`` and ``bash -c '…'``. Anything the shell
would expand (``$VAR``, globs, ``~``) is unknown and left out: the gate allows what it cannot
read, and ``check`` and the daemon are the backstops. Pure functions over ``str``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from memkeeper.gate.shell import Command, Word, commands, tokenize

When = Literal["not-dir", "is-file", "parent-is-dir"]


@dataclass(frozen=True, slots=True)
class BashWrite:
    """``path`` is written by ``how``, provided ``when`` holds on disk: ``not-dir`` (the
    path is not a directory), ``is-file`` (``git checkout X`` names a file, not a branch) or
    ``parent-is-dir`` (``cp SRC DEST`` writes ``DEST/SRC`` when ``DEST`` is a directory)."""

    path: str
    how: str
    when: When = "not-dir"


Found = list[tuple[Word, str, When]]
_REDIRECTS = {">": ">", ">|": ">", "&>": ">", "<>": ">", ">>": ">>", "&>>": ">>"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"})
_WRAPPERS: dict[str, frozenset[str]] = {  # prefixes, and their options that take a value
    "sudo": frozenset("ugChpU"),
    "env": frozenset({"u", "C", "S", "unset", "chdir"}),
    "nice": frozenset("n"),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset("a"),
    "time": frozenset("of"),
    "timeout": frozenset({"s", "k", "signal", "kill-after"}),
}
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_MAX_DEPTH = 3


def bash_writes(command: str, cwd: str) -> tuple[BashWrite, ...]:
    """The files ``command`` (run in ``cwd``) writes, in order; paths are normalised."""
    return tuple(_writes(command, cwd, 0))


def _writes(command: str, base: str | None, depth: int) -> list[BashWrite]:
    try:
        parsed = commands(tokenize(command))
    except ValueError:
        return []
    out: list[BashWrite] = []
    for cmd in parsed:
        out += _located(_redirects(cmd), base)
        words = _strip(cmd.words)
        if not words or not words[0].plain:
            continue
        name, args = os.path.basename(words[0].text), words[1:]
        if name == "cd":
            base = _cd(base, args)
        elif name in _SHELLS and depth < _MAX_DEPTH:
            script = _dash_c(args)
            out += [] if script is None else _writes(script, base, depth + 1)
        elif name in FINDERS:
            out += _located(FINDERS[name](args), base)
    return out


def _located(found: Found, base: str | None) -> list[BashWrite]:
    out = []
    for word, how, when in found:
        if word.plain and word.text not in ("", "-"):
            if os.path.isabs(word.text):
                out.append(BashWrite(os.path.normpath(word.text), how, when))
            elif base is not None:
                out.append(BashWrite(os.path.normpath(os.path.join(base, word.text)), how, when))
    return out


def _redirects(cmd: Command) -> Found:
    found: Found = []
    for op, target in cmd.redirects:
        how = _REDIRECTS.get(op)
        if op == ">&" and target is not None and not target.text.isdigit():
            how = ">"  # `>&FILE` is `&>FILE`; `>&2` duplicates a descriptor
        if how is not None and target is not None:
            found.append((target, how, "not-dir"))
    return found


def _strip(words: tuple[Word, ...]) -> tuple[Word, ...]:
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


def _cd(base: str | None, args: tuple[Word, ...]) -> str | None:
    operands = [w for w in args if not w.text.startswith("-")]
    if not operands or not operands[0].plain:
        return None  # `cd`, `cd ~`, `cd $X`: somewhere we cannot name
    target = operands[0].text
    if os.path.isabs(target):
        return os.path.normpath(target)
    return None if base is None else os.path.normpath(os.path.join(base, target))


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


# -- the commands that write their operands ---------------------------------------------------


def options(
    args: tuple[Word, ...], valued: frozenset[str], attached: frozenset[str] = frozenset()
) -> tuple[list[Word], dict[str, Word]]:
    """Operands and options (``name -> value``; flags get an empty value), getopt-style:
    ``valued`` options take a value (attached or next word), ``attached`` ones an optional
    value only when attached (``sed -i.bak``); ``--`` ends the options."""
    operands: list[Word] = []
    found: dict[str, Word] = {}
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        text = word.text
        if text == "--":
            operands += args[i:]
            break
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if not eq and name in valued and i < len(args):
                value, i = args[i].text, i + 1
            found[name] = Word(value, word.plain)
        elif text.startswith("-") and len(text) > 1:
            i = _cluster(args, i, word, valued | attached, valued, found)
        else:
            operands.append(word)
    return operands, found


def _cluster(
    args: tuple[Word, ...],
    i: int,
    word: Word,
    with_value: frozenset[str],
    valued: frozenset[str],
    found: dict[str, Word],
) -> int:
    """Read ``-abc`` into ``found``; the index of the next word."""
    text = word.text
    for at, char in enumerate(text[1:], start=1):
        if char in with_value:
            rest = text[at + 1 :]
            if not rest and char in valued and i < len(args):
                found[char] = args[i]
                return i + 1
            found[char] = Word(rest, word.plain)
            return i
        found[char] = Word("", True)
    return i


def _tee(args: tuple[Word, ...]) -> Found:
    files, opts = options(args, frozenset({"output-error"}))
    how = "tee -a" if "a" in opts or "append" in opts else "tee"
    return [(f, how, "not-dir") for f in files]


def _sed(args: tuple[Word, ...]) -> Found:
    valued = frozenset({"e", "f", "l", "expression", "file", "line-length"})
    operands, opts = options(args, valued, frozenset({"i", "in-place"}))
    if "i" not in opts and "in-place" not in opts:
        return []
    if opts.get("i", Word("x", True)).text == "" and operands and operands[0].text == "":
        operands = operands[1:]  # BSD sed: `-i ''` is an empty backup suffix
    scripted = any(name in opts for name in ("e", "f", "expression", "file"))
    return [(f, "sed -i", "not-dir") for f in (operands if scripted else operands[1:])]


def _perl(args: tuple[Word, ...]) -> Found:
    operands, opts = options(args, frozenset("eEIMm"), frozenset("il0"))
    if "i" not in opts or not ("e" in opts or "E" in opts):
        return []  # without -e the first operand is a script file: not worth guessing
    return [(f, "perl -i", "not-dir") for f in operands]


def _copy(how: str) -> Callable[[tuple[Word, ...]], Found]:
    def find(args: tuple[Word, ...]) -> Found:
        valued = frozenset({"t", "S", "target-directory", "suffix"})
        operands, opts = options(args, valued)
        into = opts.get("t") or opts.get("target-directory")
        if into is not None:
            return [(_inside(into, src), how, "not-dir") for src in operands]
        if len(operands) < 2:
            return []
        dest, sources = operands[-1], operands[:-1]
        found: Found = [(dest, how, "not-dir")]
        if "T" not in opts and "no-target-directory" not in opts:
            found += [(_inside(dest, src), how, "parent-is-dir") for src in sources]
        return found

    return find


def _inside(directory: Word, source: Word) -> Word:
    name = os.path.basename(source.text.rstrip("/"))
    return Word(os.path.join(directory.text, name), directory.plain and source.plain and bool(name))


def _git(args: tuple[Word, ...]) -> Found:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text.startswith(("-C", "--git-dir", "--work-tree")):
            return []  # another directory or tree: not worth guessing
        i += 2 if args[i].text == "-c" else 1
    if i >= len(args):
        return []
    sub, rest = args[i].text, args[i + 1 :]
    if sub == "checkout":
        return _checkout(rest)
    if sub == "restore":
        operands, opts = options(rest, frozenset({"s", "source", "conflict"}))
        if ("S" in opts or "staged" in opts) and not ("W" in opts or "worktree" in opts):
            return []  # the index only
        return [(p, "git restore", "not-dir") for p in operands]
    return []


def _checkout(args: tuple[Word, ...]) -> Found:
    texts = [w.text for w in args]
    if "--" in texts:
        return [(p, "git checkout", "not-dir") for p in args[texts.index("--") + 1 :]]
    operands, opts = options(args, frozenset({"b", "B", "orphan", "conflict"}))
    if any(name in opts for name in ("b", "B", "orphan")):
        return []
    return [(p, "git checkout", "is-file") for p in operands]


def _dd(args: tuple[Word, ...]) -> Found:
    return [(Word(w.text[3:], w.plain), "dd", "not-dir") for w in args if w.text.startswith("of=")]


def _truncate(args: tuple[Word, ...]) -> Found:
    operands, _ = options(args, frozenset({"s", "r", "size", "reference"}))
    return [(f, "truncate", "not-dir") for f in operands]


FINDERS: dict[str, Callable[[tuple[Word, ...]], Found]] = {
    "tee": _tee,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "cp": _copy("cp"),
    "mv": _copy("mv"),
    "install": _copy("install"),
    "git": _git,
    "dd": _dd,
    "truncate": _truncate,
}

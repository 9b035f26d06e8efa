"""Which files a Bash command line writes or discards, as far as can be told without running
it. Pure functions over ``str``.

Writers: redirections (``>``, ``>>``, ``&>``, ``2>``…, also inside ``$(…)``), ``tee [-a]``,
``sed -i``, ``perl -i``, ``awk -i inplace``, ``sort -o``, ``sponge``, ``patch FILE``,
``cp``/``mv``/``install`` onto a path or into a directory, ``ln -f``, ``dd of=``,
``truncate``, ``curl -o``/``wget -O``, formatters writing in place (``prettier --write``,
``mdformat``, ``markdownlint --fix``, ``clang-format -i``, ``gofmt -w`` …, a directory
operand reaching its ``*.md`` files), ``find … -exec CMD {}`` (``shell.find``) and git's
(``shell.git``). Discards: ``rm [-r]``, ``unlink``, ``mv`` (its sources), ``find -delete``
and git's restores. Commands are found where ``shell.walk`` finds them. Anything the shell
would expand (``$VAR``, globs, ``~``) is unknown and left out: the gate allows what it cannot
read, and ``check`` and the daemon are the backstops.
"""

from __future__ import annotations

import itertools
import os
from functools import partial

from memkeeper.shell.effects import Effect, Finder, NameTest, Placer, Sweep, each, place
from memkeeper.shell.find import find as find_effects
from memkeeper.shell.git import git as git_effects
from memkeeper.shell.options import DOT, given, options
from memkeeper.shell.parse import Word
from memkeeper.shell.walk import steps

_REDIRECTS = {">": ">", ">|": ">", "&>": ">", "<>": ">", ">>": ">>", "&>>": ">>"}
MARKDOWN: tuple[NameTest, ...] = (("*.md", False, False),)  # a formatter's files in a directory


def bash_effects(command: str, cwd: str) -> tuple[Effect, ...]:
    """What ``command`` (run in ``cwd``) writes and discards, in order."""
    out: list[Effect] = []
    for step in steps(command, cwd):
        at: Placer = partial(place, step.base)
        out += _redirects(step.redirects, at)
        if step.words and step.words[0].plain:
            finder = FINDERS.get(os.path.basename(step.words[0].text))
            if finder is not None:
                out += finder(step.words[1:], at)
    return tuple(out)


def _redirects(redirects: tuple[tuple[str, Word | None], ...], at: Placer) -> list[Effect]:
    out: list[Effect] = []
    for op, target in redirects:
        how = _REDIRECTS.get(op)
        if op == ">&" and target is not None and not target.text.isdigit():
            how = ">"  # `>&FILE` is `&>FILE`; `>&2` duplicates a descriptor
        if how is not None and target is not None:
            out += each(at, [target], how)
    return out


# -- the commands that write their operands ---------------------------------------------------


def _tee(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    files, opts = options(args, frozenset({"output-error"}))
    return [*each(at, files, "tee -a" if given(opts, "a", "append") else "tee")]


def _sed(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    valued = frozenset({"e", "f", "l", "expression", "file", "line-length"})
    operands, opts = options(args, valued, frozenset({"i", "in-place"}))
    if given(opts, "i", "in-place") is None:
        return []
    if opts.get("i", Word("x", True)).text == "" and operands and operands[0].text == "":
        operands = operands[1:]  # BSD sed: `-i ''` is an empty backup suffix
    scripted = given(opts, "e", "f", "expression", "file") is not None
    return [*each(at, operands if scripted else operands[1:], "sed -i")]


def _perl(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    operands, opts = options(args, frozenset("eEIMm"), frozenset("il0"))
    if "i" not in opts or given(opts, "e", "E") is None:
        return []  # without -e the first operand is a script file: not worth guessing
    return [*each(at, operands, "perl -i")]


def _awk(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    valued = frozenset({*"fvFilEeW", "file", "assign", "field-separator", "include", "source"})
    operands, opts = options(args, valued)
    if not _inplace(args):
        return []
    programmed = given(opts, "f", "file", "e", "source", "E") is not None
    files = [w for w in (operands if programmed else operands[1:]) if "=" not in w.text]
    return [*each(at, files, "awk -i inplace")]


def _inplace(args: tuple[Word, ...]) -> bool:
    """Whether gawk loads its ``inplace`` extension (``-i inplace``, ``--include=inplace``)."""
    texts = [w.text for w in args]
    names = ("inplace", "inplace.awk")
    attached = {f"{o}{n}" for o in ("-i", "--include=") for n in names}
    pairs = itertools.pairwise(texts)
    return bool(attached & set(texts)) or any(
        a in ("-i", "--include") and b in names for a, b in pairs
    )


def _sort(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    valued = frozenset({*"okStT", "output", "key", "field-separator", "buffer-size"})
    _, opts = options(args, valued | {"temporary-directory", "parallel", "files0-from"})
    out = given(opts, "o", "output")
    return [*each(at, [out], "sort -o")] if out is not None else []


def _sponge(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    files, opts = options(args, frozenset())
    return [*each(at, files[:1], "sponge -a" if "a" in opts else "sponge")]


def _patch(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    valued = frozenset({*"pFiodrBDVzYg", "strip", "fuzz", "input", "output", "directory"})
    operands, opts = options(args, valued | {"reject-file", "prefix", "suffix", "ifdef"})
    if given(opts, "dry-run", "C", "check") is not None:
        return []
    directory = given(opts, "d", "directory")
    if directory is not None:
        at = partial(place, at(directory))
    out = given(opts, "o", "output")
    return [*each(at, [out] if out is not None else operands[:1], "patch")]


def _copy(how: str, *, moves: bool = False, links: bool = False) -> Finder:
    """``cp``/``install``/``mv``/``ln``: the destination (or ``DIR/SOURCE``) is written; ``mv``
    discards its sources; ``ln`` replaces its destination only with ``-f``."""

    def find(args: tuple[Word, ...], at: Placer) -> list[Effect]:
        valued = frozenset({"t", "S", "target-directory", "suffix"})
        operands, opts = options(args, valued)
        if links and given(opts, "f", "force") is None:
            return []  # `ln` refuses to replace a file without -f
        label = f"ln -{'s' if given(opts, 's', 'symbolic') else ''}f" if links else how
        into = given(opts, "t", "target-directory")
        sources = operands if into is not None else operands[:-1]
        if into is None and len(operands) < 2:
            return []
        follow = how == "cp"  # `cp` writes through a link; `mv`, `ln`, `install` replace it
        found: list[Effect] = []
        if into is not None:
            found += each(at, [_inside(into, s) for s in sources], label, follow=follow)
        else:
            dest = operands[-1]
            found += each(at, [dest], label, follow=follow)
            if given(opts, "T", "no-target-directory") is None:
                inside = [_inside(dest, s) for s in sources]
                found += each(at, inside, label, when="parent-is-dir", follow=follow)
        return found + (_moved_away(sources, at) if moves else [])

    return find


def _moved_away(sources: list[Word], at: Placer) -> list[Effect]:
    found: list[Effect] = []
    for word in sources:
        found += each(at, [word], "mv", discards=True, follow=False)
        found += below(at, word, "mv")
    return found


def below(
    at: Placer, word: Word, how: str, *, discards: bool = True, names: tuple[NameTest, ...] = ()
) -> list[Sweep]:
    """A sweep of the files below the directory ``word`` names (none if it names none);
    through a symlink when it ends in ``/``."""
    top = at(word)
    if top is None:
        return []
    follow = word.text.endswith("/")
    return [Sweep(top, how, at(DOT) or "", discards, 1, names=names, follow=follow)]


def _inside(directory: Word, source: Word) -> Word:
    name = os.path.basename(source.text.rstrip("/"))
    return Word(os.path.join(directory.text, name), directory.plain and source.plain and bool(name))


def _rm(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    operands, opts = options(args, frozenset())
    recursive = given(opts, "r", "R", "recursive") is not None
    found: list[Effect] = []
    for word in operands:
        found += each(at, [word], "rm", discards=True, follow=False)
        found += below(at, word, "rm -r") if recursive else []
    return found


def _unlink(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    return [*each(at, args[:1], "unlink", discards=True, follow=False)]


def _dd(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    outputs = [Word(w.text[3:], w.plain) for w in args if w.text.startswith("of=")]
    return [*each(at, outputs, "dd")]


def _truncate(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    operands, _ = options(args, frozenset({"s", "r", "size", "reference"}))
    return [*each(at, operands, "truncate")]


def _download(how: str, flags: tuple[str, ...], valued: str) -> Finder:
    """``curl -o FILE``, ``wget -O FILE``: the file named is written (``valued``: the other
    options that take a value, space-separated)."""

    def find(args: tuple[Word, ...], at: Placer) -> list[Effect]:
        _, opts = options(args, frozenset({*valued.split(), *flags}))
        out = given(opts, *flags)
        return [*each(at, [out], how)] if out is not None else []

    return find


def _formatter(
    how: str, writes: frozenset[str] | None, valued: str = "", *, markdown: bool = False
) -> Finder:
    """A formatter that rewrites the files it is given when one of ``writes`` is passed
    (``None``: always, unless ``--check``; ``valued``: its options that take a value,
    space-separated); ``markdown``: a directory given reaches its Markdown files."""

    def find(args: tuple[Word, ...], at: Placer) -> list[Effect]:
        operands, opts = options(args, frozenset(valued.split()))
        if writes is None and given(opts, "check", "diff") is not None:
            return []
        if writes is not None and given(opts, *writes) is None:
            return []
        found: list[Effect] = []
        for word in operands:
            found += each(at, [word], how)
            found += below(at, word, how, discards=False, names=MARKDOWN) if markdown else []
        return found

    return find


def _sd(args: tuple[Word, ...], at: Placer) -> list[Effect]:
    operands, opts = options(args, frozenset({"f", "flags", "n", "max-replacements"}))
    return [] if given(opts, "p", "preview") else [*each(at, operands[2:], "sd")]


_PRETTIER = "config ignore-path parser plugin log-level cache-location print-width tab-width"
_MDFORMAT = "wrap end-of-line extensions codeformatters"
_WRITES_W = frozenset({"w", "write"})
_FIX = frozenset({"fix"})
_IN_PLACE = frozenset({"i", "in-place"})

FINDERS: dict[str, Finder] = {
    "tee": _tee,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "awk": _awk,
    "gawk": _awk,
    "sort": _sort,
    "sponge": _sponge,
    "patch": _patch,
    "cp": _copy("cp"),
    "install": _copy("install"),
    "mv": _copy("mv", moves=True),
    "ln": _copy("ln", links=True),
    "rm": _rm,
    "unlink": _unlink,
    "dd": _dd,
    "truncate": _truncate,
    "curl": _download("curl -o", ("o", "output"), "H d X u A e b c F T w x m r K"),
    "wget": _download("wget -O", ("O", "output-document"), "o a P e U t"),
    "prettier": _formatter("prettier --write", _WRITES_W, _PRETTIER, markdown=True),
    "mdformat": _formatter("mdformat", None, _MDFORMAT, markdown=True),
    "markdownlint": _formatter("markdownlint --fix", _FIX, "c config i ignore", markdown=True),
    "markdownlint-cli2": _formatter("markdownlint-cli2 --fix", _FIX, markdown=True),
    "clang-format": _formatter("clang-format -i", frozenset({"i"}), "style assume-filename"),
    "gofmt": _formatter("gofmt -w", frozenset({"w"})),
    "shfmt": _formatter("shfmt -w", _WRITES_W, "i ln"),
    "yapf": _formatter("yapf -i", _IN_PLACE, "style"),
    "autopep8": _formatter("autopep8 -i", _IN_PLACE),
    "sd": _sd,
}
FINDERS["find"] = partial(find_effects, finders=FINDERS)
FINDERS["git"] = git_effects

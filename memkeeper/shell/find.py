"""``find PATH… EXPRESSION``: the files it reaches and what its actions do to them. Pure.

Read: the start paths (default ``.``), ``-name``/``-iname`` (also after ``!`` or ``-not``),
``-maxdepth``/``-mindepth``, ``-type f``, and the actions ``-delete`` and ``-exec``/
``-execdir``/``-ok``/``-okdir CMD … {} ;|+``, whose CMD is read by the same finders as a
command of its own, ``{}`` standing for each file found. Any other test or operator (``-o``,
``-path``, ``-newer``, parentheses…) makes the files reached unknown: nothing is reported.
"""

from __future__ import annotations

import os

from memkeeper.shell.effects import SEARCHED, Effect, Finder, NameTest, Placer, Sweep, place
from memkeeper.shell.options import DOT
from memkeeper.shell.walk import strip

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.shell.parse import Word

_NEUTRAL = frozenset(
    {"-a", "-and", "-print", "-print0", "-ls", "-depth", "-xdev", "-mount", "-noleaf"}
)
_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


class _Reach:
    __slots__ = ("names", "mindepth", "maxdepth", "actions", "named")

    def __init__(self) -> None:
        self.names: list[NameTest] = []
        self.mindepth = 0
        self.maxdepth: int | None = None
        self.actions: list[tuple[str, bool]] = []  # (how, discards) per file
        self.named: list[Effect] = []  # what the actions do to paths they name


def find(args: tuple[Word, ...], at: Placer, *, finders: Mapping[str, Finder]) -> list[Effect]:
    """What ``find ARGS`` (run where ``at`` places paths) does; ``finders`` read ``-exec``."""
    i = 0
    while i < len(args) and args[i].text in ("-H", "-L", "-P"):
        i += 1
    starts = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!")):
        starts.append(args[i])
        i += 1
    reach = _expression(args[i:], at, finders)
    if reach is None:
        return []
    where = at(DOT) or ""
    out: list[Effect] = list(reach.named)
    for start in starts or [DOT]:
        top = at(start)
        if top is None:
            continue
        sweep = Sweep(top, "find", where, mindepth=reach.mindepth, maxdepth=reach.maxdepth)
        sweep = sweep._replace(names=tuple(reach.names), follow=start.text.endswith("/"))
        out += [sweep._replace(how=how, discards=gone) for how, gone in reach.actions]
    return out


def _expression(
    words: tuple[Word, ...], at: Placer, finders: Mapping[str, Finder]
) -> _Reach | None:
    reach, i, negated = _Reach(), 0, False
    while i < len(words):
        text, value = words[i].text, words[i + 1] if i + 1 < len(words) else None
        if text in ("!", "-not"):
            negated, i = not negated, i + 1
            continue
        if text in ("-name", "-iname") and value is not None and value.plain:
            reach.names.append((value.text, text == "-iname", negated))
            negated, i = False, i + 2
            continue
        if negated:
            return None  # `! -type d`, `! -path …`: not worth guessing
        if text in ("-maxdepth", "-mindepth") and value is not None and value.text.isdigit():
            if text == "-maxdepth":
                reach.maxdepth = int(value.text)
            else:
                reach.mindepth = int(value.text)
            i += 2
        elif text == "-type" and value is not None and value.text == "f":
            i += 2
        elif text in _NEUTRAL:
            i += 1
        elif text == "-delete":
            reach.actions.append(("find -delete", True))
            i += 1
        elif text in _ACTIONS:
            end = _action_end(words, i + 1)
            if end is None:
                return None
            _action(text, words[i + 1 : end], at, finders, reach)
            i = end + 1
        else:
            return None
    return reach


def _action_end(words: tuple[Word, ...], start: int) -> int | None:
    """The index of the ``;`` (or of ``+`` right after ``{}``) that ends an ``-exec``."""
    for j in range(start, len(words)):
        if words[j].text == ";" or (words[j].text == "+" and words[j - 1].text == "{}"):
            return j
    return None


def _action(
    kind: str, command: tuple[Word, ...], at: Placer, finders: Mapping[str, Finder], reach: _Reach
) -> None:
    """Read ``-exec COMMAND``: what it does to ``{}`` goes to ``reach.actions``, what it does
    to a path it names to ``reach.named``."""
    words = strip(command)
    if not words or not words[0].plain:
        return
    finder = finders.get(os.path.basename(words[0].text))
    if finder is None:
        return
    in_place = kind in ("-exec", "-ok")  # `-execdir` runs in each file's directory

    def at_found(word: Word) -> str | None:
        if word.text == "{}":
            return SEARCHED
        return at(word) if in_place else place(None, word)

    for effect in finder(words[1:], at_found):
        if isinstance(effect, Sweep):
            if effect.top != SEARCHED:
                reach.named.append(effect)
        elif effect.path == SEARCHED:
            reach.actions.append((f"find {kind} {effect.how}", effect.discards))
        else:
            reach.named.append(effect)

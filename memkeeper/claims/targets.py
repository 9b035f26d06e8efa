"""Claim targets: canonical spelling, overlap and coverage, on whole path segments.

A target is a path, a directory (trailing ``/``), a glob or ``PATH#KEY``, relative to the root.
A path covers itself and everything below it, on whole segments, slash or no slash. Globs take
gitignore wildcards (``*``, ``?``, ``[...]`` in a segment, ``**`` across segments) but are anchored
at the root like every other target (``*.md`` is the root's, ``**/*.md`` all of them) and cover
what they match and everything below it. Pure functions; globs compile to cached regexes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import NoReturn

from memkeeper import limits
from memkeeper.errors import Invalid

_WILDCARDS = re.compile(r"[*?\[]")


# --- targets -----------------------------------------------------------------------------


def normalize_target(target: str) -> str:
    """The canonical form of a claim target, or ``Invalid`` saying how to write it."""
    if "\x00" in target or len(target) > limits.MAX_TARGET_CHARS:
        shown = target if len(target) <= 60 else target[:60] + "…"
        what = "contains a NUL character" if "\x00" in target else f"is {len(target):,} characters"
        _bad(
            shown,
            f"{what} — a target is a path, a glob or PATH#KEY of at most "
            f"{limits.MAX_TARGET_CHARS} characters, without NUL",
        )
    path, sep, key = target.partition("#")
    if path.startswith("/"):
        _bad(target, "is absolute — give a path relative to the repository root")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        _bad(target, "climbs out with '..' — name it relative to the root without '..'")
    if not parts:
        _bad(target, "names no file — give a path, a glob, PATH#KEY, or '**' for everything")
    norm = "/".join(parts) + ("/" if path.endswith("/") else "")
    if sep:
        norm += "#" + _normalize_key(target, key, norm.endswith("/"))
    for segment in _parse(norm)[0]:
        _segment(segment)  # compiles every glob now, so a bad one is a usage error here
    return norm


def _normalize_key(target: str, key: str, directory: bool) -> str:
    if directory:
        _bad(target, "puts a section on a directory — name a file, or drop '#KEY'")
    key = "/".join(part for part in key.split("/") if part)
    if not key:
        _bad(target, "has an empty section key — write PATH#KEY, e.g. CLAUDE.md#build")
    return key


def _bad(target: str, problem: str) -> NoReturn:
    raise Invalid(f"claim target {target!r} {problem}", reason="bad_target")


def targets_overlap(a: str, b: str) -> bool:
    """Could a write under one target touch what the other names? Conservative for globs.

    A path without a trailing slash may be a directory, so ``**/*.py`` meets ``notes.md``;
    a ``PATH#KEY`` target is a file, so ``**/*.py`` does not meet ``notes.md#intro``.
    """
    path_a, key_a = _parse(a)
    path_b, key_b = _parse(b)
    if not _paths_meet(path_a, path_b, key_a is not None, key_b is not None):
        return False
    return key_a is None or key_b is None or _key_within(key_a, key_b) or _key_within(key_b, key_a)


@functools.lru_cache(maxsize=4096)
def any_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Does some target of ``a`` overlap some target of ``b`` (``targets_overlap``)? Cached:
    a queue asks it of the same two target lists again and again."""
    return any(targets_overlap(x, y) for x in a for y in b)


def covers(claim_target: str, target: str) -> bool:
    """Does ``claim_target`` cover the concrete file or section ``target`` (never a glob)?"""
    pattern, claim_key = _parse(claim_target)
    path, sep, key = target.partition("#")
    whole = claim_key is not None  # a section claim covers sections of that file, not below it
    if not _pattern_covers(pattern, tuple(path.rstrip("/").split("/")), whole=whole):
        return False
    return claim_key is None or (bool(sep) and _key_within(key, claim_key))


def _key_within(key: str, outer: str) -> bool:
    return key == outer or key.startswith(outer + "/")


@functools.lru_cache(maxsize=4096)
def _parse(target: str) -> tuple[tuple[str, ...], str | None]:
    """Glob segments (literal paths escaped) and the section key of a normalized target."""
    path, sep, key = target.partition("#")
    parts = path.rstrip("/").split("/")
    if not _WILDCARDS.search(path):
        return tuple(re.sub(r"([*?\[\\])", r"\\\1", part) for part in parts), key if sep else None
    segments = [p for i, p in enumerate(parts) if not (p == "**" and parts[i - 1 : i] == ["**"])]
    return tuple(segments), key if sep else None


@dataclass(frozen=True, slots=True)
class _Segment:
    regex: re.Pattern[str]
    literal: str | None  # the exact text when there is no wildcard
    prefix: str  # literal text before the first wildcard
    suffix: str  # literal text after the last one


@functools.lru_cache(maxsize=4096)
def _segment(glob: str) -> _Segment:
    pieces: list[tuple[str, str | None]] = []
    i = 0
    while i < len(glob):
        source, char, i = _next_piece(glob, i)
        pieces.append((source, char))
    chars = [char for _, char in pieces]
    cut = chars.index(None) if None in chars else len(chars)
    tail = chars[::-1].index(None) if None in chars else len(chars)
    try:
        regex = re.compile("".join(source for source, _ in pieces))
    except re.error as exc:
        raise Invalid(
            f"bad glob segment {glob!r}: {exc} — fix the [...] class", reason="bad_target"
        ) from None
    literal = "".join(c or "" for c in chars) if cut == len(chars) else None
    prefix = "".join(c or "" for c in chars[:cut])
    return _Segment(regex, literal, prefix, "".join(c or "" for c in chars[len(chars) - tail :]))


def _next_piece(glob: str, i: int) -> tuple[str, str | None, int]:
    """One glob token at ``i``: its regex, its literal char (None for a wildcard), next index."""
    char = glob[i]
    if char == "\\" and i + 1 < len(glob):
        return re.escape(glob[i + 1]), glob[i + 1], i + 2
    if char in "*?":
        return ("[^/]*" if char == "*" else "[^/]"), None, i + 1
    end = _class_end(glob, i) if char == "[" else -1
    if end < 0:
        return re.escape(char), char, i + 1
    return _class(glob[i + 1 : end]), None, end + 1


def _class_end(glob: str, i: int) -> int:
    """Index of the ``]`` closing the class opened at ``i`` (a first ``]`` is literal), or -1."""
    j = i + 1 + (glob[i + 1 : i + 2] in ("!", "^"))
    return glob.find("]", j + (glob[j : j + 1] == "]"))


def _class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    last = len(body) - 1
    chars = (c if c == "-" and 0 < k < last else re.escape(c) for k, c in enumerate(body))
    return ("[^" if negate else "[") + "".join(chars) + "]"


def _segments_meet(a: _Segment, b: _Segment) -> bool:
    if a.literal is not None:
        return b.regex.fullmatch(a.literal) is not None
    if b.literal is not None:
        return a.regex.fullmatch(b.literal) is not None
    prefixes = a.prefix.startswith(b.prefix) or b.prefix.startswith(a.prefix)
    return prefixes and (a.suffix.endswith(b.suffix) or b.suffix.endswith(a.suffix))


@functools.lru_cache(maxsize=4096)
def _paths_meet(a: tuple[str, ...], b: tuple[str, ...], a_file: bool, b_file: bool) -> bool:
    """Is some path one matches equal to, or below, a path the other matches? A file has
    nothing below it."""

    @functools.cache
    def meet(i: int, j: int) -> bool:
        if i == len(a) or j == len(b):
            return (i == len(a) or not b_file) and (j == len(b) or not a_file)
        if a[i] == "**":  # matches nothing, or swallows what b[j] matches
            return meet(i + 1, j) or meet(i, j + 1)
        if b[j] == "**":
            return meet(i, j + 1) or meet(i + 1, j)
        return _segments_meet(_segment(a[i]), _segment(b[j])) and meet(i + 1, j + 1)

    return meet(0, 0)


def _pattern_covers(
    pattern: tuple[str, ...], path: tuple[str, ...], *, whole: bool = False
) -> bool:
    """Does ``pattern`` match ``path`` or one of its ancestors (a trailing ``**`` needs one)?
    With ``whole``, only ``path`` itself: a file has nothing below it."""

    def walk(i: int, j: int) -> bool:
        if i == len(pattern):
            return not whole or j == len(path)
        if j == len(path):
            return False
        if pattern[i] == "**":
            return walk(i + 1, j) or walk(i, j + 1)
        return bool(_segment(pattern[i]).regex.fullmatch(path[j])) and walk(i + 1, j + 1)

    return walk(0, 0)

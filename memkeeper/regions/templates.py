"""The template language of generated regions: syntax only, no evaluation (see ``render``).

A template named in the policy (``templates: {NAME: TEXT}``) is literal Markdown with
substitutions over the three things memkeeper renders::

    Latest decisions:
    {{ events | types=entry.appended | limit=5 | each="- {date} {actor}: {data.title}" }}
    {{ claims | count }} live claim(s); {{ reconciliations | count }} open reconciliation(s).

``{{ SOURCE | FILTER | ... }}`` where SOURCE is ``events``, ``claims`` or ``reconciliations``
and the filters are ``types=A,B`` (events), ``actor=ID`` (an event's actor or a claim's
agent), ``path=P`` (a path or directory), ``limit=N`` (the newest N), ``each="FORMAT"`` (one
line per item, ``{FIELD}`` placeholders), ``empty="TEXT"`` and ``count``. A region marker
takes the same filters as ``KEY=VALUE`` arguments: ``<!-- memkeeper:generated
source=events types=entry.appended limit=5 -->``.

Safe by construction: a placeholder names a field from a fixed list (or a key of an event's
``data``), there is no expression, attribute access, loop or include, and the renderer
flattens every value to one line with ``<`` escaped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

SOURCES = ("claims", "events", "reconciliations", "work")
FIELDS = {
    "events": ("id", "ts", "date", "time", "actor", "type", "path", "section", "where"),
    "claims": ("id", "token", "agent", "mode", "targets", "priority", "strict", "expires", "idle"),
    "reconciliations": ("id", "path", "region", "opened_by", "opened_at"),
    "work": ("id", "title", "state", "priority", "paths", "after", "agent", "claim", "who"),
}
MAX_LIMIT = 1000
_TOKEN = re.compile(
    r'\s*(?:(?P<end>\}\})|(?P<pipe>\|)|(?P<eq>=)|"(?P<str>(?:[^"\\\n]|\\.)*)"|(?P<word>[^\s|="}]+))'
)
_ESCAPES = {"n": "\n", '"': '"', "\\": "\\"}
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class TemplateError(ValueError):
    """A mistake in a template or in a marker's filters; the message says what and how to fix."""


@dataclass(frozen=True, slots=True)
class Query:
    """One substitution: which items of which source, and how to show them."""

    source: str
    types: tuple[str, ...] = ()
    actor: str | None = None
    path: str | None = None
    limit: int | None = None
    each: tuple[str | tuple[str, ...], ...] | None = None  # literal text or a field path
    empty: str | None = None
    count: bool = False


Part = str | Query


def parse_template(text: str) -> tuple[Part, ...]:
    """Literal text and substitutions, in order; ``TemplateError`` names the template line."""
    parts: list[Part] = []
    at = 0
    while (opening := text.find("{{", at)) != -1:
        if opening > at:
            parts.append(text[at:opening])
        line = text.count("\n", 0, opening) + 1
        try:
            query, at = _substitution(text, opening + 2)
        except TemplateError as exc:
            raise TemplateError(f"template line {line}: {exc}") from None
        parts.append(query)
    if at < len(text):
        parts.append(text[at:])
    return tuple(parts)


def _substitution(text: str, at: int) -> tuple[Query, int]:
    words: list[tuple[str, str]] = []
    while True:
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise TemplateError("`{{` is never closed by `}}` — close the substitution")
        at = match.end()
        kind = match.lastgroup
        assert kind is not None
        if kind == "end":
            return query_from(_filters(words)), at
        value = match.group(kind)
        words.append((kind, _unescape(value) if kind == "str" else value))


def _filters(words: list[tuple[str, str]]) -> list[tuple[str, str | None]]:
    """``events | limit=5 | count`` as ``[("events", None), ("limit", "5"), ("count", None)]``."""
    groups: list[list[tuple[str, str]]] = [[]]
    for kind, value in words:
        if kind == "pipe":
            groups.append([])
        else:
            groups[-1].append((kind, value))
    return [_filter(group) for group in groups]


def _filter(group: list[tuple[str, str]]) -> tuple[str, str | None]:
    kinds = [kind for kind, _ in group]
    if kinds == ["word"]:
        return group[0][1], None
    if kinds in (["word", "eq", "word"], ["word", "eq", "str"]):
        return group[0][1], group[2][1]
    shown = " ".join(value for _, value in group) or "nothing"
    raise TemplateError(f"cannot read {shown!r} — write SOURCE | FILTER=VALUE | …")


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)


def query_from(items: list[tuple[str, str | None]]) -> Query:
    """A ``Query`` from a source name and its filters (also a marker's KEY=VALUE arguments)."""
    (source, arg), *filters = items
    if source not in SOURCES or arg is not None:
        raise TemplateError(f"unknown source {source!r} — use one of {', '.join(SOURCES)}")
    query = Query(source)
    for name, value in filters:
        query = _apply(query, name, value)
    return query


def _apply(query: Query, name: str, value: str | None) -> Query:
    if name == "count" and value is None:
        return replace(query, count=True)
    if value is None:
        raise TemplateError(f"filter {name!r} needs a value — write {name}=VALUE")
    if name in ("types", "type") and query.source == "events":
        return replace(query, types=tuple(t for t in value.split(",") if t))
    if name == "actor":
        return replace(query, actor=value)
    if name == "path":
        return replace(query, path=value)
    if name == "empty":
        return replace(query, empty=value)
    if name == "limit":
        return replace(query, limit=_limit(value))
    if name == "each":
        return replace(query, each=parse_format(value, query.source))
    known = "types, actor, path, limit, each, empty, count"
    raise TemplateError(f"unknown filter {name!r} for {query.source} — use {known}")


def _limit(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
        raise TemplateError(f"bad limit {value!r} — give a whole number from 1 to {MAX_LIMIT}")
    return int(value)


def parse_format(text: str, source: str) -> tuple[str | tuple[str, ...], ...]:
    """``"- {actor}: {data.title}"`` as literal text and field paths; ``{{``/``}}`` are braces."""
    parts: list[str | tuple[str, ...]] = []
    at = 0
    for match in _PLACEHOLDER.finditer(text):
        parts.append(text[at : match.start()])
        at = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        elif match.group(1) is None:
            raise TemplateError(f"lone {token!r} in each= — write {token * 2} for a brace")
        else:
            parts.append(_field(match.group(1).strip(), source))
    parts.append(text[at:])
    return tuple(part for part in parts if part != "")


def _field(name: str, source: str) -> tuple[str, ...]:
    path = tuple(name.split("."))
    if source == "events" and path[0] == "data" and len(path) > 1 and all(path):
        return path
    if len(path) == 1 and name in FIELDS[source]:
        return path
    extra = ", data.KEY" if source == "events" else ""
    raise TemplateError(
        f"unknown field {{{name}}} for {source} — use {', '.join(FIELDS[source])}{extra}"
    )

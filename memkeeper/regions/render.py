"""Rendering generated regions: built-in sources and policy templates over a frozen ``Context``.

Pure. The shell (``regen``) gathers the events, live claims and open reconciliations, leaves
out everything about private files, adds the policy's file rules (for ``howto``), and hands
them over; rendering the same context twice gives the same text. ``region.regenerated``
events are never shown: a regen that showed its own event would change the page again on
every run. Every value is flattened to one line, stripped of hidden characters, with ``<``
escaped, so no rendered text can hold a marker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memkeeper.errors import Invalid
from memkeeper.events import iso_utc
from memkeeper.markdown.hiddentext import strip_hidden
from memkeeper.regions.markers import looks_like_marker
from memkeeper.regions.templates import SOURCES, TemplateError, parse_template, query_from

if TYPE_CHECKING:
    from memkeeper.coordination import ClaimView, Reconciliation
    from memkeeper.records import Event
    from memkeeper.regions.markers import Region
    from memkeeper.regions.templates import Part, Query
    from memkeeper.work.items import Item

HOWTO = "howto"  # the built-in source that tells agents how to change each memory file
NEVER_SHOWN = frozenset({"region.regenerated"})
DEFAULT_EVENT_LIMIT = 10
MAX_VALUE = 200
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
_EMPTY = {
    "claims": "_No live claims._",
    "events": "_No events yet._",
    "reconciliations": "_No open reconciliations._",
    "work": "_No work ready or in progress._",
}


@dataclass(frozen=True, slots=True)
class RuleView:
    """One file rule of the policy as ``howto`` shows it: the glob as written, the class,
    ``strict``, its section rules as ``(key, owners or None for anyone, strict)`` and the
    entry template."""

    path: str
    file_class: str
    strict: bool = False
    sections: tuple[tuple[str, tuple[str, ...] | None, bool], ...] = ()
    entry_template: str | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """What regions are rendered from: events oldest first, the live claims and the open
    reconciliations (none of them about a private file), and the policy's rules in order."""

    events: tuple[Event, ...] = ()
    claims: tuple[ClaimView, ...] = ()
    reconciliations: tuple[Reconciliation, ...] = ()
    rules: tuple[RuleView, ...] = ()
    work: tuple[Item, ...] = ()  # every work item, as the live claims leave it


Renderer = Callable[[Context], str]


def compile_region(region: Region, templates: Mapping[str, str], path: str) -> Renderer:
    """The region's renderer; ``Invalid`` naming the marker's line for a bad source or filter."""
    where = f"{path}:{region.start_line}"
    try:
        if region.source in SOURCES:
            query = query_from([(region.source, None), *region.args])
            return lambda context: _checked(where, _block(query, context))
        if region.source == HOWTO and HOWTO not in templates:  # a policy's own template wins
            if region.args:
                raise TemplateError("howto takes no arguments — keep only id=")
            return lambda context: _checked(where, howto(context.rules))
        if region.source in templates:
            if region.args:
                raise TemplateError("a template region takes no arguments — keep only id=")
            parts = parse_template(templates[region.source])
            return lambda context: _checked(where, _template(parts, context))
    except TemplateError as exc:
        what = f"region {region.id!r} (source {region.source!r}): {exc}"
        raise Invalid(f"{where}: {what}", path=path, line=region.start_line) from None
    known = ", ".join([*sorted({*SOURCES, HOWTO}), *sorted(templates)])
    raise Invalid(
        f"{where}: unknown source {region.source!r} — use one of {known}, or name a template "
        "under `templates:` in .memkeeper.yaml",
        path=path,
        line=region.start_line,
    )


def _checked(where: str, text: str) -> str:
    for line in text.splitlines():
        if looks_like_marker(line.encode()):
            raise Invalid(
                f"{where}: the template renders a memkeeper marker line ({line.strip()!r}) — "
                "remove it from the template"
            )
    return text


def _block(query: Query, context: Context) -> str:
    return "\n".join(_lines(query, context)) + "\n"


def _template(parts: tuple[Part, ...], context: Context) -> str:
    text = "".join(p if isinstance(p, str) else "\n".join(_lines(p, context)) for p in parts)
    return text if text.endswith("\n") else text + "\n"


def _lines(query: Query, context: Context) -> list[str]:
    items = select(query, context)
    if query.count:
        return [str(len(items))]
    if not items:
        return [query.empty if query.empty is not None else _EMPTY[query.source]]
    if query.each is not None:
        return [_format(query.each, item) for item in items]
    return _DEFAULTS[query.source](items)


# -- selecting ------------------------------------------------------------------------------


def select(query: Query, context: Context) -> list[dict[str, Any]]:
    """The items a query shows, newest first for events, as field dictionaries."""
    if query.source == "events":
        events = [e for e in reversed(context.events) if _event_matches(query, e)]
        return [event_fields(e) for e in events[: query.limit or DEFAULT_EVENT_LIMIT]]
    if query.source == "claims":
        claims = [claim_fields(c) for c in context.claims]
        found = [c for c in claims if _claim_matches(query, c)]
    elif query.source == "work":
        found = [w for w in work_fields(context.work) if _work_matches(query, w)]
    else:
        found = [r.to_json() for r in context.reconciliations if _under(r.path, query.path)]
    return found[: query.limit] if query.limit else found


def work_fields(items: Sequence[Item]) -> list[dict[str, Any]]:
    """Who works on what (the claimed items, by id), then the ready items in the order
    ``work next`` hands them out; ``paths`` joined, ``who`` the holder or ``ready``."""
    from memkeeper.work.rules import ready_list

    shown = [i for i in items if i.state == "claimed"] + ready_list(items)
    return [
        {**i.to_json(), "paths": ", ".join(i.paths), "path_list": list(i.paths),
         "who": i.agent if i.state == "claimed" else "ready"}
        for i in shown
    ]  # fmt: skip


def _work_matches(query: Query, item: dict[str, Any]) -> bool:
    paths = [p.partition("#")[0] for p in item["path_list"]] or [None]
    return query.actor in (None, item["agent"]) and any(_under(p, query.path) for p in paths)


def _event_matches(query: Query, event: Event) -> bool:
    return (
        event.type not in NEVER_SHOWN
        and (not query.types or event.type in query.types)
        and query.actor in (None, event.actor)
        and _under(event.path, query.path)
    )


def _claim_matches(query: Query, claim: dict[str, Any]) -> bool:
    paths = [t.partition("#")[0] for t in claim["target_list"]]
    return query.actor in (None, claim["agent"]) and any(_under(p, query.path) for p in paths)


def _under(path: object, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if not isinstance(path, str):
        return False
    return path == wanted.rstrip("/") or path.startswith(wanted.rstrip("/") + "/")


def event_fields(event: Event) -> dict[str, Any]:
    shown = display_time(event.ts)
    where = (event.path or "") + (f"#{event.section}" if event.section else "")
    fields = event.to_json()
    fields.update(ts=shown, date=shown[:10], time=shown[11:], where=where)
    return fields


def claim_fields(claim: ClaimView) -> dict[str, Any]:
    """A claim's fields for templates: ``targets`` joined, ``target_list``, ``expires``,
    ``idle`` (``HH:MM`` UTC of the watchdog's idle mark, or empty)."""
    since = claim.idle_since or ""
    return {
        **claim.to_json(),
        "targets": ", ".join(claim.targets),
        "target_list": list(claim.targets),
        "expires": display_time(iso_utc(claim.expires_at)),
        "idle": since[11:16] if len(since) >= 16 and since[10] == "T" else since,
    }


def display_time(iso: str) -> str:
    """``2026-11-29T13:27:07.120Z`` as ``2026-11-29 13:27:07Z``."""
    if len(iso) >= 19 and iso[10] == "T":
        return f"{iso[:10]} {iso[11:19]}Z"
    return iso


# -- formatting -----------------------------------------------------------------------------


def clean(value: object) -> str:
    """A value as one safe line of Markdown text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict | list | tuple):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    else:
        text = str(value)
    text = _BREAKS.sub(" ", strip_hidden(text)).replace("<", "&lt;")
    text = text.replace("```", "\\`\\`\\`").replace("~~~", "\\~\\~\\~")
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _format(each: tuple[str | tuple[str, ...], ...], item: Mapping[str, Any]) -> str:
    return "".join(part if isinstance(part, str) else clean(_lookup(item, part)) for part in each)


def _lookup(item: Mapping[str, Any], path: tuple[str, ...]) -> object:
    value: object = item
    for name in path:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def _events(items: list[dict[str, Any]]) -> list[str]:
    return [f"- {clean(e['ts'])} {clean(e['actor'])} {clean(e['type'])}{_detail(e)}" for e in items]


def _detail(event: Mapping[str, Any]) -> str:
    data = event["data"] if isinstance(event.get("data"), dict) else {}
    where = f" {clean(event['where'])}" if event.get("where") else ""
    if data.get("title"):
        return f"{where}: {clean(data['title'])}"
    if isinstance(data.get("targets"), list):
        return f"{where} {clean(', '.join(str(t) for t in data['targets']))}"
    return f"{where} (rev {clean(data['rev'])})" if "rev" in data else where


def _claims(items: list[dict[str, Any]]) -> list[str]:
    rows = ["| agent | mode | targets | expires (UTC) |", "| --- | --- | --- | --- |"]
    for c in items:
        mode = clean(c.get("mode")) + (" (strict)" if c.get("strict") else "")
        agent = clean(c["agent"]) + (f" (idle since {clean(c['idle'])})" if c.get("idle") else "")
        cells = [agent, mode, clean(c["targets"]), clean(c["expires"])]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return rows


def _reconciliations(items: list[dict[str, Any]]) -> list[str]:
    return [
        f"- #{clean(r.get('id'))} {clean(r.get('path'))} region {clean(r.get('region'))}, "
        f"opened by {clean(r.get('opened_by'))} {clean(display_time(str(r.get('opened_at'))))}"
        f" — `memkeeper reconcile show {clean(r.get('id'))}`"
        for r in items
    ]


def _work(items: list[dict[str, Any]]) -> list[str]:
    rows = ["| # | title | paths | priority | who |", "| --- | --- | --- | --- | --- |"]
    for w in items:
        cells = [clean(w["id"]), clean(w["title"]), clean(w["paths"]), clean(w["priority"])]
        cells.append(clean(w["who"]))
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return rows


_DEFAULTS: dict[str, Callable[[list[dict[str, Any]]], list[str]]] = {
    "claims": _claims,
    "events": _events,
    "reconciliations": _reconciliations,
    "work": _work,
}


# -- howto: how to change each memory file ---------------------------------------------------

_CLASSES = ("section-owned", "append-only", "generated", "private")
_LEAD = (
    "Several agents share these files; memkeeper keeps their changes from being lost. Never "
    "rewrite a whole file: change it as its class says (the first pattern that matches wins)."
)
_STEPS = {
    "section-owned": (
        "- **section-owned**: change one section (a heading and its body) at a time, at the "
        "rev you read it at. An edit of just the lines you change is fine too.",
        "  - CLI: `memkeeper read PATH#KEY --json` (its `content` and `rev` N), then "
        "`memkeeper patch PATH#KEY --expect-rev N --body-file -` with the new body on stdin; "
        "`memkeeper sections PATH` lists the keys.",
        "  - MCP: `memory_read(ref)`, then `memory_patch(ref, body, expect_rev)`; "
        "`memory_sections(path)` lists the keys.",
        "  - A stale rev is a conflict (exit 3, `status: conflict`) that carries the section as "
        "it is now in `current`: merge your change into it and patch again with its `rev`. "
        "With `--merge` (MCP `merge: true`) memkeeper merges it for you when the two changes "
        "touch different lines; when they do not, your body is kept as a proposal "
        "(`memkeeper proposals`).",
    ),
    "append-only": (
        "- **append-only**: history. Add entries at the end; never change or delete one.",
        '  - CLI: `memkeeper append PATH --text "…"` (or `--entry-file -` for stdin).',
        "  - MCP: `memory_append(path, text)`.",
    ),
    "generated": (
        "- **generated**: memkeeper renders the text between the `memkeeper:generated` and "
        "`memkeeper:end` markers: never edit inside them (`memkeeper regen PATH` renders them "
        "again); change the rest as a section-owned file.",
    ),
    "private": ("- **private**: personal or scratch notes: memkeeper does not coordinate them.",),
}
_CLAIMS = (
    "Before a longer change, claim what you will touch and release it when done: "
    "`memkeeper claim PATH#KEY --ttl 300` (it prints the claim's ID), `memkeeper release ID`; "
    "MCP: `memory_claim(targets, ttl)`, `memory_release(id)`. A `busy` answer (exit 5) names "
    "who holds it. Give the CLI `--agent NAME` (or set `MEMKEEPER_AGENT`) so the history "
    "says who changed what."
)


def howto(rules: Sequence[RuleView]) -> str:
    """Which memory files are which class, in the policy's order (a glob given twice is
    shown once: its first rule is the one that matches), and how to change each class."""
    first: dict[str, RuleView] = {}
    for rule in rules:
        first.setdefault(rule.path, rule)
    shown = list(first.values())
    if not shown:
        return "_No memory files are managed: `.memkeeper.yaml` names none._\n"
    lines = [_LEAD, "", "| files | class | notes |", "| --- | --- | --- |"]
    lines += ["| " + " | ".join(_cell(c) for c in _row(rule)) + " |" for rule in shown]
    present = {rule.file_class for rule in shown}
    lines.append("")
    lines += [step for name in _CLASSES if name in present for step in _STEPS[name]]
    if present - {"private"}:
        lines += ["", _CLAIMS]
    return "\n".join(lines) + "\n"


def _row(rule: RuleView) -> tuple[str, str, str]:
    notes = []
    if rule.strict:
        notes.append("claims on it are strict (others' writes are refused)")
    if rule.file_class == "append-only":
        notes.append(
            "give only the entry's text: memkeeper adds its heading"
            if rule.entry_template
            else "each entry brings its own heading"
        )
    for key, owners, strict in rule.sections:
        who = "" if owners is None else _owners(owners)
        tight = "claims are strict" if strict else ""
        if who or tight:
            notes.append(f"{code(key)}: {', '.join(n for n in (who, tight) if n)}")
    return code(rule.path), clean(rule.file_class), "; ".join(notes)


def _owners(owners: tuple[str, ...]) -> str:
    if not owners:
        return "nobody may change it"
    return f"only {', '.join(clean(owner) for owner in owners)} may change it"


def code(value: object) -> str:
    """A value as one inline code span (fenced by more backticks than it holds)."""
    text = clean(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    fence = "`" * (longest + 1)
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")

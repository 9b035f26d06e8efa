"""What a region shows of the event log: its event queries, and the events each one matches.
Pure.

A region reads only what it shows. Its queries (an ``events`` region's own, or each
``{{ events … }}`` of its template) each show at most ``shown_limit`` events, the newest that
match. The shell (``ops.regen``) reads, for each query, just those (``store.recent_events``,
through the log's index by type when the query names types), and renders from the union of
what the queries read: each query's newest matches are all in it, and nothing newer that a
query matches is missing from it, so every region renders exactly as from the whole log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.regions.templates import SOURCES, Query, parse_template, query_from

if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.records import Event
    from memkeeper.regions.markers import Region

HOWTO = "howto"  # the built-in source that tells agents how to change each memory file
NEVER_SHOWN = frozenset({"region.regenerated"})
DEFAULT_EVENT_LIMIT = 10


def event_queries(region: Region, templates: Mapping[str, str]) -> tuple[Query, ...]:
    """The event queries ``region`` renders (none for claims, work, howto…), resolved as
    ``render.compile_region`` resolves its source; ``TemplateError`` for a bad one."""
    if region.source in SOURCES:
        if region.source != "events":
            return ()
        return (query_from([(region.source, None), *region.args]),)
    if region.source == HOWTO and HOWTO not in templates:
        return ()
    if region.source in templates:
        parts = parse_template(templates[region.source])
        return tuple(p for p in parts if isinstance(p, Query) and p.source == "events")
    return ()


def shown_limit(query: Query) -> int:
    """How many events ``query`` shows at most."""
    return query.limit or DEFAULT_EVENT_LIMIT


def event_matches(query: Query, event: Event) -> bool:
    """True when ``query`` would show ``event`` (the limit aside)."""
    return (
        event.type not in NEVER_SHOWN
        and (not query.types or event.type in query.types)
        and query.actor in (None, event.actor)
        and under(event.path, query.path)
    )


def under(path: object, wanted: str | None) -> bool:
    """True for ``path`` being ``wanted`` or inside it (anything, when ``wanted`` is None)."""
    if wanted is None:
        return True
    if not isinstance(path, str):
        return False
    return path == wanted.rstrip("/") or path.startswith(wanted.rstrip("/") + "/")

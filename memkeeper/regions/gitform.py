"""What git stores of a generated page (docs/reference.md §5, "Generated pages and git"): its
*stored form*, the clean filter's output, a pure function of the working file's bytes.

A live region changes whenever an agent claims, patches or emits; were git to store it, a
tracked page would be modified after every event and the next checkout refused. So git stores
each rendered region (its text matches its checksum) as one fixed ``PLACEHOLDER`` line, with
the checksum of that line on its end marker: the stored form is itself a valid, rendered page
— a fresh clone without memkeeper shows it, ``check`` passes it, a later render replaces it —
and cleaning it again changes nothing. A region edited by hand (its text no longer matches
its checksum) and one never rendered (no checksum) are stored as they are: a hand edit is
the human's, and git shows it. Everything outside the regions is stored byte for byte.

``restore`` is the way back for the daemon and ``regen``: the file git checked out, with each
placeholder holding the text it held before in the working tree (what the index holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.markdown.lines import LINE_END
from memkeeper.regions import markers

if TYPE_CHECKING:
    from memkeeper.regions.markers import Region

PLACEHOLDER = (
    "_Live region: memkeeper renders it in the working tree (`memkeeper regen`); "
    "git stores this line._"
)
_STORED = PLACEHOLDER.encode("utf-8") + b"\n"


def rendered(region: Region, data: bytes) -> bool:
    """A region memkeeper rendered and nobody edited since (its text matches its checksum)."""
    return region.checksum is not None and not region.edited(data)


def is_placeholder(region: Region, data: bytes) -> bool:
    """A region in its stored form: the placeholder line, its checksum on the end marker."""
    return rendered(region, data) and LINE_END.sub(b"\n", region.text(data)) == _STORED


def stored(data: bytes, path: str) -> bytes:
    """The page as git stores it: each rendered region's text replaced by ``PLACEHOLDER``
    (with its checksum); every other byte as it is. ``Invalid`` for broken markers (the clean
    filter then stores the bytes unchanged)."""
    found = markers.parse(data, path)
    live = [r for r in found if rendered(r, data) and not is_placeholder(r, data)]
    if not live:
        return data
    return markers.fill(data, live, {r.id: PLACEHOLDER for r in live})


def restore(data: bytes, live: bytes, path: str) -> bytes:
    """``data`` (a page git wrote, in its stored form) with each placeholder holding the text
    the same region holds, rendered, in ``live`` (the page as memkeeper last saw it); regions
    ``live`` lacks or has edited stay placeholders. ``data`` unchanged when it holds no
    placeholder, or when either file's markers are broken."""
    try:
        found = markers.parse(data, path)
        waiting = [r for r in found if is_placeholder(r, data)]
        if not waiting:
            return data
        before = {r.id: r for r in markers.parse(live, path) if rendered(r, live)}
    except Invalid:  # broken markers are for regen and check to report
        return data
    texts: dict[str, str] = {}
    for region in waiting:
        old = before.get(region.id)
        if old is None or is_placeholder(old, live):
            continue
        try:
            texts[region.id] = old.text(live).decode("utf-8")
        except UnicodeDecodeError:
            continue
    return markers.fill(data, found, texts) if texts else data

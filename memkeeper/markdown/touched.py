"""Which sections a change of a Markdown file touches (pure): the keys whose bytes differ
between two versions of the file — a section added, removed or changed, its heading line
included (a renamed heading is its old key and its new one). ``None`` when either version
is not text memkeeper can split (not UTF-8, a NUL): the change is then the whole file's.
"""

from __future__ import annotations

from memkeeper.errors import Invalid
from memkeeper.markdown.sections import split


def touched_sections(old: bytes | None, new: bytes | None) -> frozenset[str] | None:
    """The section keys that differ between ``old`` and ``new`` (None: a missing file)."""
    try:
        before = _texts(old)
        after = _texts(new)
    except Invalid:
        return None
    return frozenset(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _texts(data: bytes | None) -> dict[str, bytes]:
    if data is None:
        return {}
    doc = split(data)
    return {s.key: doc.text(s) for s in doc.sections}

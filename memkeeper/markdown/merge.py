"""Three-way merge of a Markdown file, one section at a time (pure).

When a writer that takes no lock (an editor, a formatter) saves a file while memkeeper
replaces it, memkeeper holds three versions: the ``base`` both started from, ``theirs`` (the
save) and ``ours`` (what memkeeper wrote). Sections are the unit, as everywhere in memkeeper:
a section changed on one side takes that side; changed the same way on both, either; changed
differently on both sides (or changed on one and deleted on the other) is a conflict, and
nothing is merged. Sections only one side added keep their place after the section that
precedes them on that side. A merge that would move a heading boundary (a section's text
swallowing the next heading) is a conflict too: the merged file must split into exactly
the sections chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

from memkeeper.markdown.lines import detect_newline
from memkeeper.markdown.sections import split


@dataclass(frozen=True, slots=True)
class SectionMerge:
    """The merged bytes (``None`` when a section conflicts) and what each side changed."""

    data: bytes | None
    conflicts: tuple[str, ...] = ()
    theirs: tuple[str, ...] = ()  # keys the save changed, added or deleted
    ours: tuple[str, ...] = ()  # keys memkeeper's write changed, added or deleted


def merge_sections(
    base: bytes, theirs: bytes, ours: bytes, path: str, *, ours_wins: bool = False
) -> SectionMerge:
    """Merge ``theirs`` and ``ours``, two edits of ``base``, section by section. A section
    both changed, differently, is a conflict (no ``data``) — or, with ``ours_wins``, ours
    (``conflicts`` then names those sections, and ``data`` holds the merge)."""
    b, t, o = (_texts(data, path) for data in (base, theirs, ours))
    keys = _order(list(t), list(o))
    changed_t = tuple(k for k in _union(b, t) if t.get(k) != b.get(k))
    changed_o = tuple(k for k in _union(b, o) if o.get(k) != b.get(k))
    conflicts = tuple(
        k for k in changed_t if k in changed_o and t.get(k) != o.get(k)
    )  # both sides touched it, differently
    if conflicts and not ours_wins:
        return SectionMerge(None, conflicts, changed_t, changed_o)
    chosen = [(k, o[k] if k in changed_o else t[k]) for k in keys if _kept(k, t, o, changed_o)]
    merged = _joined([text for _, text in chosen], detect_newline(theirs or ours))
    if [k for k, _ in chosen] != list(_texts(merged, path)):
        return SectionMerge(None, tuple(k for k, _ in chosen), changed_t, changed_o)
    return SectionMerge(merged, conflicts, changed_t, changed_o)


def _texts(data: bytes, path: str) -> dict[str, bytes]:
    """Each section's bytes (heading included) by key, in file order."""
    doc = split(data, path)
    return {s.key: doc.text(s) for s in doc.sections if doc.text(s)}


def _union(first: dict[str, bytes], second: dict[str, bytes]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _kept(key: str, t: dict[str, bytes], o: dict[str, bytes], changed_o: tuple[str, ...]) -> bool:
    """Is ``key`` in the merge: ours when memkeeper changed it (a deletion too), else theirs."""
    return key in o if key in changed_o else key in t


def _order(theirs: list[str], ours: list[str]) -> list[str]:
    """Their order, with each key only ours has placed after the key before it in ours."""
    out = list(theirs)
    for index, key in enumerate(ours):
        if key in out:
            continue
        before = next((k for k in reversed(ours[:index]) if k in out), None)
        out.insert(0 if before is None else out.index(before) + 1, key)
    return out


def _joined(texts: list[bytes], newline: bytes) -> bytes:
    """The sections end to end; one that lost its final line ending gets one before the next."""
    out = b""
    for text in texts:
        if out and not out.endswith((b"\n", b"\r")):
            out += newline
        out += text
    return out

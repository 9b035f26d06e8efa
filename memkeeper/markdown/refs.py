"""References to sections: ``PATH#KEY`` and how a key or a last segment names one section.

Hot path: stdlib only, so a ``read`` or ``patch`` of an indexed file resolves its reference
against the keys stored in the index without importing the Markdown parser.
"""

from __future__ import annotations

from memkeeper.errors import Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_ALL_KEYS_BELOW = 10  # an unknown reference lists every key when a file has fewer sections


def split_ref(ref: str) -> tuple[str, str | None]:
    """``"CLAUDE.md#build"`` -> ``("CLAUDE.md", "build")``; ``"x.md"`` -> ``("x.md", None)``.

    Keys never contain ``#``, so the reference splits at its last ``#``.
    """
    path, sep, key = ref.rpartition("#")
    if not sep:
        return ref, None
    if not path or not key:
        missing = "file path before" if not path else "section key after"
        raise Invalid(
            f"{ref}: no {missing} '#' — write PATH#KEY, or PATH alone for the whole file",
            ref=ref,
        )
    return path, key


def resolve_key(path: str, ref: str, keys: Iterable[tuple[str, str]]) -> str:
    """The key that ``ref`` names among ``(key, base)`` pairs in document order.

    An exact key wins; else ``ref`` must match exactly one section's last segment, with or
    without the ``-N`` suffix of equal siblings (its ``base``). Raises ``Invalid`` with
    ``candidates`` when the reference is unknown or ambiguous.
    """
    pairs = list(keys)
    if any(key == ref for key, _ in pairs):
        return ref
    hits = [key for key, base in pairs if ref in (base, key.rpartition("/")[2])]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise Invalid(
            f"{path}: '{ref}' names {len(hits)} sections — use the full key: {', '.join(hits)}",
            path=path,
            ref=ref,
            candidates=hits,
        )
    candidates = _closest(ref, [key for key, _ in pairs])
    raise Invalid(
        f"{path}: no section '{ref}' — {_hint(path, candidates, bool(pairs))}",
        path=path,
        ref=ref,
        candidates=candidates,
    )


def _closest(ref: str, keys: list[str]) -> list[str]:
    """Every key of a small file; else the keys whose name or last segment looks like ``ref``."""
    if len(keys) < _ALL_KEYS_BELOW:
        return keys
    import difflib  # only on this error path

    named: dict[str, list[str]] = {}
    for key in keys:
        named.setdefault(key, []).append(key)
        named.setdefault(key.rpartition("/")[2], []).append(key)
    found: list[str] = []
    for name in difflib.get_close_matches(ref, list(named), n=5, cutoff=0.5):
        found.extend(key for key in named[name] if key not in found)
    return found


def _hint(path: str, candidates: list[str], any_keys: bool) -> str:
    if candidates:
        return f"did you mean: {', '.join(candidates)}?"
    if any_keys:
        return f"run `memkeeper sections {path}` to list its keys"
    return "the file has no sections"

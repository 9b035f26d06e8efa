"""How big what callers hand memkeeper may be, checked where it comes in (pure).

Without bounds a number past 64 bits reaches SQLite as an internal error, a 10 MB claim target
takes half a minute to judge, and a NUL byte in a path or a target is taken for text. Each
check raises ``Invalid`` naming the value's field and the bound.
"""

from __future__ import annotations

from memkeeper.errors import Invalid

# The largest integer the stores keep (SQLite's INTEGER and etcd's revisions are 64-bit).
MAX_INT = 2**63 - 1
# A section's body, or an appended entry: far above any memory file's section, far below
# what a store's request (etcd: ~1.5 MB) can carry.
MAX_BODY_BYTES = 1024 * 1024
MAX_TARGETS = 256
MAX_TARGET_CHARS = 1024
MAX_OBJECTIVE_CHARS = 4096


def whole(value: int, what: str, *, signed: bool = False) -> int:
    """``value`` if it is a whole number the stores can keep (not below 0 unless
    ``signed``)."""
    low = -MAX_INT if signed else 0
    if not low <= value <= MAX_INT:
        raise Invalid(f"{what} must be a whole number from {low} to {MAX_INT}, not {value}")
    return value


def text(value: str, what: str, *, limit: int) -> str:
    """``value`` if it holds no NUL and is at most ``limit`` characters long."""
    if "\x00" in value:
        raise Invalid(f"{what} contains a NUL character — give text without one")
    if len(value) > limit:
        raise Invalid(f"{what} is {len(value):,} characters long; at most {limit:,} are kept")
    return value


def body(data: bytes, what: str) -> bytes:
    """``data`` if it is at most ``MAX_BODY_BYTES`` long."""
    if len(data) > MAX_BODY_BYTES:
        raise Invalid(
            f"{what} is {len(data):,} bytes; a body is at most {MAX_BODY_BYTES:,} — split it "
            "over several sections (or entries)"
        )
    return data

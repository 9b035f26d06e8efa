"""A git hook replaced only if it still holds what was read (docs/reference.md §4.20): a
compare-and-swap on the hook file against writers that take no lock of ours — an editor, a
hook manager, another ``install-hooks``.

POSIX has no "replace if unchanged", so the swap is built from moves that never overwrite:

1. our script goes to a temporary file beside the hook;
2. the hook is renamed aside (atomic: whatever is at its name then moves, nothing is lost);
3. what was moved is compared with what was read; a difference means someone saved in the
   meantime: their file is linked back (``os.link`` fails rather than overwrite) and the
   install is a ``Conflict``;
4. a foreign hook being kept is hard-linked to ``NAME.legacy`` — which fails, rather than
   overwrite, when that name exists (``Refused``: one legacy hook is kept, never replaced);
5. our script is linked in at the hook's name — which fails when a save made a new hook
   there while the name was free: that save stays, ours is dropped, ``Conflict``.

The guarantee: every version of the hook that anybody saved by renaming a file over it (as
editors and installers do) is either left at the hook's name or, having been compared byte
for byte with what we read, kept as ``NAME.legacy``; an ``install-hooks`` that loses a race
says so and leaves the winner's hook. The limits: for the microseconds between steps 2 and 5
the hook's name is free (a commit then runs no hook), and a writer that rewrites the file in
place after step 3 writes into the version we moved — kept as ``NAME.legacy`` when it was
foreign, dropped when it was our own older script.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.errors import Conflict, EnvironmentFailure, Refused

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

Seen = tuple[bool, "bytes | None"]  # (the name exists, its bytes when it is a file)
ABSENT: Seen = (False, None)


@dataclass(frozen=True, slots=True)
class HookNow:
    """What a lost swap found at the hook's name: its path, and its bytes' hash (``None``:
    not a readable file)."""

    path: str
    sha256: str | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256}


def seen(path: Path) -> Seen:
    """What is at ``path`` now (a symlink is read through; one to nothing has no bytes)."""
    if not os.path.lexists(path):
        return ABSENT
    try:
        return True, path.read_bytes()
    except (IsADirectoryError, FileNotFoundError):
        return True, None


def window() -> None:
    """Between the read and the swap: nothing (tests put a save of the hook here)."""


def swap(hook: Path, expected: Seen, script: bytes, keep_as: Path | None) -> None:
    """Put ``script`` (executable) at ``hook`` only if ``hook`` still is ``expected``; with
    ``keep_as``, the hook that was there is kept under that name (which must not exist)."""
    fd, temp = tempfile.mkstemp(prefix=f".{hook.name}.", suffix=".memkeeper", dir=hook.parent)
    aside = f"{temp}.old"
    kept = False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(script)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o755)
        window()
        if expected[0]:
            _move_aside(hook, aside, expected)
        try:
            if expected[0] and keep_as is not None:
                _keep(hook, aside, keep_as)
                kept = True
            _link_in(hook, temp)
        except BaseException:
            if kept and keep_as is not None:
                os.unlink(keep_as)
            if expected[0]:  # back where it was, unless a newer save took the name
                _put_back(aside, hook)
            raise
        _sync_dir(hook.parent)
    finally:
        for name in (temp, aside):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)


def _move_aside(hook: Path, aside: str, expected: Seen) -> None:
    try:
        os.rename(hook, aside)
    except FileNotFoundError:
        raise _changed(hook) from None
    moved = seen(type(hook)(aside))
    if moved != expected:
        _put_back(aside, hook)
        raise _changed(hook)


def _keep(hook: Path, aside: str, keep_as: Path) -> None:
    try:
        os.link(aside, keep_as, follow_symlinks=False)
    except FileExistsError:
        raise legacy_exists(hook, keep_as) from None
    except OSError as err:
        raise _no_links(hook, err) from None


def _link_in(hook: Path, temp: str) -> None:
    try:
        os.link(temp, hook)
    except FileExistsError:
        # a hook saved while the name was free: it stays, and supersedes the one moved aside
        raise _changed(hook) from None
    except OSError as err:
        raise _no_links(hook, err) from None


def _put_back(aside: str, hook: Path) -> None:
    """The version moved aside back at the hook's name — unless a newer save is there."""
    with contextlib.suppress(FileExistsError):
        os.link(aside, hook, follow_symlinks=False)


def _sync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _changed(hook: Path) -> Conflict:
    now = seen(hook)
    digest = None if now[1] is None else "sha256:" + hashlib.sha256(now[1]).hexdigest()
    return Conflict(
        f"{hook}: the hook changed while install-hooks was writing it — nothing was replaced; "
        "look at it, then run: memkeeper install-hooks",
        reason="hook_changed",
        expected={"path": str(hook)},
        current=HookNow(str(hook), digest),
        recover="memkeeper install-hooks",
    )


def legacy_exists(hook: Path, legacy: Path) -> Refused:
    return Refused(
        f"{hook}: a hook memkeeper did not write is there, and {legacy.name} already keeps an "
        f"earlier one — memkeeper keeps one legacy hook and never overwrites it: merge the two "
        f"into {legacy.name} (or delete one), then run: memkeeper install-hooks",
        reason="legacy_exists",
        path=str(hook),
        legacy=str(legacy),
    )


def _no_links(hook: Path, err: OSError) -> EnvironmentFailure:
    return EnvironmentFailure(
        f"{hook.parent}: cannot make a hard link there ({err.strerror}) — install-hooks needs "
        "them to replace a hook safely; point core.hooksPath at a directory on a local "
        "filesystem"
    )

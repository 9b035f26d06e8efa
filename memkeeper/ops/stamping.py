"""``Stamping``: one whole-repository look — ``check``, ``verify``, ``status``, the daemon's
start-up and rescans — that reads only the files whose stat stamp moved.

It loads every stamp this checkout recorded and every indexed file's hash once (two
statements), ``lstat``s each file it is asked about, and answers from the stamp when
``memkeeper.stamps`` says it can; a file it must read is read here, and when its bytes turn
out to be what the index (or a clean check) holds, its new stamp is recorded at the end, in
one transaction (``save``). With ``full`` nothing is taken from a stamp: every file is read
(and the stamps found are recorded, as a look that trusts them would).

The stamp is taken before the read, and the time before the stamp: a write during the read
leaves a stamp that no longer matches the file, or one too young to be trusted (``racy``).
"""

from __future__ import annotations

import os
import stat

from memkeeper.errors import EnvironmentFailure, MemkeeperError
from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.stamps import Stamped, judged_clean, kept_clean, racy, stamp_of, unchanged

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

    from memkeeper.clock import Clock
    from memkeeper.ops.workspace import Workspace
    from memkeeper.stamps import Stamp


# The modules whose code decides what ``check`` finds in a file's bytes.
JUDGES = (
    "memkeeper.ops.check",
    "memkeeper.markdown.hiddentext",
    "memkeeper.markdown.lines",
    "memkeeper.markdown.appendonly",
    "memkeeper.regions.markers",
    "memkeeper.regions.render",
    "memkeeper.regions.templates",
)


class Stamping:
    """The stamps known for ``ws``'s files (``known``, else the store's) and the ones this
    look found (``full``: trust none). Without a store it knows none and records none."""

    def __init__(
        self, ws: Workspace, *, full: bool = False, known: dict[str, Stamped] | None = None
    ) -> None:
        self.ws = ws
        self.full = full
        self.stored = ws.has_store
        self._known = known  # (a daemon's, kept between its scans: read from the store once)
        self._hashes: dict[str, str] | None = None
        self.seen: dict[str, tuple[Stamp, int]] = {}  # this look's stamps, and when taken
        self.found: list[Stamped] = []

    @property
    def known(self) -> dict[str, Stamped]:
        """Every stamp recorded, read once (by the first question that needs it)."""
        if self._known is None:
            self._known = self.ws.stamp_store.stamps() if self.stored else {}
        return self._known

    @property
    def hashes(self) -> dict[str, str]:
        """Every indexed file's hash, read once (by the first question that needs it)."""
        if self._hashes is None:
            self._hashes = self.ws.store.file_hashes() if self.stored else {}
        return self._hashes

    def indexed(self, rel: str) -> str | None:
        """The hash the index holds for ``rel`` (``None``: not indexed)."""
        return self.hashes.get(rel)

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s ``lstat`` now (``None``: nothing there), remembered as its stamp when it
        is a regular file."""
        taken_ns = int(self.ws.now() * 1e9)
        try:
            info = os.lstat(os.path.join(self.ws.top, rel))
        except (FileNotFoundError, NotADirectoryError):
            self.seen.pop(rel, None)
            return None
        if stat.S_ISREG(info.st_mode):
            self.seen[rel] = (stamp_of(info), taken_ns)
        else:
            self.seen.pop(rel, None)
        return info

    def _now(self, rel: str) -> Stamp | None:
        if rel not in self.seen:
            self.lstat(rel)
        seen = self.seen.get(rel)
        return None if seen is None else seen[0]

    def unchanged(self, rel: str) -> bool:
        """Whether ``rel`` surely holds what the index holds, unread (never with ``full``)."""
        return not self.full and unchanged(self.known.get(rel), self._now(rel), self.indexed(rel))

    def unchanged_among(self, rels: Iterable[str]) -> dict[str, str]:
        """The files among ``rels`` that surely hold what the index holds, with its hash: one
        pass of ``lstat``s (the time read once, before them all), each regular file's stamp
        remembered as ``lstat`` remembers it. None with ``full``."""
        if self.full:
            return {}
        known, hashes, seen, top = self.known, self.hashes, self.seen, self.ws.top
        taken_ns = int(self.ws.now() * 1e9)
        found = {}
        for rel in rels:
            try:
                info = os.lstat(os.path.join(top, rel))
            except OSError:  # gone, or not to be looked at: the caller's own look says how
                continue
            if stat.S_ISREG(info.st_mode):
                now, indexed = stamp_of(info), hashes.get(rel)
                seen[rel] = (now, taken_ns)
                if indexed is not None and unchanged(known.get(rel), now, indexed):
                    found[rel] = indexed
        return found

    def clean(self, rel: str, key: str) -> bool:
        """Whether ``rel`` surely holds bytes a check of ``key`` found clean, unread."""
        return not self.full and judged_clean(self.known.get(rel), self._now(rel), key)

    def read(self, rel: str, *, whole: bool = False) -> bytes:
        """``rel``'s bytes (``fs.files.read_bytes``), its stamp taken just before."""
        self.lstat(rel)
        return files.read_bytes(self.ws.top, rel, whole=whole)

    def note(self, rel: str, file_hash: str, *, clean: str | None = None) -> None:
        """Record that ``rel`` held the bytes hashing to ``file_hash`` at the stamp taken
        before it was read (and, with ``clean``, that a check of that key found nothing in
        them) — unless the stamp is too young to be trusted: then it is read again next time."""
        seen = self.seen.get(rel)
        if seen is None or racy(*seen):
            return
        new = Stamped(rel, seen[0], file_hash, seen[1], clean)
        old = self.known.get(rel)
        row = kept_clean(old, new)
        if row != old:
            self.found.append(row)

    def agrees(self, rel: str, data: bytes) -> bool:
        """Whether ``data`` (just read) is what the index holds; if so, noted (and, with a
        shared store, remembered as this root's agreement with it, as ``refresh`` does)."""
        file_hash = digest(data)
        if file_hash != self.indexed(rel):
            return False
        self.note(rel, file_hash)
        if self.ws.shared:
            state = self.ws.store.file_state(rel)
            if state is not None and state.file_hash == file_hash:
                self.ws.seen_agreeing(rel, state, data)
        return True

    def compare(self, rel: str) -> tuple[str, str | None]:
        """``rel``'s hash and the index's — the file unread when its stamp shows the index's
        bytes; read, its stamp noted when they agree (not with ``full``). ``Invalid``: it
        cannot be read."""
        if self.unchanged(rel):
            indexed = self.indexed(rel)
            return indexed or "", indexed
        data = self.read(rel)
        state = self.ws.store.file_state(rel)
        indexed = None if state is None else state.file_hash
        if not self.full and indexed == self.indexed(rel):  # (the state this look started on)
            self.agrees(rel, data)
        return digest(data), indexed

    def holds(self, rel: str) -> bool:
        """Whether ``rel`` holds what the index holds: by its stamp, else read. ``False`` for
        a file that cannot be read, or without a store."""
        if not self.stored:
            return False
        if self.unchanged(rel):
            return True
        try:
            data = self.read(rel)
        except MemkeeperError:  # gone, a symlink, unreadable: the caller's own look says so
            return False
        return self.agrees(rel, data)

    def save(self) -> None:
        """Record the stamps found, in one transaction. A store too busy to take them now
        costs only reads at the next look: the look goes on."""
        if not self.found or not self.stored:
            return
        found, self.found = self.found, []
        try:
            self.ws.stamp_store.put_stamps(found)
        except EnvironmentFailure:
            return
        self.known.update((row.path, row) for row in found)


class CheckStamps:
    """``check``'s use of the stamps of the root it judges (none without a store there): a
    file whose stamp shows bytes a check of the same key — the ``rules``, the policy's bytes
    and the code that judges (``JUDGES``) — found clean is not read again. An append-only
    file is always read: it is judged against git's ``HEAD`` too, which its stamp says
    nothing of. A context manager: the stamps found are recorded when the block ends."""

    def __init__(
        self, root: str, rules: tuple[str, ...], *, full: bool, clock: Clock | None = None
    ) -> None:
        from memkeeper.ops.workspace import Workspace
        from memkeeper.policy.loader import policy_bytes

        self.ws = Workspace(root, "check", clock)
        code = " ".join(_source_stamp(name) for name in JUDGES)
        key = "\0".join([" ".join(rules), code]).encode() + b"\0" + (policy_bytes(root) or b"")
        self.key = digest(key)
        self.seen: Stamping | None = None
        try:
            self.seen = Stamping(self.ws, full=full) if self.ws.has_store else None
        except EnvironmentFailure:  # a store that cannot be opened: check judges without it
            self.ws.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def clean(self, rel: str, file_class: str) -> bool:
        """Whether ``rel`` surely holds bytes found clean before (so it is not read)."""
        seen = self.seen
        return seen is not None and file_class != "append-only" and seen.clean(rel, self.key)

    def read(self, rel: str) -> bytes | None:
        """The bytes of a regular file (its stamp taken just before); ``None``: none there."""
        if self.seen is not None:
            self.seen.lstat(rel)
        return _regular(self.ws.top, rel)

    def judged(self, rel: str, file_class: str, data: bytes, *, clean: bool) -> None:
        """``rel``'s bytes ``data`` were judged; remember clean ones."""
        if self.seen is not None and clean and file_class != "append-only":
            self.seen.note(rel, digest(data), clean=self.key)

    def close(self) -> None:
        """Record the stamps found and let the store go."""
        try:
            if self.seen is not None:
                self.seen.save()
        finally:
            self.ws.close()


def _source_stamp(module: str) -> str:
    """The size and mtime of a module's source: a memkeeper installed again, or edited in a
    development checkout, may judge by other rules."""
    import importlib

    where = getattr(importlib.import_module(module), "__file__", None) or ""
    try:
        info = os.stat(where)
    except OSError:
        return f"{module}:?"
    return f"{module}:{info.st_size}:{info.st_mtime_ns}"


def _regular(top: str, rel: str) -> bytes | None:
    """The bytes of a regular file (not a symlink); ``None``: there is none."""
    full = os.path.join(top, rel)
    if os.path.islink(full) or not os.path.isfile(full):
        return None
    with open(full, "rb") as handle:
        return handle.read()

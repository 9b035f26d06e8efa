"""What the watch daemon should do about a batch of file changes: pure, no file system access.

The daemon (``daemon.py``) turns a raw batch from its change source into a ``Batch``
(``prep_changes``), looks at each dirty path on disk (a ``Look``: the file's hash now, the hash
the index holds), and asks ``plan`` what to do. Every change means only "dirty, re-hash": a
file whose bytes hash to what the index holds was written by memkeeper itself (or changed
back) and needs nothing. Which coordination events call for re-rendering generated regions is
``regen_due``; which directories to watch is ``watch_dirs``. What the daemon did comes back as
``Outcome`` values (``describe`` turns an event it caused into one).

Two kinds of waiting keep the daemon off other writers' toes (docs/reference.md §11):

- **Quiet.** A changed file is indexed only once its bytes have stayed the same for
  ``INDEX_QUIET_S`` — ``QUIET_S`` for a generated file, whose indexing renders it, i.e.
  rewrites it (a save in several writes is one change; a half-written state is never
  indexed), and a generated file with a change not indexed yet is not re-rendered: ``settle``
  decides.
- **Git.** While git works in the tree (``GIT_BUSY`` in its directory, or anything in it
  changing) the daemon indexes and renders nothing; what changed meanwhile is git's, indexed
  as the actor ``git``, and events git's changes caused do not re-render tracked pages.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from memkeeper.names import HOME_DIR, POLICY_FILE, STATE_DB, temp_pid

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from memkeeper.records import Event

STORE_FILES = frozenset({f"{HOME_DIR}/{STATE_DB}", f"{HOME_DIR}/{STATE_DB}-wal"})
# Events that never call for a re-render: a regen's own (regions never show them).
QUIET_EVENTS = frozenset({"region.regenerated"})
QUIET_S = 1.0  # a generated file is re-rendered once nobody has changed it for this long
INDEX_QUIET_S = 0.2  # any other file is indexed once its bytes have held this long
GIT_ACTOR = "git"
# In git's directory while git works in the tree: its index lock, a merge, cherry-pick,
# revert or rebase in progress (until it is finished or aborted).
GIT_BUSY = (
    "index.lock",
    "HEAD.lock",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "rebase-merge",
    "rebase-apply",
)
# Editors' temp and backup files (vim, emacs, JetBrains): never a save of a managed file.
_EDITOR_TEMP = re.compile(r"\.sw[a-px]$|~$|^\.#|^#.*#$|___jb_\w+___$|^4913$")

Kind = Literal["file", "dir", "missing", "other"]
OutcomeKind = Literal[
    "started",
    "serving",
    "indexed",
    "recovered",
    "violation",
    "reconcile",
    "regenerated",
    "expired",
    "gone",
    "reloaded",
    "rewatched",
    "error",
    "stopped",
    "synced",
    "idle",
    "active",
    "released",
    "compacted",
]


@dataclass(frozen=True, slots=True)
class Batch:
    """One batch of changes, root-relative: ``paths`` are dirty files or directories."""

    paths: frozenset[str] = frozenset()
    policy: bool = False  # the policy file changed
    store: bool = False  # the state store changed: new events may exist
    git: bool = False  # something in git's directory changed: git is working


@dataclass(frozen=True, slots=True)
class Look:
    """A dirty path as the daemon found it: what is there, its class, hash and indexed hash."""

    path: str
    kind: Kind
    file_class: str | None = None  # the policy's class; None: unmanaged
    disk: str | None = None  # the file's hash, for kind "file"
    indexed: str | None = None  # the index's file_hash; None: never indexed


@dataclass(frozen=True, slots=True)
class Known:
    """What the daemon believes between batches."""

    dirs: frozenset[str]  # watched directories ("" is the root)
    files: frozenset[str]  # managed files present at the last look
    next_expiry: float | None = None  # the earliest expiry of a live claim (claims' clock)
    next_rescan: float = float("inf")


@dataclass(frozen=True, slots=True)
class Pending:
    """A change seen but not indexed yet: the file's hash, since when it has had it, and
    whether it appeared while git was working (then it is git's)."""

    disk: str
    since: float
    by_git: bool = False


@dataclass(frozen=True, slots=True)
class Index:
    """Index a managed file that changed (``file_class`` decides how); ``disk``: its hash."""

    path: str
    file_class: str
    disk: str = ""


@dataclass(frozen=True, slots=True)
class Gone:
    """A managed file was deleted or renamed away."""

    path: str


@dataclass(frozen=True, slots=True)
class Reload:
    """The policy file changed: reload it, re-list managed files, watch their directories."""


@dataclass(frozen=True, slots=True)
class Rescan:
    """Re-list managed files (a directory came or went, or it is time to)."""


@dataclass(frozen=True, slots=True)
class Sweep:
    """A claim is due to expire: expire it (``claim.expired``)."""


Action = Index | Gone | Reload | Rescan | Sweep


@dataclass(frozen=True, slots=True)
class Outcome:
    """One thing the daemon did or noticed, with the event it recorded, if any."""

    action: OutcomeKind
    path: str | None = None
    detail: str = ""
    event: int | None = None
    section: str | None = None

    def to_json(self) -> dict[str, Any]:
        status = "error" if self.action == "error" else "ok"
        return {"status": status, "action": self.action, "path": self.path,
                "section": self.section, "detail": self.detail, "event": self.event}  # fmt: skip


def prep_changes(raw: Iterable[tuple[int, str]], root: str, git_dir: str | None = None) -> Batch:
    """The root-relative paths of a raw batch of ``(change, absolute path)``; the kind of
    change is dropped (every change means "re-hash"), and so are temp files, git's and
    memkeeper's own state — except that a change to the store, or in ``git_dir``, is noted."""
    paths: set[str] = set()
    policy = store = git = False
    inside_git = None if git_dir is None else git_dir.rstrip(os.sep) + os.sep
    for _, full in raw:
        if inside_git is not None and (full + os.sep).startswith(inside_git):
            git = True
            continue
        rel = os.path.relpath(full, root).replace(os.sep, "/")
        if rel == "." or rel.startswith("../"):
            continue
        policy = policy or rel == POLICY_FILE
        store = store or rel in STORE_FILES
        top, name = rel.split("/", 1)[0], rel.rsplit("/", 1)[-1]
        if rel != POLICY_FILE and top not in (HOME_DIR, ".git") and not _is_temp(name):
            paths.add(rel)
    return Batch(frozenset(paths), policy, store, git)


def plan(
    batch: Batch,
    looks: Sequence[Look],
    known: Known,
    now: float,
    claim_now: float | None = None,
) -> tuple[Action, ...]:
    """The actions for one batch: a reload or rescan covers every file; else each dirty file.
    ``claim_now``: the time claims are judged by, which ``next_expiry`` is on (else ``now``)."""
    claims = now if claim_now is None else claim_now
    due: tuple[Action, ...] = (Sweep(),) if expiry_due(known.next_expiry, claims) else ()
    if batch.policy:
        return (Reload(), *due)
    if now >= known.next_rescan or any(_dirs_changed(look, known) for look in looks):
        return (Rescan(), *due)
    return (*plan_files(looks, known.files), *due)


def plan_files(looks: Iterable[Look], known_files: frozenset[str]) -> tuple[Index | Gone, ...]:
    """Index each managed file whose bytes differ from the index; report known ones gone."""
    actions: list[Index | Gone] = []
    for look in looks:
        if look.file_class in (None, "private") or look.kind == "dir":
            continue
        if look.kind != "file":
            if look.path in known_files:
                actions.append(Gone(look.path))
        elif look.disk != look.indexed:
            actions.append(Index(look.path, look.file_class, look.disk or ""))
    return tuple(actions)


def settle(
    seen: Pending | None, disk: str, now: float, *, quiet_s: float, git: bool
) -> Pending | None:
    """Whether a changed file (hash ``disk`` now) has been quiet long enough to index:
    ``None`` if so, else what to remember until the next look. ``seen``: what an earlier look
    remembered; ``git``: git is working, or was within the quiet period (nothing is indexed
    then, and a change that appears is git's)."""
    if seen is None or seen.disk != disk:
        seen = Pending(disk, now, by_git=git or (seen is not None and seen.by_git))
        return None if quiet_s <= 0 and not git else seen
    if seen.since > now:  # the clock was stepped back: the quiet period starts again now
        return replace(seen, since=now)
    if git or now - seen.since < quiet_s:
        return seen
    return None


def regen_due(events: Iterable[Event]) -> bool:
    """New coordination events (claims, patches, appends, emits…) that regions may show; not
    a regen's own, and not git's (a checkout must not dirty the pages it checked out)."""
    return any(e.type not in QUIET_EVENTS and e.actor != GIT_ACTOR for e in events)


def live_due(events: Iterable[Event]) -> bool:
    """New events that the live pages (``git: placeholder``) may show, git's included: git
    stores a placeholder for their regions, so rendering them never dirties the tree."""
    return any(e.type not in QUIET_EVENTS for e in events)


def _dirs_changed(look: Look, known: Known) -> bool:
    """A new directory (it may hold managed files) or a watched one gone."""
    if look.kind == "dir":
        return look.path not in known.dirs
    return look.path in known.dirs


def expiry_due(next_expiry: float | None, now: float) -> bool:
    return next_expiry is not None and now >= next_expiry


def watch_dirs(files: Iterable[str]) -> frozenset[str]:
    """The directories to watch for these managed files: each one's directory and that
    directory's ancestors (so a directory created or renamed on the way is seen), the root
    (which holds the policy) and the memory home (whose state store announces new events).
    Directories, never files: a watch on a file dies with the file's first atomic replace."""
    dirs = {"", HOME_DIR}
    for path in files:
        parts = path.split("/")[:-1]
        dirs.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return frozenset(dirs)


def describe(event: Event) -> Outcome:
    """The outcome line for an event the daemon caused."""
    data, path, id_ = event.data, event.path, event.id
    if event.type == "section.external_edit":
        what = f"edited outside memkeeper, now rev {data.get('rev')}"
        return Outcome("indexed", path, what, id_, event.section)
    if event.type == "policy.violation":
        return Outcome("violation", path, str(data.get("message", "")), id_)
    if event.type == "reconcile.opened":
        rec, region, line = data.get("id"), data.get("region"), data.get("line")
        what = f"region {region} (line {line}) edited by hand: reconciliation #{rec} opened"
        return Outcome("reconcile", path, f"{what} — memkeeper reconcile show {rec}", id_)
    if event.type == "reconcile.resolved":
        rec, how = data.get("id"), data.get("resolution")
        return Outcome("reconcile", path, f"reconciliation #{rec} resolved ({how})", id_)
    if event.type == "region.regenerated":
        regions = ", ".join(str(r) for r in data.get("regions", ())) or "markers"
        return Outcome("regenerated", path, f"rendered {regions}", id_)
    if event.type == "claim.expired":
        targets = ", ".join(str(t) for t in data.get("targets", ()))
        return Outcome(
            "expired", None, f"claim {data.get('id')} of {event.actor} on {targets}", id_
        )
    return Outcome("indexed", path, event.type, id_, event.section)


def _is_temp(name: str) -> bool:
    """A temp file of memkeeper's own atomic writes, or of an editor."""
    return temp_pid(name) is not None or _EDITOR_TEMP.search(name) is not None

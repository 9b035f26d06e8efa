"""The records of coordination between agents, each open until someone closes it: a claim as
generated regions show it, a proposal (a body ``patch --merge`` could not merge), a
reconciliation (a human edit of a generated region, or a root's file and a shared store's
that both changed a section). What the Python API returns and the store keeps; built on
``records.Record``, so as cheap to import.
"""

from __future__ import annotations

from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Reconciliation(Record):
    """A human edit of a generated region, open until someone resolves it."""

    __slots__ = (
        "id",
        "path",
        "region",
        "human",
        "generated",
        "opened_by",
        "opened_at",
        "resolution",
        "resolved_by",
        "resolved_at",
    )
    id: int
    path: str
    region: str
    human: str
    generated: str
    opened_by: str
    opened_at: str
    resolution: str | None  # None while open; keep-human, take-generated or undone
    resolved_by: str | None
    resolved_at: str | None

    def __init__(
        self,
        id: int,
        path: str,
        region: str,
        human: str,
        generated: str,
        opened_by: str,
        opened_at: str,
        resolution: str | None,
        resolved_by: str | None,
        resolved_at: str | None,
    ) -> None:
        self._fill(
            *(id, path, region, human, generated, opened_by, opened_at),
            *(resolution, resolved_by, resolved_at),
        )

    @property
    def state(self) -> str:
        """``open`` or ``resolved`` (JSON ``state``: a payload's ``status`` is its exit's)."""
        return "open" if self.resolution is None else "resolved"

    @property
    def status(self) -> str:
        """The same as ``state`` (the name docs/reference.md §9 gives it)."""
        return self.state

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "state": self.state}


class ClaimView(Record):
    """A live claim as generated regions show it (its targets inside private files left out)."""

    __slots__ = (
        "id",
        "token",
        "agent",
        "mode",
        "targets",
        "priority",
        "strict",
        "expires_at",
        "objective",
        "idle_since",
    )
    id: str
    token: int
    agent: str
    mode: str
    targets: tuple[str, ...]
    priority: int
    strict: bool
    expires_at: float
    objective: str
    idle_since: str | None  # the watchdog's mark (``claim.idle``'s time, ISO UTC), or None

    def __init__(
        self,
        id: str,
        token: int,
        agent: str,
        mode: str,
        targets: tuple[str, ...],
        priority: int = 0,
        strict: bool = False,
        expires_at: float = 0.0,
        objective: str = "",
        idle_since: str | None = None,
    ) -> None:
        self._fill(
            id, token, agent, mode, targets, priority, strict, expires_at, objective, idle_since
        )

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "targets": list(self.targets)}


class Proposal(Record):
    """A body kept when ``patch --merge`` could not merge it (docs/reference.md §4): open until
    someone applies or drops it."""

    __slots__ = (
        "id",
        "path",
        "section",
        "base_rev",
        "body",
        "agent",
        "opened_at",
        "state",
        "closed_by",
        "closed_at",
        "rev",
    )
    id: int
    path: str
    section: str
    base_rev: int  # the rev the agent had read: its body's base
    body: bytes
    agent: str
    opened_at: str
    state: str  # open, applied or dropped
    closed_by: str | None
    closed_at: str | None
    rev: int | None  # applied: the section's rev it landed as

    def __init__(
        self,
        id: int,
        path: str,
        section: str,
        base_rev: int,
        body: bytes,
        agent: str,
        opened_at: str,
        state: str,
        closed_by: str | None,
        closed_at: str | None,
        rev: int | None,
    ) -> None:
        self._fill(
            *(id, path, section, base_rev, body, agent, opened_at),
            *(state, closed_by, closed_at, rev),
        )

    @property
    def ref(self) -> str:
        return f"{self.path}#{self.section}"

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def to_json(self, *, body: bool = False) -> dict[str, Any]:
        out = {**self._asdict(), "ref": self.ref}
        del out["body"]
        if body:
            out["body"] = self.text
        return out


class Message(Record):
    """A message to one identity, or to ``all``: kept until its recipient acknowledges it
    (docs/reference.md §4.28). ``delivered_at`` and ``acked_at`` are one recipient's: when a
    hook or ``memory_inbox`` gave it to that recipient's agent, and when it was acknowledged
    (None: not yet, or listed without a recipient)."""

    __slots__ = (
        "id",
        "sender",
        "to",
        "kind",
        "about",
        "text",
        "sent_at",
        "delivered_at",
        "acked_at",
    )
    id: int
    sender: str
    to: str  # an identity (AGENT:SESSION, a name, human) or "all"
    kind: str  # mail.KINDS: message, release-request, handoff, …
    about: str | None  # what it concerns: a claim id, FILE#KEY, a work item
    text: str
    sent_at: str
    delivered_at: str | None
    acked_at: str | None

    def __init__(
        self,
        id: int,
        sender: str,
        to: str,
        kind: str,
        about: str | None,
        text: str,
        sent_at: str,
        delivered_at: str | None = None,
        acked_at: str | None = None,
    ) -> None:
        self._fill(id, sender, to, kind, about, text, sent_at, delivered_at, acked_at)


class StaleRead(Record):
    """A section an identity read, changed (or removed) since by its latest revision ``rev``:
    ``read_rev`` is the revision it read, ``told_rev`` the last one it was told of (its
    ``read_rev`` until then) — docs/reference.md §4.28."""

    __slots__ = ("path", "key", "read_rev", "told_rev", "rev", "present")
    path: str
    key: str
    read_rev: int
    told_rev: int
    rev: int
    present: bool

    def __init__(
        self, path: str, key: str, read_rev: int, told_rev: int, rev: int, present: bool
    ) -> None:
        self._fill(path, key, read_rev, told_rev, rev, present)

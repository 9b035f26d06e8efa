"""``WorkspaceShape``: what the parts of a ``Workspace`` use of one another, for the type
checker.

A ``Workspace`` is its context (``ops.workspace``) and its parts: the write-ahead replace
(``ops.writeahead``), kept links (``ops.keptlinks``), indexing of changes memkeeper did not
make (``ops.indexing``), the policy's verdicts (``ops.verdicts``) and, with a shared store,
the sync of this root's files with it (``ops.sharedsync``). The parts call one another
through the workspace; this Protocol declares those calls, so each part is checked against
it and the ``Workspace`` is checked to provide all of it (a member it lacks leaves it
abstract). Only the type checker reads this module: at run time the parts' base is
``object`` and nothing imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from memkeeper.markdown.sections import Document
    from memkeeper.records import Event, FileState, Verdict
    from memkeeper.store.protocol import StateStore

    AnyStore: TypeAlias = StateStore

T = TypeVar("T")


class WorkspaceShape(Protocol):
    """One root seen by one agent, as the parts of its ``Workspace`` see it."""

    top: str
    agent: str
    home: str
    _editing: set[str]

    # -- the context (ops.workspace) --------------------------------------------------------

    @property
    def store(self) -> AnyStore: ...

    @property
    def shared(self) -> bool: ...

    @property
    def has_store(self) -> bool: ...

    def now(self) -> float: ...

    def locked(self, rel: str) -> Any: ...

    def record(
        self,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        actor: str | None = None,
    ) -> Event: ...

    def writing(self) -> AbstractContextManager[None]: ...

    def again(self, attempt: Callable[[], T]) -> T: ...

    # -- the write-ahead replace (ops.writeahead) -------------------------------------------

    def replace_file(
        self,
        rel: str,
        old: bytes | None,
        new: bytes,
        *,
        index: bool = True,
        hashes: tuple[str, str] | None = None,
    ) -> None: ...

    def writing_open(self) -> bool: ...

    def staging(self, rel: str) -> bool: ...

    def settle_pending(self, rel: str, data: bytes, file_hash: str) -> bytes | None: ...

    # -- kept links (ops.keptlinks) ---------------------------------------------------------

    def keep_path(self, rel: str, old_hash: str) -> str: ...

    # -- indexing (ops.indexing) ------------------------------------------------------------

    def index_file(
        self,
        rel: str,
        data: bytes,
        *,
        external: bool = True,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
        push: bool = False,
        doc: Document | None = None,
    ) -> Document | None: ...

    def committed(self, rel: str) -> bytes: ...

    # -- the policy's verdicts (ops.verdicts) -----------------------------------------------

    def rule(self, rel: str, key: str | None = None) -> Verdict: ...

    # -- a shared store (ops.sharedsync, through the context) -------------------------------

    def look_shared(
        self, rel: str, data: bytes, file_hash: str, state: FileState
    ) -> bytes | None: ...

    def agreed(self, rel: str, file_rev: int, file_hash: str, data: bytes) -> None: ...

    def seen_agreeing(self, rel: str, state: FileState, data: bytes) -> None: ...

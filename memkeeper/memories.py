"""``Memories``: one ``Memory`` per thread, for the servers (the MCP server, the dashboard);
a module of its own, beside ``api``, which every command of the CLI loads."""

from __future__ import annotations

import contextlib
import os
import threading

from memkeeper.api import Memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class Memories:
    """One ``Memory`` per thread, all on one root: for a server whose handlers run in worker
    threads (an SQLite connection belongs to the thread that opened it). The MCP server and
    the dashboard hold one each."""

    def __init__(self, root: str | os.PathLike[str] | None, agent: str | None = None) -> None:
        self.root, self.agent = root, agent
        self._local = threading.local()
        self._all: list[Memory] = []
        self._lock = threading.Lock()

    def get(self, agent: str | Callable[[], str] | None = None) -> Memory:
        """This thread's ``Memory``, opened on its first call as ``self.agent``, else as
        ``agent`` (or the name it returns, asked only then), else as ``Memory.open`` chooses
        (``$MEMKEEPER_AGENT``, then the default)."""
        held: Memory | None = getattr(self._local, "memory", None)
        if held is None:
            chosen = self.agent or (agent() if callable(agent) else agent)
            held = Memory.open(self.root, agent=chosen)
            self._local.memory = held
            with self._lock:
                self._all.append(held)
        return held

    def close(self) -> None:
        """Close every thread's ``Memory`` (when the server stops: none is used after)."""
        with self._lock:
            held, self._all = self._all, []
        for memory in held:
            with contextlib.suppress(Exception):  # one that fails must not keep others open
                memory.close()

"""Which members of a cluster went silent lately, remembered across processes.

A frozen member (stopped, swapping, partitioned with its socket still open) accepts a
connection and never answers: every command that asks it first waits the gateway's timeout
before it fails over. Each CLI call is a new process, so the gateway alone would pay that on
every call. This file in the memory home keeps, per member, when it last failed to answer:
a process starts with the members that answered, and tries one that went silent within
``QUIET_S`` only when no other answers. A member that answers again is cleared. Best effort:
a home that cannot be written only loses the memory, never a request.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Endpoint = tuple[str, int]

FILE = "etcd-members.json"
# How long a member that did not answer is asked last.
QUIET_S = 30.0


def _name(endpoint: Endpoint) -> str:
    return f"{endpoint[0]}:{endpoint[1]}"


class Members:
    """The silent members of one cluster as the home's file remembers them."""

    def __init__(self, home: str, clock: Callable[[], float] = time.time) -> None:
        self.path = os.path.join(home, FILE)
        self.clock = clock
        self._silent = self._load()
        # A daemon's watch thread tells the same memory as its main thread.
        self._lock = threading.Lock()

    def _load(self) -> dict[str, float]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                found = json.load(handle)
        except (OSError, ValueError):
            return {}
        if not isinstance(found, dict):
            return {}
        return {str(k): float(v) for k, v in found.items() if isinstance(v, int | float)}

    def order(self, endpoints: Sequence[Endpoint]) -> list[int]:
        """The endpoints' indexes, those that answered (or were never asked) first, in their
        given order; the recently silent last, the longest silent first among them."""
        now, silent = self.clock(), dict(self._silent)  # (another thread may change it)
        since = {i: silent.get(_name(e), -QUIET_S) for i, e in enumerate(endpoints)}
        quiet = {i: at for i, at in since.items() if now - at < QUIET_S}
        answering = [i for i in range(len(endpoints)) if i not in quiet]
        return answering + sorted(quiet, key=quiet.__getitem__)

    def silent_since(self, endpoint: Endpoint) -> float:
        """When ``endpoint`` last went silent (-inf: not lately, or never)."""
        return self._silent.get(_name(endpoint), float("-inf"))

    def quiet(self, endpoint: Endpoint) -> bool:
        """Whether ``endpoint`` went silent within ``QUIET_S``."""
        return self.clock() - self._silent.get(_name(endpoint), -QUIET_S) < QUIET_S

    def silent(self, endpoint: Endpoint) -> None:
        with self._lock:
            self._silent[_name(endpoint)] = self.clock()
            self._save()

    def answered(self, endpoint: Endpoint) -> None:
        if _name(endpoint) not in self._silent:
            return
        with self._lock:
            if self._silent.pop(_name(endpoint), None) is not None:
                self._save()

    def _save(self) -> None:
        temp = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(temp, "w", encoding="utf-8") as handle:
                json.dump(self._silent, handle)
            os.replace(temp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)

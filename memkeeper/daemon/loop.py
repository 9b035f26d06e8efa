"""``memkeeper watch``: the daemon, a generator of outcomes over batches of file changes.

``run`` pulls batches from a ``ChangeSource`` (production: watchfiles, imported only here,
watching directories, never files; tests: a scripted list). Once a watch is up (its first
batch has arrived) the ``Daemon`` catches up on what no watch saw — changes made before the
start or while the watch was being restarted — and then, for each batch, looks at the dirty
paths, asks ``daemon.plan.plan`` what to do, does it, and returns what happened as ``Outcome``
values. After every batch (a quiet tick included) it reads the
events recorded since the last it saw: any that a region may show re-render the generated
files. The change source yields an empty batch on every quiet tick, so claims are expired on
time even when nothing else happens. ``instance_lock`` keeps one daemon per memory home.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memkeeper.daemon.plan import QUIET_S, Outcome
from memkeeper.daemon.step import Daemon
from memkeeper.errors import EnvironmentFailure

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence, Set

    from memkeeper.ops.workspace import Workspace

LOCK_FILE = "watch.lock"
RESCAN_S = 30.0  # a full re-listing of managed files at least this often (new directories)
MAX_WATCH_FAILURES = 5  # in a row, before the daemon gives up (exit 1)


class StopEvent(Protocol):
    """Anything with ``is_set()``: a ``threading.Event`` set by a signal handler."""

    def is_set(self) -> bool: ...


class ChangeSource(Protocol):
    """Batches of ``(change, absolute path)`` under directories (not recursive); an empty
    batch on each quiet tick, the first one as soon as the watch is up; the iterator ends once
    ``stop`` is set."""

    def watch(self, dirs: Sequence[str], stop: StopEvent) -> Iterator[Set[tuple[int, str]]]: ...


@dataclass(frozen=True, slots=True)
class WatchfilesSource:
    """The production source. Latency is about two ``step``s after the change settles."""

    debounce_ms: int = 50
    step_ms: int = 20
    tick_ms: int = 100

    def watch(self, dirs: Sequence[str], stop: StopEvent) -> Iterator[Set[tuple[int, str]]]:
        import watchfiles

        return watchfiles.watch(
            *dirs,
            watch_filter=None,
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=stop,
            rust_timeout=self.tick_ms,
            yield_on_timeout=True,
            raise_interrupt=False,
            recursive=False,
            ignore_permission_denied=True,
        )


def run(
    ws: Workspace,
    source: ChangeSource,
    stop: StopEvent,
    *,
    rescan_s: float = RESCAN_S,
    quiet_s: float = QUIET_S,
    pause: Callable[[float], None] = time.sleep,
) -> Iterator[Outcome]:
    """Watch until ``stop`` is set (or the source ends), yielding what happens as it happens;
    a change is acted on once it has been quiet for ``quiet_s`` (``daemon.plan``)."""
    daemon = Daemon(ws, rescan_s, quiet_s=quiet_s)
    first, failures = True, 0
    while not stop.is_set():
        dirs = daemon.watch_paths()
        batches = source.watch(dirs, stop)
        try:
            for count, raw in enumerate(batches):
                if count == 0:  # the watch is up: catch up on what it could not see
                    failures = 0
                    yield from daemon.caught_up(first=first)
                    first = False
                yield from daemon.step(raw)
                if stop.is_set() or daemon.must_rewatch():
                    break
            else:
                break  # the source ended: it was stopped
        except OSError as exc:  # a directory vanished before its watch was set up, or worse
            failures += 1
            if failures >= MAX_WATCH_FAILURES:
                raise EnvironmentFailure(
                    f"cannot watch {len(dirs)} directories under {daemon.root}: {exc} — "
                    "check permissions and the inotify limits (fs.inotify.max_user_watches)"
                ) from exc
            yield Outcome("error", None, f"cannot watch: {exc} — trying again")
            pause(0.1 * failures)
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()
    yield Outcome("stopped", daemon.root, "stopped cleanly")


@contextlib.contextmanager
def instance_lock(home: str) -> Iterator[None]:
    """Hold ``.memkeeper/watch.lock`` (an ``flock``, with our pid in the file) while watching:
    a second daemon on the same memory home fails with ``EnvironmentFailure`` naming the pid."""
    os.makedirs(home, exist_ok=True)
    path = os.path.join(home, LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _already_running(home, os.read(fd, 64)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def _already_running(home: str, held: bytes) -> EnvironmentFailure:
    text = held.decode("ascii", "replace").strip()
    pid = int(text) if text.isdigit() else None
    who = f"pid {pid}" if pid is not None else "another process"
    stop = f"stop it first (kill {pid})" if pid is not None else "stop it first"
    return EnvironmentFailure(
        f"{home}/{LOCK_FILE}: memkeeper watch is already running for this memory home "
        f"({who}) — {stop}, or leave it running: one daemon per memory home",
        pid=pid,
    )

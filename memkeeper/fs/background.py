"""memkeeper's one background thread: work a writer need not wait for, done in order after
it — removing the link a replace kept (``fs.atomic``), writing a shared store's mark
(``fs.synced``). ``drain`` waits for it (at exit too)."""

from __future__ import annotations

import contextlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


_reaper: Any = None  # the queue of ``submit``'s thread, started on first use


def submit(job: Callable[..., object], *args: Any) -> None:
    """Run ``job(*args)`` in memkeeper's one background thread, in order. For what a writer
    need not wait for: removing the last link of a file just replaced makes ext4 wait for
    the writeback its rename started (~0.15 ms). ``drain`` waits for the jobs (at exit too);
    a job must be safe to never run — a kept link left behind is settled later anyway."""
    global _reaper
    if _reaper is None:
        import atexit
        import queue
        import threading

        jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        thread = threading.Thread(target=_work, args=(jobs,), name="memkeeper-background")
        thread.daemon = True
        thread.start()
        atexit.register(drain)
        _reaper = jobs
    _reaper.put((job, args))


def drain() -> None:
    """Wait until every ``submit`` job so far is done (at most 10 s)."""
    if _reaper is None:
        return
    import threading

    done = threading.Event()
    _reaper.put((done.set, ()))
    done.wait(10.0)


def _work(jobs: Any) -> None:
    while True:
        job, args = jobs.get()
        with contextlib.suppress(OSError):  # a link someone else settled meanwhile
            job(*args)

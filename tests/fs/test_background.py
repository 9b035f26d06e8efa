"""The background thread: jobs run off the caller's thread, in order; ``drain`` waits for
them; a job that fails on the disk does not stop the ones after it."""

from __future__ import annotations

import threading

from memkeeper.fs import background


def test_jobs_run_in_order_on_another_thread_and_drain_waits_for_them() -> None:
    ran: list[tuple[int, str]] = []
    gate = threading.Event()

    def job(n: int) -> None:
        gate.wait(5)
        ran.append((n, threading.current_thread().name))

    for n in range(3):
        background.submit(job, n)
    assert ran == []
    gate.set()
    background.drain()
    assert ran == [
        (0, "memkeeper-background"),
        (1, "memkeeper-background"),
        (2, "memkeeper-background"),
    ]


def test_a_job_that_fails_on_the_disk_does_not_stop_the_next() -> None:
    ran: list[str] = []

    def fails() -> None:
        raise FileNotFoundError("settled by someone else")

    background.submit(fails)
    background.submit(ran.append, "after")
    background.drain()
    assert ran == ["after"]

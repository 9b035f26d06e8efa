"""File locks: every writer of a managed file holds its lock (``Workspace.locked``), and the
store's schema upgrade holds one of its own — an exclusive ``flock`` across processes.

A holder stopped with the lock (Ctrl-Z, a debugger, SIGSTOP) holds it until resumed: a wait
for it is bounded (``LOCK_WAIT_S``) and ends in ``store_busy`` naming the holder, as the
kernel lists it, and what to do — never a wait without end.

Two ways to wait, each where it is measured to serve. A file's lock is tried again and again
(0.5 ms apart at first, then 10 ms): a writer that has just read the file may take the lock
ahead of one that waited, which is what a compare-and-swap wants — handed over in the order
asked (the kernel's, ``wait_in_kernel``), 16 processes patching one section with
``expect_rev`` each waited behind writers that made its read stale, and retried four times as
often (2,468 to 2,564 retries for 320 updates against 548 to 608, twice the time;
``bench.lostupdates --processes 16``). The local store's write turns
(``store.sqlite.writeturn``) are handed over in that order: there every waiter commits what
it brings, and a newcomer that gets in first only makes the longest wait longer."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time

from memkeeper.errors import EnvironmentFailure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# How long a writer waits for a lock another process holds before it gives up (store_busy).
LOCK_WAIT_S = 10.0
_POLL_S = 0.01  # the longest pause between two tries of a held lock


@contextlib.contextmanager
def file_lock(lock_path: str, what: str = "") -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) for the block — the
    lock of ``what`` (a file, for the message of a wait that runs out)."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        _take(fd, lock_path, what)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_file_lock(lock_path: str) -> Iterator[bool]:
    """``file_lock`` without the wait: the block runs holding the lock (True) or, another
    process holding it, without it (False) — for work that can go elsewhere then."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)


def _take(fd: int, lock_path: str, what: str) -> None:
    deadline, pause = time.monotonic() + LOCK_WAIT_S, 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise held_too_long(lock_path, what, LOCK_WAIT_S) from None
        time.sleep(pause)
        pause = min(pause * 2, _POLL_S)


def wait_in_kernel(path: str, timeout: float, *, mode: int = 0o600) -> int | None:
    """A new descriptor of ``path`` (made with ``mode`` if missing) holding its lock, taken by
    a blocking ``flock`` — the kernel wakes it as the holder lets go — in a helper thread;
    None when ``timeout`` seconds pass first (the helper then lets the lock go as soon as it
    gets it) or the file cannot be opened."""
    import threading

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, mode)
    except OSError:
        return None
    done, guard = threading.Event(), threading.Lock()
    state = {"held": False, "given_up": False}

    def wait() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = True
        except OSError:
            held = False
        with guard:
            state["held"] = held
            if state["given_up"] or not held:
                os.close(fd)  # too late, or no lock to be had: nobody takes it over
            done.set()

    threading.Thread(target=wait, name="memkeeper-lock-wait", daemon=True).start()
    done.wait(timeout)
    with guard:
        if done.is_set():
            return fd if state["held"] else None
        state["given_up"] = True
    return None


def held_too_long(lock_path: str, what: str, waited: float) -> EnvironmentFailure:
    """``store_busy`` for a wait of ``waited`` seconds for the lock at ``lock_path`` (that of
    ``what``): who holds it, as the kernel lists it, and what to do; nothing was changed."""
    return held_too_long_by(holder(lock_path), what or lock_path, "its lock", waited)


def held_too_long_by(pid: int | None, where: str, lock: str, waited: float) -> EnvironmentFailure:
    """``store_busy``: process ``pid`` (None: unknown) held ``lock`` of ``where`` all of a
    wait of ``waited`` seconds — nothing was changed; resume a stopped holder, or wait."""
    from memkeeper.fs import processes

    who = "another process" if pid is None else processes.describe(pid)
    if pid is not None and processes.stopped(pid):
        advice = f"it is stopped: resume it (`kill -CONT {pid}`) or end it, then try again"
    else:
        advice = "try again once it is done (end it if it hangs)"
    return EnvironmentFailure(
        f"{where}: {who} has held {lock} for over {waited:g} s — nothing was changed; {advice}",
        reason="store_busy",
        holder=pid,
    )


PROC_LOCKS = "/proc/locks"


def holder(path: str, byte: int | None = None) -> int | None:
    """The pid of a process holding a write lock on ``path`` — an ``flock``, or a POSIX lock
    covering ``byte`` (any, when None) — as the kernel lists it (``/proc/locks``). None when
    none is listed, or where the kernel does not tell (no Linux ``/proc``)."""
    try:
        info = os.stat(path)
        with open(PROC_LOCKS, "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    return listed_holder(text, where, byte)


def listed_holder(text: str, where: str, byte: int | None) -> int | None:
    """``holder`` on the text of ``/proc/locks``: lines such as ``1: POSIX  ADVISORY  WRITE
    4242 fe:00:2720054 120 120`` (kind, mode, access, pid, device:inode, first and last
    byte); a process blocked waiting for a lock is listed as ``1: -> FLOCK …``, and an open
    file description's lock with pid -1: neither names a holder."""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[1] == "->" or fields[5] != where or fields[3] != "WRITE":
            continue
        kind, pid, first, last = fields[1], int(fields[4]), fields[6], fields[7]
        covers = (
            byte is None
            or kind == "FLOCK"
            or (int(first) <= byte and (last == "EOF" or byte <= int(last)))
        )
        if covers and pid > 0:
            return pid
    return None

"""Other processes, as the kernel tells of them: whether one has a file open for writing (a
save in progress: Linux refuses a read lease then), and whether a process is alive."""

from __future__ import annotations

import errno
import fcntl
import os

_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)  # Linux; Python names it only on some builds


def writers(fd: int) -> bool | None:
    """Whether any process has this file open for writing (Linux refuses a read lease then);
    ``None`` where that cannot be told (no lease support, a file this user does not own)."""
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return True if exc.errno == errno.EAGAIN else None
    fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    return False


def open_for_writing(fd: int) -> bool:
    """Whether another process has this file open for writing — a save in progress. False
    where that cannot be told: then only the bytes are compared."""
    return writers(fd) is True


def still_writable(path: str) -> bool:
    """After the replace: can anyone still write into the replaced file ``path`` holds? Only
    a process that opened it for writing before the rename can (nobody can open it by its
    name any more); where that cannot be told, assume someone can."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        return writers(fd) is not False
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts: it is alive, not ours to judge)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; no pid is that large
        return False
    except PermissionError:
        return True
    return True


def describe(pid: int) -> str:
    """``pid`` and its command line as ``/proc`` tells: ``process 4242 (memkeeper patch
    CLAUDE.md#build -)``; the number alone where it does not."""
    said = f"process {pid}"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
    except OSError:
        return said
    command = " ".join(a.decode("utf-8", "replace") for a in argv if a)
    if len(command) > 80:
        command = command[:77] + "..."
    return f"{said} ({command})" if command else said


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (Ctrl-Z, a debugger, SIGSTOP): it holds whatever
    it holds until resumed. False where that cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in (b"T", b"t")

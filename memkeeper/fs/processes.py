"""Other processes, as the kernel tells of them: whether one has a file open for writing (a
save in progress: Linux refuses a read lease then), whether a process is alive, and whether a
git command works in a tree."""

from __future__ import annotations

import errno
import fcntl
import os
import time

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


def boot_clock() -> float:
    """Seconds since boot, on the clock ``/proc`` dates processes' starts by."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def git_started(top: str, *, within_s: float, before: float | None = None) -> bool:
    """Whether a git process that started less than ``within_s`` seconds ago (and by
    ``before``, on ``boot_clock``, when given) works in the working tree ``top`` (git moves
    to the top of its tree as it starts, so its current directory is ``top`` or below): it
    may have read the index and not yet looked at the files. Older ones (a rebase waiting
    for its editor, a pager) are not counted, nor one that runs this process (a hook or a
    filter of it waits for us). A process not yet become git (forked, not yet executed) is
    not either: it reads the index only once it is. False where ``/proc`` cannot tell (not
    Linux).
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    now = boot_clock()
    tick = os.sysconf("SC_CLK_TCK")
    inside = os.path.realpath(top).rstrip("/") + "/"
    for pid in entries:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                name, _, rest = handle.read().partition(b" (")[2].rpartition(b")")
            started = int(rest.split()[19]) / tick  # field 22: start, in ticks since boot
        except (OSError, ValueError, IndexError):
            continue
        # (the start is counted in whole ticks, cut down: by ``before`` may mean just after)
        if (before is not None and started > before) or now - started >= within_s:
            continue
        if not name.startswith(b"git") or name.startswith(b"git-credential"):
            continue
        try:
            where = os.readlink(f"/proc/{pid}/cwd") + "/"
        except OSError:
            continue
        if where.startswith(inside) and int(pid) not in _ancestors():
            return True
    return False


def _ancestors() -> set[int]:
    """This process's parent, its parent, and so on (``/proc``)."""
    found, pid = set(), os.getppid()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                pid = int(handle.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return found

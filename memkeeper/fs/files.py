"""File I/O with the guarantees memkeeper promises: confinement, atomic durable replace, locks.

- Every path is confined to the root: no ``..``, absolute path or symlink leads outside it,
  and a managed file that is itself a symlink is refused (a replace would turn it into a
  regular file behind the user's back). Reads and writes reach the file's directory without
  following symlinks, so one swapped in between the check and the write is refused.
- ``atomic_write`` writes a temp file in the same directory, fsyncs it, renames it over the
  target and fsyncs the directory, keeping the file's mode: a crash leaves old or new bytes.
  Given the bytes it expects to replace, it first hard-links the file to a keep path and
  checks through that link that it still holds them (``Raced`` if not: a writer that takes no
  lock saved it since, and nothing is replaced); after the rename the link keeps the replaced
  inode, so what a writer puts into it later is not lost (``Workspace.settle_kept``).
- ``file_lock`` serialises writers of one file across processes (``fcntl.flock``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.names import temp_name, temp_pid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

CRASH_ENV = "MEMKEEPER_CRASH_AT"


class Raced(Exception):
    """The file no longer holds the bytes memkeeper read: a writer that takes no lock saved it
    since. Nothing was replaced; ``current`` is what it holds now (``None``: it is gone)."""

    def __init__(self, relpath: str, current: bytes | None) -> None:
        super().__init__(f"{relpath}: changed on disk while memkeeper was writing it")
        self.relpath = relpath
        self.current = current


_CRASH_AT = os.environ.get(CRASH_ENV)  # read once: a lookup per point costs on the hot path


def crashpoint(name: str) -> None:
    """Die by SIGKILL here when the test-only ``MEMKEEPER_CRASH_AT`` names this point."""
    if name == _CRASH_AT:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def confine(root: str | os.PathLike[str], relpath: str) -> str:
    """Normalise a root-relative POSIX path, refusing anything that leaves the root."""
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or relpath.startswith("/") or ".." in parts:
        raise Invalid(
            f"{relpath}: path is outside the memory root {root} — give a path inside it",
            path=relpath,
        )
    clean = "/".join(parts)
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, clean))
    if real != real_root and not real.startswith(real_root + os.sep):
        raise Invalid(
            f"{clean}: resolves through a symlink to {real}, outside the memory root "
            f"{real_root} — memkeeper only touches files inside the root",
            path=clean,
        )
    return clean


def open_directory(root: str | os.PathLike[str], relpath: str) -> tuple[int, str]:
    """A descriptor of the directory holding ``relpath`` and the file's name.

    The directory is reached by walking down from the root without following symlinks, so
    a directory swapped for a symlink after ``confine`` looked (to lead a read or a write
    outside the root) is refused, never followed. Symlinks inside the root that ``confine``
    accepted are resolved first. Other ``OSError``s (a missing directory) propagate.
    """
    head, _, name = relpath.rpartition("/")
    if not head:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), name
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, head))
    if real != real_root and not real.startswith(real_root + os.sep):
        raise _outside(relpath, real, real_root)
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for part in os.path.relpath(real, real_root).split(os.sep):
        fd = _step_down(fd, part, relpath)
    return fd, name


def make_directories(root: str | os.PathLike[str], relpath: str) -> None:
    """Create the directories missing on ``relpath``'s path (for a file about to be created),
    walking down from the root like ``open_directory``: never through a symlink. Each new
    directory's parent is fsynced, so a file written into it survives a crash. ``Invalid``
    when a file stands where a directory is needed."""
    head = relpath.rpartition("/")[0]
    if not head:
        return
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, head))
    if real != real_root and not real.startswith(real_root + os.sep):
        raise _outside(relpath, real, real_root)
    fd, walked = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), []
    for part in os.path.relpath(real, real_root).split(os.sep):
        walked.append(part)
        try:
            os.mkdir(part, dir_fd=fd)
            os.fsync(fd)
        except FileExistsError:
            pass
        except BaseException:
            os.close(fd)
            raise
        try:
            fd = _step_down(fd, part, relpath)
        except NotADirectoryError:
            raise Invalid(
                f"{relpath}: {'/'.join(walked)!r} on its path is a file, not a directory — "
                "move that file aside, or use another path",
                path=relpath,
            ) from None
    os.close(fd)


def _step_down(fd: int, part: str, relpath: str) -> int:
    """Open the subdirectory ``part`` of ``fd`` (closing ``fd``) without following a link."""
    try:
        return os.open(part, _DIRECTORY_NOFOLLOW, dir_fd=fd)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
            raise Invalid(
                f"{relpath}: the directory {part!r} on its path was replaced by a symlink — "
                "memkeeper never reads or writes through one; restore the directory",
                path=relpath,
            ) from None
        raise
    finally:
        os.close(fd)


_DIRECTORY_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _outside(relpath: str, real: str, real_root: str) -> Invalid:
    return Invalid(
        f"{relpath}: resolves through a symlink to {real}, outside the memory root "
        f"{real_root} — memkeeper only touches files inside the root",
        path=relpath,
    )


def read_bytes(root: str | os.PathLike[str], relpath: str, *, whole: bool = False) -> bytes:
    """The file's bytes, refusing a symlink in place of the file (``O_NOFOLLOW``) or of a
    directory on its path (``open_directory``). With ``whole``, ``Raced`` while another
    process has the file open for writing: what it holds may be a save half written."""
    try:
        directory, name = open_directory(root, relpath)
        try:
            # O_NONBLOCK: a FIFO in the file's place must not hang the open; no effect on files
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(name, flags, dir_fd=directory)
        finally:
            os.close(directory)
    except (FileNotFoundError, NotADirectoryError):
        raise Invalid(
            f"{relpath}: no such file — check the path (relative to {root})", path=relpath
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Invalid(
                f"{relpath}: is a symlink — memkeeper edits regular files only; "
                "point the policy at the real file",
                path=relpath,
            ) from None
        if exc.errno == errno.EISDIR:
            raise Invalid(f"{relpath}: is a directory — name a file", path=relpath) from None
        raise EnvironmentFailure(f"{relpath}: cannot open: {exc.strerror}", path=relpath) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # checked before fdopen, which raises on a directory
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise Invalid(f"{relpath}: is {what} — name a regular file", path=relpath)
    try:
        data = read_fd(fd)
        if whole and open_for_writing(fd):
            raise Raced(relpath, data)
        return data
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    """Everything left to read from ``fd`` (not closed): ``os.read`` in a loop, without the
    buffered file object ``open`` would build around it."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def atomic_write(
    root: str | os.PathLike[str],
    relpath: str,
    data: bytes,
    *,
    expected: bytes | None = None,
    keep: str | None = None,
) -> bool:
    """Replace the file's bytes atomically and durably, keeping its permission bits: a
    ``stage`` (the temp file, fsynced) and its ``finish`` (the rename, the directory fsynced).

    Every step happens relative to the directory ``open_directory`` reached, so a directory
    swapped for a symlink mid-write cannot carry the new bytes outside the root; a file
    swapped for a symlink is itself replaced, never written through. With ``expected`` and
    ``keep`` (an absolute path on the same filesystem), the replace is guarded: the file is
    hard-linked to ``keep`` and, through the link, must still hold ``expected`` and be open
    for writing by nobody immediately before the rename, else ``Raced`` and nothing changes.
    True when ``keep`` still holds the replaced file afterwards — because a process had it
    open for writing at the rename (or that cannot be told), so a save may yet land in it.
    """
    return stage(root, relpath, data, expected=expected, keep=keep, sync=True).finish()


class Staged:
    """A replace prepared but not done: the new bytes in a temp file beside the file, the
    file checked (and linked to ``keep``) as holding what was expected. ``finish`` renames
    the temp over the file after checking again; ``abandon`` removes the temp.

    Without ``sync`` neither the temp nor the directory is fsynced: the caller has made the
    bytes durable elsewhere first (the store's commit) and can redo the replace after a crash;
    ``identity`` (inode, mtime, size of the file replaced; ``None``: there was none) and
    ``temp_inode`` let it tell afterwards whether the rename happened."""

    __slots__ = (
        "relpath", "_directory", "name", "temp", "temp_inode", "identity",
        "_expected", "keep", "_linked", "_sync", "_create_only",
    )  # fmt: skip

    def __init__(
        self,
        relpath: str,
        directory: int,
        name: str,
        temp: str,
        temp_inode: int,
        identity: tuple[int, int, int] | None,
        expected: bytes | None,
        keep: str | None,
        linked: bool,
        sync: bool,
        create: bool,
    ) -> None:
        self.relpath, self._directory, self.name, self.temp = relpath, directory, name, temp
        self.temp_inode, self.identity = temp_inode, identity
        self._expected, self.keep, self._linked, self._sync = expected, keep, linked, sync
        self._create_only = create

    def finish(self, base: tuple[str, bytes] | None = None) -> bool:
        """Rename the temp over the file, if it still holds what was expected (``Raced``
        otherwise: the temp is removed, nothing changes). A file staged with ``create`` is
        created by a hard link, so one created meanwhile is never replaced. Returns whether
        ``keep`` still holds the replaced file (see ``atomic_write``) — with ``base`` (a path
        and the bytes to write there, should the link be kept) that is decided in the
        background, off the writer's path, and the answer is True."""
        directory = self._directory
        try:
            if self._create_only:
                self._create()
            else:
                if self._expected is not None:
                    self._hold_again()
                os.replace(self.temp, self.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            self.abandon()
            raise
        try:
            crashpoint("write.after_rename")
            if self._sync:
                os.fsync(directory)
        finally:
            self._close()
        keep = self.keep
        if not self._linked or keep is None:
            return False
        if base is not None:
            background(_settle_link, keep, self._expected, base)
            return True
        return _settle_link(keep, self._expected, None)

    def abandon(self) -> None:
        """Remove the temp (and the keep link): the replace will not happen."""
        if self._directory < 0:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp, dir_fd=self._directory)
        if self._linked and self.keep is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.keep)
            self._linked = False
        self._close()

    def _close(self) -> None:
        if self._directory >= 0:
            os.close(self._directory)
            self._directory = -1

    def _create(self) -> None:
        directory = self._directory
        try:
            os.link(self.temp, self.name, src_dir_fd=directory, dst_dir_fd=directory)
        except FileExistsError:
            current = _read_at(directory, self.name)
            raise Raced(self.relpath, current) from None
        os.unlink(self.temp, dir_fd=directory)

    def _hold_again(self) -> None:
        """The check of ``stage``, repeated at the last moment before the rename."""
        assert self._expected is not None
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        link = self.keep if self._linked else None
        try:
            fd = os.open(link, flags) if link else os.open(self.name, flags, dir_fd=self._directory)
        except FileNotFoundError:
            raise Raced(self.relpath, None) from None
        held: bytes | None
        try:
            held, writing = read_fd(fd), open_for_writing(fd)
            if link and os.fstat(fd).st_nlink < 2:
                held = _read_at(self._directory, self.name)  # the file was replaced meanwhile
        finally:
            os.close(fd)
        if held != self._expected or writing:
            raise Raced(self.relpath, held)


def _settle_link(keep: str, expected: bytes | None, base: tuple[str, bytes] | None) -> bool:
    """After the rename: remove the link to the replaced file if nobody can still write into
    it and nobody did since the check (a whole save can fit in the rename's window) — else
    keep it (True), with ``base`` written beside it for whoever settles it."""
    if not _still_writable(keep) and _holds(keep, expected):
        os.unlink(keep)
        return False
    if base is not None:
        with open(base[0], "wb") as handle:
            handle.write(base[1])
    return True


def _read_at(directory: int, name: str) -> bytes | None:
    """The bytes of ``name`` in ``directory`` (``None``: it is gone), never through a link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(name, flags, dir_fd=directory)
    except OSError:
        return None
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


def stage(
    root: str | os.PathLike[str],
    relpath: str,
    data: bytes,
    *,
    expected: bytes | None = None,
    keep: str | None = None,
    sync: bool = False,
    create: bool = False,
) -> Staged:
    """Prepare the replace of the file's bytes by ``data`` (see ``Staged``): the temp file
    written (and fsynced, with ``sync``), the file checked as holding ``expected`` and linked
    to ``keep`` — or, with ``create``, as absent. ``Raced`` (nothing left behind) when it does
    not. With neither, whatever the file holds is replaced."""
    directory, name = open_directory(root, relpath)
    try:
        where = os.path.join(root, os.path.dirname(relpath))
        return _stage(directory, name, relpath, where, data, expected, keep, sync, create)
    except BaseException:
        os.close(directory)
        raise


def _hold(directory: int, name: str, relpath: str, expected: bytes, keep: str | None) -> bool:
    """Check that the file still holds ``expected`` and that no process has it open for
    writing (a save in progress), through a hard link at ``keep`` that outlives the replace;
    ``Raced`` (and no link left) when either fails."""
    link = None
    if keep is not None:
        try:
            os.link(name, keep, src_dir_fd=directory, follow_symlinks=False)
            link = keep
        except FileNotFoundError:
            raise Raced(relpath, None) from None
        except OSError as exc:  # another filesystem, or links not allowed: check by name
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(link, flags) if link else os.open(name, flags, dir_fd=directory)
    except FileNotFoundError:
        held, writing = None, False
    else:
        try:
            held, writing = read_fd(fd), open_for_writing(fd)
        finally:
            os.close(fd)
    if held != expected or writing:
        if link:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link)
        raise Raced(relpath, held)
    return link is not None


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


def _still_writable(path: str) -> bool:
    """After the replace: can anyone still write into the replaced file ``path`` holds? Only
    a process that opened it for writing before the rename can (nobody can open it by its
    name any more); where that cannot be told, assume someone can."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        return writers(fd) is not False
    finally:
        os.close(fd)


def _holds(path: str, expected: bytes | None) -> bool:
    """Whether the file at ``path`` still holds ``expected``."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        return read_fd(fd) == expected
    finally:
        os.close(fd)


def _stage(
    directory: int,
    name: str,
    relpath: str,
    where: str,
    data: bytes,
    expected: bytes | None,
    keep: str | None,
    sync: bool,
    create: bool,
) -> Staged:
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        found = info.st_mode
    except FileNotFoundError:
        info, found = None, stat.S_IFREG | 0o644
    if stat.S_ISLNK(found):  # swapped in since it was read: its mode is not the file's
        raise Invalid(
            f"{relpath}: became a symlink since memkeeper read it — memkeeper never writes "
            "through one; restore the regular file",
            path=relpath,
        )
    if create and info is not None:  # created since memkeeper looked
        raise Raced(relpath, _read_at(directory, name))
    mode = stat.S_IMODE(found)
    sweep_temps(where, name)
    temp = temp_name(name, os.getpid())
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600, dir_fd=directory)
    linked = False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            crashpoint("write.after_temp_write")
            os.fchmod(fd, mode)
            if sync:
                os.fsync(fd)
            temp_inode = os.fstat(fd).st_ino
        finally:
            os.close(fd)
        identity = None
        if expected is not None:
            linked = _hold(directory, name, relpath, expected, keep)
            now = os.stat(name, dir_fd=directory, follow_symlinks=False)
            identity = (now.st_ino, now.st_mtime_ns, now.st_size)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=directory)
        if linked and keep is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(keep)
        raise
    return Staged(
        relpath, directory, name, temp, temp_inode, identity, expected, keep, linked, sync, create
    )


_reaper: Any = None  # the queue of ``background``'s thread, started on first use


def background(job: Callable[..., object], *args: Any) -> None:
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
    """Wait until every ``background`` job so far is done (at most 10 s)."""
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


def sync_file(root: str | os.PathLike[str], relpath: str) -> None:
    """fsync the file and its directory: replaces done there without syncs (``Staged``
    without ``sync``) become durable. A file that is gone is no error: its directory is
    synced all the same."""
    directory, name = open_directory(root, relpath)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(name, flags, dir_fd=directory)
        except FileNotFoundError:
            pass
        else:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.fsync(directory)
    finally:
        os.close(directory)


def identity(root: str | os.PathLike[str], relpath: str) -> tuple[int, int, int] | None:
    """The file's inode, mtime (ns) and size, not following a symlink (``None``: it is gone):
    what tells the file a replace left from one another program wrote since."""
    try:
        info = os.stat(os.path.join(root, relpath), follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def temp_exists(root: str | os.PathLike[str], relpath: str, temp: str) -> bool:
    """Whether the temp file ``temp`` of a replace of ``relpath`` is still beside it (the
    rename it was written for never happened)."""
    return os.path.lexists(os.path.join(root, os.path.dirname(relpath), temp))


def remove_temp(root: str | os.PathLike[str], relpath: str, temp: str) -> None:
    """Remove the temp file ``temp`` of a replace of ``relpath`` that will never happen."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(root, os.path.dirname(relpath), temp))


def sweep_temps(directory: str, name: str) -> None:
    """Remove the temp files of ``name`` that writers killed mid-replace left behind: those
    whose process is gone (a live one may be mid-write: its temp is left alone)."""
    for entry in os.listdir(directory):
        pid = temp_pid(entry)
        if pid is not None and entry == temp_name(name, pid) and not pid_alive(pid):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, entry))


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts: it is alive, not ours to judge)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; no pid is that large
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def file_lock(lock_path: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) for the block."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

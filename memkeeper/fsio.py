"""File I/O with the guarantees memkeeper promises: confinement, atomic durable replace, locks.

- Every path is confined to the root: no ``..``, absolute path or symlink leads outside it,
  and a managed file that is itself a symlink is refused (a replace would turn it into a
  regular file behind the user's back).
- ``atomic_write`` writes a temp file in the same directory, fsyncs it, renames it over the
  target and fsyncs the directory, keeping the file's mode: a crash leaves old or new bytes.
- ``file_lock`` serialises writers of one file across processes (``fcntl.flock``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat

from memkeeper.errors import EnvironmentFailure, Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

CRASH_ENV = "MEMKEEPER_CRASH_AT"


def crashpoint(name: str) -> None:
    """Die by SIGKILL here when the test-only ``MEMKEEPER_CRASH_AT`` names this point."""
    if os.environ.get(CRASH_ENV) == name:
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


def read_bytes(root: str | os.PathLike[str], relpath: str) -> bytes:
    """The file's bytes, refusing a symlink in place of the file (``O_NOFOLLOW``)."""
    full = os.path.join(root, relpath)
    try:
        # O_NONBLOCK: a FIFO in the file's place must not hang the open; no effect on files
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
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
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def atomic_write(root: str | os.PathLike[str], relpath: str, data: bytes) -> None:
    """Replace the file's bytes atomically and durably, keeping its permission bits."""
    full = os.path.join(root, relpath)
    directory, name = os.path.split(full)
    try:
        mode = stat.S_IMODE(os.stat(full, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = 0o644
    temp = os.path.join(directory, f".{name}.memkeeper-{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            crashpoint("write.after_temp_write")
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        crashpoint("write.after_temp_fsync")
        os.replace(temp, full)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    crashpoint("write.after_rename")
    fsync_directory(directory)


def fsync_directory(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(lock_path: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) for the block."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)

"""The root's files, reached without ever leaving it: confinement, and reads.

- Every path is confined to the root: no ``..``, absolute path or symlink leads outside it,
  and a managed file that is itself a symlink is refused (a replace would turn it into a
  regular file behind the user's back). Reads and writes (``fs.atomic``) reach the file's
  directory without following symlinks, so one swapped in between the check and the write
  is refused.
- ``read_bytes`` with ``whole`` refuses a file another process has open for writing (a save
  in progress): ``Raced``, also what a guarded replace raises when the file changed since it
  was read.
"""

from __future__ import annotations

import errno
import os
import stat

from memkeeper.errors import EnvironmentFailure, Invalid

TYPE_CHECKING = False


class Raced(Exception):
    """The file no longer holds the bytes memkeeper read: a writer that takes no lock saved it
    since. Nothing was replaced; ``current`` is what it holds now (``None``: it is gone)."""

    def __init__(self, relpath: str, current: bytes | None) -> None:
        super().__init__(f"{relpath}: changed on disk while memkeeper was writing it")
        self.relpath = relpath
        self.current = current


def confine(root: str | os.PathLike[str], relpath: str) -> str:
    """Normalise a root-relative POSIX path, refusing anything that leaves the root. A
    symlinked directory on the way is resolved: the path answered names the file reached
    (``alias/x.md`` is ``real/x.md``), so the policy judges that file, not the name given —
    else an alias of a private directory, or of the root, would read it as another class."""
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
    head, _, name = clean.rpartition("/")
    if not head:
        return clean
    # the file itself is not resolved: a symlink in its place is refused where it is read
    real_head = os.path.realpath(os.path.join(real_root, head))
    if real_head == real_root:
        return name
    return os.path.relpath(real_head, real_root).replace(os.sep, "/") + "/" + name


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
            try:
                target = f" to {os.readlink(os.path.join(root, relpath))}"
            except OSError:
                target = ""
            raise Invalid(
                f"{relpath}: is a symlink{target} — memkeeper edits regular files only; "
                "name the file it points to (or point the policy at it)",
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
        if whole:
            from memkeeper.fs import processes

            if processes.open_for_writing(fd):
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


def identity(root: str | os.PathLike[str], relpath: str) -> tuple[int, int, int] | None:
    """The file's inode, mtime (ns) and size, not following a symlink (``None``: it is gone):
    what tells the file a replace left from one another program wrote since."""
    try:
        info = os.stat(os.path.join(root, relpath), follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size

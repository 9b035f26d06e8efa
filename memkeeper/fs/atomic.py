"""The atomic replace of a file's bytes, guarded against writers that take no lock.

``atomic_write`` writes a temp file in the same directory, fsyncs it, renames it over the
target and fsyncs the directory, keeping the file's mode: a crash leaves old or new bytes.
Given the bytes it expects to replace, it first hard-links the file to a keep path and
checks through that link that it still holds them (``Raced`` if not: a writer that takes no
lock saved it since, and nothing is replaced); after the rename the link keeps the replaced
inode, so what a writer puts into it later is not lost (``KeptLinks.settle_kept``). The
same replace in two steps (``stage``, then ``Staged.finish``) lets the store commit in
between, with no fsync of its own (``WriteAhead``). Every step happens relative to the
directory ``files.open_directory`` reached, never through a symlink.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from memkeeper.errors import Invalid
from memkeeper.fs import crash, processes
from memkeeper.fs.files import Raced, open_directory, read_fd
from memkeeper.names import temp_name, temp_pid


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
            crash.crashpoint("write.after_rename")
            if self._sync:
                os.fsync(directory)
        finally:
            self._close()
        keep = self.keep
        if not self._linked or keep is None:
            return False
        if base is not None:
            from memkeeper.fs import background

            background.submit(_settle_link, keep, self._expected, base)
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
            held, writing = read_fd(fd), processes.open_for_writing(fd)
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
    if not processes.still_writable(keep) and _holds(keep, expected):
        os.unlink(keep)
        return False
    if base is not None:
        with open(base[0], "wb") as handle:
            handle.write(base[1])
    return True


def _holds(path: str, expected: bytes | None) -> bool:
    """Whether the file at ``path`` still holds ``expected``."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        return read_fd(fd) == expected
    finally:
        os.close(fd)


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
            held, writing = read_fd(fd), processes.open_for_writing(fd)
        finally:
            os.close(fd)
    if held != expected or writing:
        if link:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link)
        raise Raced(relpath, held)
    return link is not None


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
            crash.crashpoint("write.after_temp_write")
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
        if pid is not None and entry == temp_name(name, pid) and not processes.pid_alive(pid):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, entry))

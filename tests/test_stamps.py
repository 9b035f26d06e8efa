"""``memkeeper.stamps``: when a stat stamp recorded at a read stands in for reading the file
again — and, on a simulated file system whose timestamps move in ticks, that it never does
for a file whose bytes changed since."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from memkeeper.stamps import (
    RACY_MARGIN_NS,
    Stamp,
    Stamped,
    judged_clean,
    kept_clean,
    racy,
    stamp_of,
    trusted,
    unchanged,
)

SECOND = 1_000_000_000
T = 1_700_000_000 * SECOND  # when the stamps below were taken
OLD = Stamp(120, T - 60 * SECOND, T - 60 * SECOND, 7, 2049)


def known(stamp: Stamp = OLD, hash: str = "sha256:a", clean: str | None = None) -> Stamped:
    return Stamped("memory/a.md", stamp, hash, T, clean)


def test_a_stamp_of_a_file_changed_long_before_it_was_taken_stands_in_for_a_read() -> None:
    assert unchanged(known(), OLD, "sha256:a")
    assert judged_clean(known(clean="k"), OLD, "k")


def test_a_stamp_stands_in_only_for_the_bytes_it_was_taken_with() -> None:
    assert not unchanged(known(), OLD, "sha256:b")  # the index moved on (a replace not landed)
    assert not unchanged(known(), OLD, None)  # no longer indexed
    assert not judged_clean(known(clean="k"), OLD, "other rules or policy")
    assert not judged_clean(known(), OLD, "k")  # never found clean


def test_no_stamp_known_or_no_file_now_means_reading() -> None:
    assert not unchanged(None, OLD, "sha256:a")
    assert not unchanged(known(), None, "sha256:a")


def test_each_field_of_the_stamp_that_moved_means_reading() -> None:
    for field in Stamp.FIELDS:
        moved = OLD._replace(**{field: getattr(OLD, field) + 1})
        assert not unchanged(known(), moved, "sha256:a"), field


def test_git_s_racily_clean_rule_a_file_changed_close_to_the_moment_its_stamp_was_taken() -> None:
    late = OLD._replace(mtime_ns=T - RACY_MARGIN_NS, ctime_ns=T - RACY_MARGIN_NS)
    assert racy(late, T)
    assert not unchanged(known(late), late, "sha256:a")
    just_old_enough = late._replace(mtime_ns=late.mtime_ns - 1, ctime_ns=late.ctime_ns - 1)
    assert unchanged(known(just_old_enough), just_old_enough, "sha256:a")


def test_an_mtime_in_the_future_or_a_fresh_ctime_alone_is_racy() -> None:
    assert racy(OLD._replace(mtime_ns=T + SECOND), T)  # touch -d into the future
    assert racy(OLD._replace(ctime_ns=T), T)  # mtime put back, the ctime says when


def test_a_check_s_verdict_stays_with_the_same_bytes_only() -> None:
    old = known(clean="k")
    same = Stamped("memory/a.md", OLD._replace(inode=8), "sha256:a", T + SECOND)
    assert kept_clean(old, same).clean == "k"  # a checkout wrote the same bytes again
    other = same._replace(hash="sha256:b")
    assert kept_clean(old, other).clean is None
    assert kept_clean(old, same._replace(clean="k2")).clean == "k2"
    assert kept_clean(None, same) == same


def test_stamp_of_takes_what_lstat_says(tmp_path: os.PathLike[str]) -> None:
    path = os.path.join(tmp_path, "f")
    with open(path, "wb") as handle:
        handle.write(b"12345")
    info = os.lstat(path)
    assert stamp_of(info) == Stamp(5, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


# -- a simulated file system: a changed file is always read -----------------------------------

# What can happen to one file between two looks, and a look (which may race a write).
Op = tuple[str, int, int]
OPS = st.tuples(
    st.sampled_from(["write", "rewrite-same-size", "replace", "recreate", "utime", "look"]),
    st.integers(0, 3 * RACY_MARGIN_NS),  # time passing before it
    st.integers(0, 3),  # a size, an mtime offset, or whether a write races the look
)


class File:
    """One file on a file system whose timestamps move in ticks of ``tick`` ns."""

    def __init__(self, tick: int) -> None:
        self.tick, self.now, self.version = tick, T, 0
        self.stamp = Stamp(10, self.coarse(), self.coarse(), 10, 1)

    def coarse(self) -> int:
        return self.now - self.now % self.tick

    def changed(self, size: int, inode: int | None = None) -> None:
        self.version += 1
        when = self.coarse()
        self.stamp = Stamp(size, when, when, self.stamp.inode if inode is None else inode, 1)

    def apply(self, kind: str, arg: int) -> None:
        if kind == "write":
            self.changed(self.stamp.size + arg)
        elif kind == "rewrite-same-size":
            self.changed(self.stamp.size)
        elif kind == "replace":  # a temp file renamed over it: another inode
            self.changed(self.stamp.size, inode=self.stamp.inode + 1)
        elif kind == "recreate":  # unlinked, then created again: the inode number reused
            self.changed(self.stamp.size)
        elif kind == "utime":  # the mtime set by hand (the bytes changed first)
            self.changed(self.stamp.size)
            old = self.stamp.mtime_ns - arg * SECOND
            self.stamp = self.stamp._replace(mtime_ns=old)


@settings(deadline=None)  # pure and quick, but the machine the suite shares may not be
@given(st.sampled_from([1, 4_000_000, SECOND, 2 * SECOND]), st.lists(OPS, max_size=40))
def test_a_file_whose_bytes_changed_is_never_taken_as_unchanged(tick: int, ops: list[Op]) -> None:
    disk = File(tick)
    indexed: Stamped | None = None  # what the last look recorded
    for kind, elapsed, arg in ops:
        disk.now += elapsed
        if kind != "look":
            disk.apply(kind, arg)
            continue
        if indexed is not None and unchanged(indexed, disk.stamp, indexed.hash):
            assert indexed.hash == f"v{disk.version}", "a changed file was taken as unchanged"
            continue
        taken, stamp = disk.now, disk.stamp  # the time, then the lstat, then the read …
        if arg == 3:  # … which a write races: the bytes read are already the next ones
            disk.now += 1
            disk.apply("rewrite-same-size", 0)
        if not racy(stamp, taken):
            indexed = Stamped("f", stamp, f"v{disk.version}", taken)
            assert trusted(indexed, stamp)

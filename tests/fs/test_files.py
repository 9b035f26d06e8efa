"""Confinement and reads: no path leaves the root, no read follows a symlink, and a read of the
whole file refuses a save in progress."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.fs import files as fsio

HOLD_OPEN = """
import sys, time
handle = open(sys.argv[1], "ab")
print("open", flush=True)
time.sleep(60)
"""


# -- confine --------------------------------------------------------------------------------


def test_confine_accepts_and_normalises_a_nested_path(tmp_path: Path) -> None:
    assert fsio.confine(tmp_path, "memory/scratch/x.md") == "memory/scratch/x.md"
    assert fsio.confine(tmp_path, "./memory//x.md") == "memory/x.md"
    assert fsio.confine(tmp_path, "memory\\x.md") == "memory/x.md"


@pytest.mark.parametrize(
    "bad", ["../x.md", "a/../../x.md", "a/../b.md", "/etc/passwd", "", ".", "./", "..\\x.md"]
)
def test_confine_refuses_paths_that_leave_or_name_no_file(tmp_path: Path, bad: str) -> None:
    with pytest.raises(Invalid, match="outside the memory root") as caught:
        fsio.confine(tmp_path, bad)
    assert caught.value.fields["path"] == bad


def test_confine_refuses_a_symlinked_directory_pointing_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "memory").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Invalid, match="symlink"):
        fsio.confine(root, "memory/x.md")


def test_confine_allows_a_symlinked_directory_that_stays_inside(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert fsio.confine(tmp_path, "alias/x.md") == "real/x.md"


def test_confine_names_the_file_an_alias_of_the_root_reaches(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "x").symlink_to(tmp_path, target_is_directory=True)
    assert fsio.confine(tmp_path, "memory/x/memory/log.md") == "memory/log.md"
    assert fsio.confine(tmp_path, "memory/x/top.md") == "top.md"


def test_confine_works_when_the_root_itself_is_reached_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert fsio.confine(tmp_path / "link", "x.md") == "x.md"


# -- read_bytes -----------------------------------------------------------------------------


def test_read_bytes_returns_the_exact_bytes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf# T\r\nbody  \r\nno final newline"
    (tmp_path / "a.md").write_bytes(data)
    assert fsio.read_bytes(tmp_path, "a.md") == data


def test_read_bytes_refuses_a_symlink_even_to_a_file_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    with pytest.raises(Invalid, match="symlink"):
        fsio.read_bytes(tmp_path, "link.md")


def test_read_bytes_refuses_a_dangling_symlink_as_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "link.md").symlink_to(tmp_path / "gone.md")
    with pytest.raises(Invalid, match="symlink"):
        fsio.read_bytes(tmp_path, "link.md")


def test_read_bytes_refuses_a_directory(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    with pytest.raises(Invalid, match="memory: is a directory"):
        fsio.read_bytes(tmp_path, "memory")


def test_read_bytes_of_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(Invalid, match=r"^nope\.md: no such file — check the path"):
        fsio.read_bytes(tmp_path, "nope.md")


def test_read_bytes_under_a_file_is_invalid_not_an_environment_failure(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    with pytest.raises(Invalid, match="no such file"):
        fsio.read_bytes(tmp_path, "a.md/b.md")


def test_read_bytes_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(Invalid, match="not a regular file"):
        fsio.read_bytes(tmp_path, "pipe.md")


def test_read_bytes_reports_other_open_errors_as_environment_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.md").write_text("x")

    def denied(path: str, flags: int, mode: int = 0o777) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(EnvironmentFailure, match=r"secret\.md: cannot open: Permission denied"):
        fsio.read_bytes(tmp_path, "secret.md")


# -- make_directories -----------------------------------------------------------------------


def test_make_directories_creates_what_is_missing_and_keeps_what_is_there(
    tmp_path: Path,
) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory/keep.md").write_text("x")
    fsio.make_directories(tmp_path, "memory/log/2026/day.md")
    assert (tmp_path / "memory/log/2026").is_dir()
    assert not (tmp_path / "memory/log/2026/day.md").exists()
    assert (tmp_path / "memory/keep.md").read_text() == "x"
    fsio.make_directories(tmp_path, "memory/log/2026/day.md")  # again: nothing to do
    fsio.make_directories(tmp_path, "top.md")


def test_make_directories_never_goes_through_a_symlink_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "memory").symlink_to(outside)
    with pytest.raises(Invalid, match="outside the memory root"):
        fsio.make_directories(root, "memory/log/day.md")
    assert list(outside.iterdir()) == []


def test_make_directories_names_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("x")
    with pytest.raises(Invalid, match=r"^memory/log/a\.md: 'memory' on its path is a file"):
        fsio.make_directories(tmp_path, "memory/log/a.md")


def test_a_symlinks_refusal_names_what_it_points_to(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "link.md").symlink_to("real.md")
    with pytest.raises(Invalid) as caught:
        fsio.read_bytes(tmp_path, "link.md")
    assert caught.value.message.startswith("link.md: is a symlink to real.md — ")
    assert "name the file it points to" in caught.value.message

"""``fs.stampfile``: a shared store's root keeps its files' stat stamps in its home — a cache
that reads as empty when it is missing, torn or not ours, and never fails a command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memkeeper.fs.stampfile import StampFile
from memkeeper.names import STAMP_FILE
from memkeeper.stamps import Stamp, Stamped

ROW = Stamped("memory/a.md", Stamp(10, 1, 2, 3, 4), "sha256:a", 5, "key")


def test_the_stamps_are_one_json_file_in_the_home_written_by_rename(tmp_path: Path) -> None:
    StampFile(str(tmp_path)).put_stamps([ROW])
    assert sorted(os.listdir(tmp_path)) == [STAMP_FILE]  # no temp file left
    saved = json.loads((tmp_path / STAMP_FILE).read_text())
    assert saved == {"format": 1, "stamps": {"memory/a.md": [10, 1, 2, 3, 4, "sha256:a", 5, "key"]}}
    assert StampFile(str(tmp_path)).stamps() == {"memory/a.md": ROW}


@pytest.mark.parametrize(
    "text",
    [
        "",
        '{"format": 1, "stamps": {"memory/a.md": [10, 1, 2, 3, 4, "sha256:a", 5',  # torn
        '{"format": 2, "stamps": {}}',  # a later memkeeper's
        '{"format": 1, "stamps": {"memory/a.md": ["10", 1, 2, 3, 4, "sha256:a", 5, null]}}',
        '{"format": 1, "stamps": {"memory/a.md": [10, 1, 2, 3, 4, "sha256:a", 5, 7]}}',
        '{"format": 1, "stamps": {"memory/a.md": [10, 1, 2]}}',
        "[1, 2]",
    ],
)
def test_a_stamp_file_that_is_not_whole_or_not_ours_reads_as_no_stamps(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / STAMP_FILE).write_text(text)
    assert StampFile(str(tmp_path)).stamps() == {}


def test_a_home_that_is_gone_loses_the_stamps_without_failing(tmp_path: Path) -> None:
    gone = StampFile(str(tmp_path / "no-such-home"))
    gone.put_stamps([ROW])
    assert gone.stamps() == {}

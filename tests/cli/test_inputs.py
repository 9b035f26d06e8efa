"""The files a verb reads its input from (``--body-file``, ``--entry-file``), ``-`` for stdin."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memkeeper.cli.inputs import read_input
from memkeeper.errors import Invalid
from tests.conftest import Cli, tree_bytes


def test_dash_reads_stdin_as_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"body\r\n\xff")))
    assert read_input("-") == b"body\r\n\xff"


def test_a_file_is_read_byte_for_byte(tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_bytes(b"\xef\xbb\xbfline\r\nnot utf-8: \xfe\n")
    assert read_input(str(body)) == body.read_bytes()


def test_an_empty_file_is_empty_input(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert read_input(str(tmp_path / "empty")) == b""


def test_a_file_named_like_an_option_is_still_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "--").write_bytes(b"x")
    assert read_input("--") == b"x"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: None, "No such file or directory"),
        (lambda p: p.mkdir(), "Is a directory"),
    ],
    ids=["missing", "a directory"],
)
def test_an_unreadable_file_is_invalid_and_names_it(
    tmp_path: Path, make: Callable[[Path], object], why: str
) -> None:
    path = tmp_path / "body.md"
    make(path)
    with pytest.raises(Invalid) as raised:
        read_input(str(path))
    assert raised.value.message == f"{path}: cannot read ({why}) — give an existing file or '-'"
    assert (raised.value.exit_code, raised.value.fields) == (2, {"path": str(path)})
    assert raised.value.__cause__ is None  # the OSError is not chained into the message


def test_a_patch_from_a_missing_body_file_exits_2_and_changes_nothing(
    cli: Cli, sample: Path
) -> None:
    before = tree_bytes(sample)
    done = cli("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "nope.md", "--json")
    assert done.code == 2
    assert (done.json["status"], done.json["path"]) == ("invalid", "nope.md")
    assert tree_bytes(sample) == before


def test_an_append_from_an_entry_file_in_a_subdirectory_is_found_from_the_cwd(
    cli: Cli, sample: Path
) -> None:
    (sample / "memory" / "entry.txt").write_text("From the cwd.\n")
    done = cli("append", "risks.md", "--entry-file", "entry.txt", cwd=sample / "memory")
    assert done.code == 0, done.stderr
    assert (sample / "memory/risks.md").read_text().endswith("\n\nFrom the cwd.\n")

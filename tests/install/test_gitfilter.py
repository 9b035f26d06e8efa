"""The clean filter ``install-hooks`` sets up: memkeeper's block in ``.gitattributes`` (every
other line the user's) and the filter's command in git's config; ``uninstall-hooks`` takes
out both."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from memkeeper.errors import Invalid, PolicyInvalid
from memkeeper.install.gitfilter import (
    BEGIN,
    END,
    block,
    install_filter,
    patterns,
    uninstall_filter,
    with_block,
)
from memkeeper.policy.loader import parse_policy

POLICY = """version: 1
files:
  - path: memory/status.md
    class: generated
  - path: docs/
    class: generated
  - path: README.md
    class: generated
    git: snapshot
  - path: memory/**
    class: section-owned
"""


class FakeGit:
    """git config as a dict."""

    def __init__(self) -> None:
        self.config: dict[str, str] = {}

    def __call__(self, args: Sequence[str], cwd: Path) -> tuple[int, bytes]:
        if list(args[:2]) == ["config", "--get"]:
            found = self.config.get(args[2])
            return (0, found.encode() + b"\n") if found is not None else (1, b"")
        if list(args[:2]) == ["config", "--remove-section"]:
            gone = [k for k in self.config if k.startswith(args[2] + ".")]
            for key in gone:
                del self.config[key]
            return (0 if gone else 1), b""
        if list(args[:2]) == ["config", "--unset"]:
            return (0, b"") if self.config.pop(args[2], None) is not None else (5, b"")
        self.config[args[1]] = args[2]
        return 0, b""


def test_placeholder_rules_are_filtered_and_a_directory_glob_reaches_its_files() -> None:
    assert patterns(parse_policy(POLICY.encode())) == ["memory/status.md", "docs/**"]


def test_the_block_replaces_itself_and_keeps_the_users_lines() -> None:
    mine = block(["a.md"])
    assert mine == f"{BEGIN}\na.md filter=memkeeper\n{END}\n"
    users = "*.png binary\n"
    once = with_block(users, mine)
    assert once == users + mine
    assert with_block(once, mine) == once
    assert with_block(once + "*.jpg binary\n", block(["b.md"])) == (
        users + block(["b.md"]) + "*.jpg binary\n"
    )
    assert with_block(once, "") == users
    assert with_block("no newline", mine) == "no newline\n" + mine
    assert block(["with space.md"]) == f'{BEGIN}\n"with space.md" filter=memkeeper\n{END}\n'


def test_install_writes_the_attributes_and_config_once_and_uninstall_removes_them(
    tmp_path: Path,
) -> None:
    (tmp_path / ".memkeeper.yaml").write_text(POLICY)
    (tmp_path / ".gitattributes").write_text("*.png binary\n")
    git = FakeGit()
    first = install_filter(tmp_path, "/venv/bin/python", git)
    assert first["attributes_changed"]
    assert first["filter_changed"]
    assert git.config == {
        "filter.memkeeper.clean": "/venv/bin/python -P -m memkeeper filter clean %f",
        "core.trustctime": "false",  # a live page linked aside moves its change time alone
        "filter.memkeeper.trustctime-off": "true",
    }
    assert first["trustctime_off"]
    text = (tmp_path / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n" + BEGIN)
    assert "memory/status.md filter=memkeeper\ndocs/** filter=memkeeper\n" in text
    again = install_filter(tmp_path, "/venv/bin/python", git)
    assert not again["attributes_changed"]
    assert not again["filter_changed"]
    done = uninstall_filter(tmp_path, git)
    assert done["attributes_changed"]
    assert done["filter_removed"]
    assert (tmp_path / ".gitattributes").read_text() == "*.png binary\n"
    assert git.config == {}


def test_a_gitattributes_holding_only_memkeepers_lines_is_deleted_on_uninstall(
    tmp_path: Path,
) -> None:
    (tmp_path / ".memkeeper.yaml").write_text(POLICY)
    install_filter(tmp_path, "/py", FakeGit())
    uninstall_filter(tmp_path, FakeGit())
    assert not (tmp_path / ".gitattributes").exists()
    assert uninstall_filter(tmp_path, FakeGit())["attributes_changed"] is False


def test_an_invalid_policy_or_attributes_file_is_refused_with_nothing_written(
    tmp_path: Path,
) -> None:
    (tmp_path / ".memkeeper.yaml").write_text("version: [\n")
    git = FakeGit()
    with pytest.raises(PolicyInvalid):
        install_filter(tmp_path, "/py", git)
    assert git.config == {}
    assert not (tmp_path / ".gitattributes").exists()
    (tmp_path / ".memkeeper.yaml").write_text(POLICY)
    (tmp_path / ".gitattributes").write_bytes(b"\xff\n")
    with pytest.raises(Invalid, match="not UTF-8"):
        install_filter(tmp_path, "/py", git)
    assert (tmp_path / ".gitattributes").read_bytes() == b"\xff\n"


def test_a_trustctime_the_user_set_either_way_stays_as_it_is(tmp_path: Path) -> None:
    (tmp_path / ".memkeeper.yaml").write_text(POLICY)
    for theirs in ("true", "false"):
        git = FakeGit()
        git.config["core.trustctime"] = theirs
        assert install_filter(tmp_path, "/venv/bin/python", git)["trustctime_off"] is False
        assert "filter.memkeeper.trustctime-off" not in git.config
        uninstall_filter(tmp_path, git)
        assert git.config == {"core.trustctime": theirs}

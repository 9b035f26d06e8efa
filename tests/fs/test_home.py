"""The home's own files: this root's id (the first made stays), a shared store's verdict cache
(none readable: empty), the kept links with the ``.base`` beside each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memkeeper.fs import home
from memkeeper.fs.home import prepare_home, read_store_mark, write_store_mark
from memkeeper.names import kept_name


@pytest.fixture
def where(tmp_path: Path) -> str:
    made = tmp_path / ".memkeeper"
    made.mkdir()
    return str(made)


def test_a_root_id_is_made_once_and_read_back(where: str) -> None:
    assert home.read_root_id(where) is None
    made = home.make_root_id(where)
    assert made is not None
    assert len(made) == 12
    assert int(made, 16) >= 0
    assert home.read_root_id(where) == made
    assert sorted(os.listdir(where)) == ["root-id"], "no temp file left"


def test_the_first_root_id_made_stays(where: str) -> None:
    first = home.make_root_id(where)
    assert home.make_root_id(where) is None
    assert home.read_root_id(where) == first
    assert sorted(os.listdir(where)) == ["root-id"]


def test_an_empty_root_id_file_counts_as_none(where: str) -> None:
    Path(where, "root-id").write_text("\n")
    assert home.read_root_id(where) is None


def test_the_policy_cache_is_written_whole_and_read_back(where: str) -> None:
    assert home.read_policy_cache(where) == {}
    home.write_policy_cache(where, {"rule:h:CLAUDE.md#": "[1]"})
    assert home.read_policy_cache(where) == {"rule:h:CLAUDE.md#": "[1]"}
    assert sorted(os.listdir(where)) == ["policy-cache.json"]


@pytest.mark.parametrize("text", ["{torn", "[1, 2]", "\xff"])
def test_a_policy_cache_that_is_no_json_object_is_empty(where: str, text: str) -> None:
    Path(where, "policy-cache.json").write_bytes(text.encode("latin-1"))
    assert home.read_policy_cache(where) == {}


def test_kept_links_are_listed_by_file_then_oldest_first_without_their_bases(where: str) -> None:
    assert home.kept_links(where) is None
    kept_dir = home.make_kept_dir(where)
    assert home.make_kept_dir(where) == kept_dir == os.path.join(where, "kept")
    assert home.kept_links(where) == []
    names = [kept_name("a.md", stamp, "sha256:" + "0" * 64) for stamp in (20, 10)]
    for name in names:
        Path(kept_dir, name).write_bytes(b"held")
    path, _ = home.kept_base(os.path.join(kept_dir, names[0]), "a.md", b"old")
    Path(path).write_bytes(b"")
    assert home.kept_links(where) == sorted(names)


def test_a_kept_base_holds_the_files_path_and_bytes(where: str) -> None:
    link = os.path.join(home.make_kept_dir(where), "link")
    path, data = home.kept_base(link, "memory/a.md", b"old\x00bytes\n")
    assert path == link + ".base"
    Path(path).write_bytes(data)
    assert home.read_kept_base(link) == ("memory/a.md", b"old\x00bytes\n")


def test_a_kept_link_without_its_base_says_so(where: str) -> None:
    with pytest.raises(FileNotFoundError):
        home.read_kept_base(os.path.join(where, "link"))


def test_dropping_a_kept_link_removes_it_and_its_base_whichever_is_there(where: str) -> None:
    link = os.path.join(home.make_kept_dir(where), "link")
    Path(link).write_bytes(b"held")
    Path(link + ".base").write_bytes(b"a.md\x00old")
    assert home.read_bytes(link) == b"held"
    home.drop_kept(link)
    assert os.listdir(os.path.dirname(link)) == []
    home.drop_kept(link)


def test_the_home_is_prepared_with_a_gitignore_of_everything_and_its_locks(tmp_path: Path) -> None:
    home = tmp_path / ".memkeeper"
    prepare_home(str(home))
    assert (home / ".gitignore").read_text() == "*\n"
    assert (home / "locks").is_dir()


def test_the_store_mark_is_written_whole_and_read_back(tmp_path: Path) -> None:
    assert read_store_mark(str(tmp_path)) is None
    write_store_mark(str(tmp_path), "ab12")
    assert read_store_mark(str(tmp_path)) == "ab12"
    assert [p.name for p in tmp_path.iterdir()] == ["store-id"]

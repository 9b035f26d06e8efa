"""Writers that take no lock, under a shared store: a human's save racing the replace that
brings a root's file up to date with what another root patched. The save is never lost: it
is merged with the other root's change and pushed to the store."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper import Memory
from memkeeper.fs import atomic, background, synced
from memkeeper.store.etcd import EtcdStore
from tests.conftest import SAMPLE_REPO

# two roots, each a git repository of its own
pytestmark = pytest.mark.peer("git")

if TYPE_CHECKING:
    from memkeeper.store.etcd.stm import Txn
    from tests.etcd_cluster import Cluster

REF = "CLAUDE.md#build"
HUMAN = "- the human's line\n"
_prefixes = itertools.count(1)


@pytest.fixture
def pair(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Memory, Memory, Path]]:
    """Roots a and b on one etcd prefix, both agreeing with it, and a patch of a's that b
    has not brought in yet; b's root is the third value."""
    for name, value in cluster.store_env(f"shared{next(_prefixes)}").items():
        monkeypatch.setenv(name, value)
    roots = []
    for name in ("a", "b"):
        shutil.copytree(SAMPLE_REPO, tmp_path / name)
        subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
        roots.append(tmp_path / name)
    a, b = Memory(roots[0], "agent-a"), Memory(roots[1], "agent-b")
    section = a.read(REF)
    b.read(REF)
    a.patch(REF, section.content + "- from a\n", expect_rev=section.rev)
    yield a, b, roots[1]
    a.close()
    b.close()


def human_saves(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace("## Testing\n", "## Testing\n" + HUMAN, 1))


def test_a_save_before_the_replace_that_brings_the_file_up_to_date_is_merged_and_pushed(
    pair: tuple[Memory, Memory, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, root = pair
    real, saved = atomic.stage, list[bool]()

    def editor_saves_first(top: object, rel: str, data: bytes, **kwargs: object) -> atomic.Staged:
        if str(top) == str(root) and not saved:
            human_saves(root / "CLAUDE.md")  # no lock: between b's read and its replace
            saved.append(True)
        return real(top, rel, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic, "stage", editor_saves_first)
    b.read(REF)
    assert saved
    text = (root / "CLAUDE.md").read_text()
    assert HUMAN in text
    assert "- from a\n" in text
    assert HUMAN in a.read("CLAUDE.md#testing").content  # pushed
    assert (a.root / "CLAUDE.md").read_text() == text


def test_a_save_in_the_rename_window_of_that_replace_is_recovered_and_pushed(
    pair: tuple[Memory, Memory, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, root = pair
    real, saved = os.replace, list[bool]()

    def save_then_rename(src: str, dst: str, **kwargs: object) -> None:
        if dst == "CLAUDE.md" and not saved:
            with open(root / "CLAUDE.md", "r+b") as editor:  # the old file, by its name
                data = editor.read().replace(b"## Testing\n", b"## Testing\n" + HUMAN.encode())
                editor.seek(0)
                editor.truncate(0)
                editor.write(data)
            saved.append(True)
        real(src, dst, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", save_then_rename)
    b.read(REF)
    monkeypatch.undo()
    assert saved
    assert "- from a\n" in (root / "CLAUDE.md").read_text()  # the replace happened …
    background.drain()
    for link in (root / ".memkeeper" / "kept").iterdir():  # … and kept the saved-into file
        os.utime(link, (time.time() - 10, time.time() - 10))
    assert b.workspace.settle_kept(now=time.time() + 10) == ["CLAUDE.md"]
    text = (root / "CLAUDE.md").read_text()
    assert HUMAN in text
    assert "- from a\n" in text
    assert HUMAN in a.read("CLAUDE.md#testing").content


def test_a_read_that_saw_the_file_before_a_write_of_its_own_root_never_marks_it_older(
    pair: tuple[Memory, Memory, Path],
) -> None:
    """A read found the file agreeing with the store at rev N and, before it wrote that down,
    a write of the same root made rev N+1 and marked it: the read's mark (rev N) must not
    replace the write's, which describes what the file holds."""
    a, _, _ = pair
    ws = a.workspace
    section = a.read(REF)
    seen, data = ws.store.file_state("CLAUDE.md"), (a.root / "CLAUDE.md").read_bytes()
    assert seen is not None
    a.patch(REF, section.content + "- the write\n", expect_rev=section.rev)
    mark = synced.read_mark(ws.home, "CLAUDE.md")
    assert mark is not None
    assert mark.rev > seen.file_rev
    ws.sync._marked.pop("CLAUDE.md")  # as a reader in another Workspace of this root knows nothing
    ws.seen_agreeing("CLAUDE.md", seen, data)  # the read, late
    after = synced.read_mark(ws.home, "CLAUDE.md")
    assert after is not None
    assert (after.rev, after.hash) == (mark.rev, mark.hash)


def test_two_roots_indexing_a_file_at_once_both_answer(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first look of two roots at one file the store does not have yet, at the same
    moment (the demo's `watch` under one clone and a `read` under the other): the one whose
    commit comes second starts over on what the first stored, and answers."""
    for name, value in cluster.store_env(f"first{next(_prefixes)}").items():
        monkeypatch.setenv(name, value)
    for name in ("a", "b"):
        shutil.copytree(SAMPLE_REPO, tmp_path / name)
        subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
    a, b = Memory(tmp_path / "a", "agent-a"), Memory(tmp_path / "b", "agent-b")
    store = b.workspace.store
    assert isinstance(store, EtcdStore)
    real, raced = store._commit, list[bool]()

    def the_other_root_first(txn: Txn) -> None:
        if not raced:
            raced.append(True)
            a.read(REF)  # a indexes CLAUDE.md between b's reads and b's commit
        real(txn)

    monkeypatch.setattr(store, "_commit", the_other_root_first)
    section = b.read(REF)
    assert raced
    assert section.content == a.read(REF).content
    assert section.rev == a.read(REF).rev
    a.close()
    b.close()

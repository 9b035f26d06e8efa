"""Installing the git hooks is a compare-and-swap on each hook's bytes: a save of the hook by
a writer that takes no lock of ours — in the window between our read and our write, or at
any moment from another thread — is never overwritten, and a second foreign hook never
replaces the ``NAME.legacy`` kept from the first."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest

from memkeeper.errors import Conflict, Refused
from memkeeper.install import hookswap
from memkeeper.install.githook import hook_script, install_git_hook, push_script

THEIRS = b"#!/bin/sh\necho theirs\n"
SAVED = b"#!/bin/sh\necho saved meanwhile\n"


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def save(path: Path, data: bytes) -> None:
    """As an editor saves: a new file renamed over the old one."""
    temp = path.with_name(f"{path.name}.{threading.get_ident()}.swp")
    temp.write_bytes(data)
    os.replace(temp, path)


def saving_in_the_window(monkeypatch: pytest.MonkeyPatch, hook: Path, data: bytes) -> None:
    monkeypatch.setattr(hookswap, "window", lambda: save(hook, data))


def test_a_foreign_hook_saved_between_our_read_and_our_write_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pre-commit").write_bytes(THEIRS)
    saving_in_the_window(monkeypatch, tmp_path / "pre-commit", SAVED)
    with pytest.raises(Conflict, match="changed while install-hooks was writing") as caught:
        install_git_hook(tmp_path, "/py")
    assert caught.value.reason == "hook_changed"
    assert files(tmp_path) == {"pre-commit": SAVED}


def test_our_own_hook_saved_over_in_the_window_is_not_overwritten_by_the_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_git_hook(tmp_path, "/old/py")
    mine = hook_script("/old/py").encode() + b"# my edit\n"
    saving_in_the_window(monkeypatch, tmp_path / "pre-commit", mine)
    with pytest.raises(Conflict):
        install_git_hook(tmp_path, "/new/py")
    assert files(tmp_path)["pre-commit"] == mine


def test_a_save_made_while_the_hooks_name_is_free_stays_and_nothing_is_kept_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pre-commit").write_bytes(THEIRS)
    move_aside = hookswap._move_aside

    def then_a_save(hook: Path, aside: str, expected: hookswap.Seen) -> None:
        move_aside(hook, aside, expected)
        save(hook, SAVED)

    monkeypatch.setattr(hookswap, "_move_aside", then_a_save)
    with pytest.raises(Conflict):
        install_git_hook(tmp_path, "/py")
    assert files(tmp_path) == {"pre-commit": SAVED}


def test_a_hook_created_where_there_was_none_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saving_in_the_window(monkeypatch, tmp_path / "pre-commit", SAVED)
    with pytest.raises(Conflict):
        install_git_hook(tmp_path, "/py")
    assert files(tmp_path) == {"pre-commit": SAVED}


def test_without_a_save_the_swap_leaves_only_the_hooks(tmp_path: Path) -> None:
    (tmp_path / "pre-push").write_bytes(THEIRS)
    install_git_hook(tmp_path, "/py")
    assert files(tmp_path) == {
        "pre-commit": hook_script("/py").encode(),
        "pre-push": push_script("/py").encode(),
        "pre-push.legacy": THEIRS,
    }
    assert os.stat(tmp_path / "pre-push").st_mode & 0o777 == 0o755


@pytest.mark.parametrize("name", ["pre-commit", "pre-push"])
def test_a_second_foreign_hook_never_replaces_the_legacy_one(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(THEIRS)
    install_git_hook(tmp_path, "/py")
    (tmp_path / name).write_bytes(SAVED)  # another tool replaced our hook with its own
    before = files(tmp_path)
    with pytest.raises(Refused, match=f"{name}.legacy already keeps an earlier one") as caught:
        install_git_hook(tmp_path, "/new/py")
    assert caught.value.reason == "legacy_exists"
    assert files(tmp_path) == before  # neither hook written


def test_a_legacy_hook_made_in_the_window_is_not_overwritten_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pre-commit").write_bytes(THEIRS)
    saving_in_the_window(monkeypatch, tmp_path / "pre-commit.legacy", SAVED)
    with pytest.raises(Refused):
        install_git_hook(tmp_path, "/py")
    assert files(tmp_path) == {"pre-commit": THEIRS, "pre-commit.legacy": SAVED}


def test_a_writer_saving_at_any_moment_never_loses_its_save(tmp_path: Path) -> None:
    """A thread saves the hook once, at a random moment around an install; its save ends at
    the hook's name or as the legacy hook — never lost — whoever wins."""
    rng = random.Random(25)
    outcomes: set[str] = set()
    for trial in range(60):
        hooks = tmp_path / str(trial)
        hooks.mkdir()
        hook = hooks / "pre-commit"
        hook.write_bytes(THEIRS)
        delay = rng.random() / 200
        start = threading.Barrier(2)

        def writer(
            to: Path = hook, wait: float = delay, barrier: threading.Barrier = start
        ) -> None:
            barrier.wait()
            threading.Event().wait(wait)
            save(to, SAVED)

        thread = threading.Thread(target=writer)
        thread.start()
        start.wait()
        try:
            install_git_hook(hooks, "/py")
            outcomes.add("installed")
        except Conflict:
            outcomes.add("conflict")
        thread.join()
        kept = files(hooks)
        assert SAVED in (kept.get("pre-commit"), kept.get("pre-commit.legacy")), kept
        assert set(kept) <= {"pre-commit", "pre-commit.legacy", "pre-push"}
    assert "installed" in outcomes

"""The git pre-commit and pre-push hooks: each script names the interpreter and runs a hook
that was there before first; a foreign hook is kept as ``NAME.legacy`` once and put back on
uninstall, ours rewritten in place; the hooks directory is git's own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memkeeper.errors import Invalid
from memkeeper.install.githook import (
    MARKER,
    PUSH_MARKER,
    hook_script,
    hooks_dir,
    install_git_hook,
    push_script,
    uninstall_git_hook,
)


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_hook_script_names_the_interpreter_and_runs_the_legacy_hook_first() -> None:
    script = hook_script("/my venv/bin/python")
    assert script.startswith("#!/bin/sh\n")
    assert MARKER in script
    assert "python='/my venv/bin/python'" in script
    assert script.index('pre-commit.legacy" "$@" || exit $?') < script.index(
        "-m memkeeper check --staged"
    )


def test_a_foreign_hook_is_kept_as_legacy_once_and_ours_is_rewritten_in_place(
    tmp_path: Path,
) -> None:
    (tmp_path / "pre-commit").write_text("#!/bin/sh\necho theirs\n")
    first = install_git_hook(tmp_path, "/py")
    second = install_git_hook(tmp_path, "/py")
    assert (first["moved_existing_hook"], first["git_hook_changed"]) == (True, True)
    assert (second["moved_existing_hook"], second["git_hook_changed"]) == (False, False)
    assert (tmp_path / "pre-commit.legacy").read_text() == "#!/bin/sh\necho theirs\n"
    assert (tmp_path / "pre-commit").read_text() == hook_script("/py")
    assert (tmp_path / "pre-commit").stat().st_mode & 0o111
    third = install_git_hook(tmp_path, "/other/py")
    assert third["git_hook_changed"]
    assert not third["moved_existing_hook"]
    assert (tmp_path / "pre-commit.legacy").read_text() == "#!/bin/sh\necho theirs\n"


def test_the_git_hook_it_moved_is_put_back_and_a_foreign_one_stays(tmp_path: Path) -> None:
    (tmp_path / "pre-commit").write_text("#!/bin/sh\necho theirs\n")
    install_git_hook(tmp_path, "/py")
    done = uninstall_git_hook(tmp_path)
    assert (done["git_hook_removed"], done["legacy_hook_restored"]) == (True, True)
    assert files(tmp_path) == {"pre-commit": b"#!/bin/sh\necho theirs\n"}
    again = uninstall_git_hook(tmp_path)
    assert (again["git_hook_removed"], again["legacy_hook_restored"]) == (False, False)
    assert files(tmp_path) == {"pre-commit": b"#!/bin/sh\necho theirs\n"}


def test_the_pre_push_hook_hands_gits_input_to_the_legacy_hook_and_to_check_push() -> None:
    script = push_script("/my venv/bin/python")
    assert PUSH_MARKER in script
    assert "refs=$(cat)" in script
    legacy = script.index('printf \'%s\\n\' "$refs" | "$here/pre-push.legacy" "$@" || exit $?')
    ours = script.index('"$python" -P -m memkeeper check --push --remote "$1"')
    assert script.index("refs=$(cat)") < legacy < ours


def test_a_foreign_pre_push_hook_is_kept_run_first_and_put_back(tmp_path: Path) -> None:
    (tmp_path / "pre-push").write_text("#!/bin/sh\necho theirs\n")
    first = install_git_hook(tmp_path, "/py")
    assert (first["push_moved_existing_hook"], first["push_hook_changed"]) == (True, True)
    assert first["push_legacy_hook"] == str(tmp_path / "pre-push.legacy")
    assert (tmp_path / "pre-push").read_text() == push_script("/py")
    assert (tmp_path / "pre-push").stat().st_mode & 0o111
    again = install_git_hook(tmp_path, "/py")
    assert (again["push_moved_existing_hook"], again["push_hook_changed"]) == (False, False)
    done = uninstall_git_hook(tmp_path)
    assert (done["push_hook_removed"], done["push_legacy_hook_restored"]) == (True, True)
    assert sorted(files(tmp_path)) == ["pre-push"]
    assert (tmp_path / "pre-push").read_text() == "#!/bin/sh\necho theirs\n"
    assert uninstall_git_hook(tmp_path)["push_hook_removed"] is False  # not ours: it stays


@pytest.mark.peer("git")
def test_the_hooks_directory_is_the_one_git_names(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "config", "core.hooksPath", "githooks"], cwd=tmp_path, check=True)
    assert hooks_dir(tmp_path) == tmp_path / "githooks"


def test_outside_a_git_repository_there_is_no_hooks_directory(tmp_path: Path) -> None:
    def no_git(args: object, cwd: Path) -> tuple[int, bytes]:
        return 128, b""

    with pytest.raises(Invalid, match="not a git repository"):
        hooks_dir(tmp_path, no_git)

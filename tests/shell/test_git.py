"""git's commands that write or discard files in the working tree."""

from __future__ import annotations

import pytest

from memkeeper.shell.effects import Sweep, Target
from memkeeper.shell.git import CHANGED, UNSTAGED, UNTRACKED
from memkeeper.shell.writes import bash_effects

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.shell.effects import GitState

ROOT = "/repo"
IGNORED: frozenset[GitState] = frozenset({"ignored"})
DIRS: frozenset[GitState] = frozenset({"untracked-dir"})


def effects(command: str, cwd: str = ROOT) -> list[Target | Sweep]:
    return list(bash_effects(command, cwd))


def sweeps(command: str, cwd: str = ROOT) -> list[Sweep]:
    return [e for e in effects(command, cwd) if isinstance(e, Sweep)]


def test_checkout_of_a_directory_loses_the_unstaged_changes_below_it() -> None:
    found = effects("git checkout -- .")
    assert found == [
        Target(ROOT, "git checkout"),
        Sweep(ROOT, "git checkout", ROOT, mindepth=1, git=UNSTAGED, instead="git checkout -- . {}"),
    ]


def test_checkout_from_a_revision_loses_staged_changes_too() -> None:
    [sweep] = sweeps("git checkout HEAD~1 -- memory")
    assert (sweep.top, sweep.git) == ("/repo/memory", CHANGED)
    assert sweep.instead == "git checkout 'HEAD~1' -- memory {}"
    [bare] = sweeps("git checkout main memory")
    assert (bare.top, bare.git, bare.instead) == (
        "/repo/memory",
        CHANGED,
        "git checkout main -- memory {}",
    )


def test_checkout_f_and_switch_f_lose_the_whole_trees_changes() -> None:
    for command in ("git checkout -f main", "git switch --discard-changes main"):
        [sweep] = sweeps(command)
        assert (sweep.repo, sweep.git) == (True, CHANGED)
    assert sweeps("git switch main") == []
    assert sweeps("git checkout -b feature") == []


def test_restore_loses_the_worktrees_changes_and_with_staged_the_index_s_too() -> None:
    assert sweeps("git restore .")[0].git == UNSTAGED
    assert sweeps("git restore -S -W .")[0].git == CHANGED
    assert sweeps("git restore --source=HEAD~2 docs")[0].git == CHANGED
    assert effects("git restore --staged .") == []
    assert effects("git restore -p .") == []


def test_stash_loses_the_whole_trees_changes_and_with_u_untracked_files() -> None:
    [plain] = sweeps("git stash")
    assert (plain.top, plain.repo, plain.git, plain.instead) == (
        ROOT,
        True,
        CHANGED,
        "git stash push -- . {}",
    )
    assert sweeps("git stash push -u -m wip")[0].git == CHANGED | UNTRACKED
    assert sweeps("git stash --all")[0].git == CHANGED | UNTRACKED | IGNORED
    assert sweeps("git stash -k")[0].git == UNSTAGED
    assert sweeps("git stash save 'wip'")[0].repo


@pytest.mark.parametrize("sub", ["list", "show", "pop", "apply", "drop", "branch x"])
def test_stash_subcommands_that_lose_nothing_are_not_reported(sub: str) -> None:
    assert effects(f"git stash {sub}") == []


def test_pathspecs_name_what_a_stash_reaches_and_what_it_leaves_out() -> None:
    [sweep] = sweeps("git stash push -m x -- . ':!CLAUDE.md' ':(exclude)memory'")
    assert (sweep.top, sweep.repo) == (ROOT, False)
    assert sweep.excluded == ("/repo/CLAUDE.md", "/repo/memory")
    assert sweep.instead == "git stash push -m x -- . ':!CLAUDE.md' ':(exclude)memory' {}"


def test_unknown_pathspec_magic_or_a_glob_is_not_guessed() -> None:
    assert (
        sweeps("git stash push -- ':/src'")
        == sweeps("git stash push -- '*.py'")
        == [
            Sweep(ROOT, "git stash", ROOT, git=CHANGED, repo=True, instead="git stash push -- . {}")
        ]
    )  # no path named: the whole tree
    assert sweeps("git stash push -- . ':!*.md'") == []  # what it leaves out is unclear


def test_reset_hard_loses_the_whole_trees_changes() -> None:
    [sweep] = sweeps("git reset --hard")
    assert (sweep.repo, sweep.git) == (True, CHANGED)
    assert "git restore --source=HEAD --staged --worktree" in sweep.instead
    assert sweeps("git reset --hard origin/main")[0].instead == ""
    assert effects("git reset --soft HEAD~1") == effects("git reset CLAUDE.md") == []


def test_clean_deletes_untracked_files_from_the_directory_down() -> None:
    [sweep] = sweeps("git clean -f", "/repo/memory")
    assert (sweep.top, sweep.repo, sweep.git) == ("/repo/memory", False, UNTRACKED - DIRS)
    assert sweeps("git clean -fd")[0].git == UNTRACKED
    assert sweeps("git clean -fdx")[0].git == UNTRACKED | IGNORED
    assert sweeps("git clean -fX")[0].git == IGNORED
    assert effects("git clean -n") == effects("git clean --dry-run -fd") == []
    assert sweeps("git clean -f -- docs")[0].top == "/repo/docs"


def test_rm_and_mv_discard_what_they_name() -> None:
    assert effects("git rm -q CLAUDE.md") == [
        Target("/repo/CLAUDE.md", "git rm", follow=False, discards=True)
    ]
    assert len(sweeps("git rm -r memory")) == 1
    assert effects("git rm --cached CLAUDE.md") == []
    moved = effects("git mv memory/a.md b.md")
    assert Target("/repo/memory/a.md", "git mv", follow=False, discards=True) in moved


def test_dash_c_moves_git_and_a_git_dir_is_not_guessed() -> None:
    assert sweeps("git -C sub -c core.x=1 stash")[0].where == "/repo/sub"
    assert effects("git --work-tree=/x checkout -- .") == []
    assert effects("git -C") == effects("git") == effects("git status") == []

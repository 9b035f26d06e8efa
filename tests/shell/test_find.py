"""``find``: the files it reaches and what its actions do to them."""

from __future__ import annotations

import pytest

from memkeeper.shell.effects import Sweep, Target
from memkeeper.shell.writes import bash_effects

ROOT = "/repo"
CLAUDE = (("CLAUDE.md", False, False),)


def found(command: str) -> list[Target | Sweep]:
    return list(bash_effects(command, ROOT))


def test_exec_sed_i_on_each_file_found_is_a_sweep_with_the_find_s_filters() -> None:
    assert found("find . -name CLAUDE.md -exec sed -i 's/a/b/' {} \\;") == [
        Sweep(ROOT, "find -exec sed -i", ROOT, discards=False, names=CLAUDE)
    ]


def test_each_start_path_is_a_sweep_and_the_default_is_the_directory() -> None:
    tops = [s.top for s in found("find memory docs -type f -exec rm {} +")]  # type: ignore[union-attr]
    assert tops == ["/repo/memory", "/repo/docs"]
    assert found("find -name x -delete")[0].top == ROOT  # type: ignore[union-attr]


def test_depths_names_and_negations_are_kept() -> None:
    [sweep] = found("find -L . -maxdepth 2 -mindepth 1 -iname '*.MD' ! -name CLAUDE.md -delete")
    assert sweep == Sweep(
        ROOT,
        "find -delete",
        ROOT,
        mindepth=1,
        maxdepth=2,
        names=(("*.MD", True, False), ("CLAUDE.md", False, True)),
    )


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.md'",  # no action: it only prints
        "find . -name '*.md' -o -name '*.txt' -delete",
        "find . -path './memory/*' -delete",
        "find . -newer x -delete",
        "find . -type d -name memory -exec rm -rf {} +",
        "find . ! -type d -delete",
        "find . -name *.md -delete",  # a glob the shell expands first
        "find . -exec sed -i s/a/b/ {}",  # no `;`
        "find . -exec sh -c 'sed -i s/a/b/ \"$1\"' _ {} \\;",
        "find . -exec cat {} \\;",
    ],
)
def test_what_find_reaches_or_does_unclearly_is_not_reported(command: str) -> None:
    assert [e for e in found(command) if isinstance(e, Sweep)] == []


def test_an_exec_action_keeps_what_it_does_to_paths_it_names() -> None:
    assert found("find . -name x -exec cp {} /repo/CLAUDE.md \\;")[0] == Target(
        "/repo/CLAUDE.md", "cp"
    )


def test_execdir_runs_in_each_files_directory_so_relative_names_are_unknown() -> None:
    assert found("find . -name x -execdir cp {} out.md \\;") == []
    assert [e.how for e in found("find . -name x -execdir rm {} +")] == ["find -execdir rm"]


def test_a_plus_ends_exec_only_right_after_braces() -> None:
    [sweep] = found("find . -name x -exec sed -i -e s/+/-/ {} +")
    assert sweep.how == "find -exec sed -i"

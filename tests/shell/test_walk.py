"""A command line as the simple commands it runs, each in the directory it runs in."""

from __future__ import annotations

import pytest

from memkeeper.shell.walk import steps

ROOT = "/repo"


def where(command: str, cwd: str = ROOT) -> list[tuple[str, str | None]]:
    """Each simple command's first word and its directory."""
    return [(s.words[0].text, s.base) for s in steps(command, cwd) if s.words]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd memory && ls", [("cd", ROOT), ("ls", "/repo/memory")]),
        ("cd /tmp; ls", [("cd", ROOT), ("ls", "/tmp")]),
        ("cd memory && cd - && ls", [("cd", ROOT), ("cd", "/repo/memory"), ("ls", ROOT)]),
        ("cd -P memory; ls", [("cd", ROOT), ("ls", "/repo/memory")]),
        ("cd; ls", [("cd", ROOT), ("ls", None)]),  # home: not named
        ("cd $X; ls", [("cd", ROOT), ("ls", None)]),
        ("cd ~; ls", [("cd", ROOT), ("ls", None)]),
    ],
)
def test_cd_moves_the_commands_after_it(command: str, expected: list[tuple[str, str]]) -> None:
    assert where(command) == expected


def test_pushd_and_popd_keep_a_stack() -> None:
    line = "pushd memory && pushd /tmp && popd && ls && popd && ls"
    bases = [base for name, base in where(line) if name == "ls"]
    assert bases == ["/repo/memory", ROOT]


def test_pushd_without_a_directory_swaps_the_top_two_and_pushd_plus_n_is_unknown() -> None:
    assert where("pushd memory; pushd; ls")[-1] == ("ls", ROOT)
    assert where("pushd memory; pushd +1; ls")[-1] == ("ls", None)
    assert where("popd; ls")[-1] == ("ls", None)  # an empty stack


def test_a_subshells_directory_ends_with_it() -> None:
    line = "(cd memory && ls) && ls; ( (cd a; cd b) ; pwd ) ; pwd"
    assert where(line) == [
        ("cd", ROOT),
        ("ls", "/repo/memory"),
        ("ls", ROOT),
        ("cd", ROOT),
        ("cd", "/repo/a"),
        ("pwd", ROOT),
        ("pwd", ROOT),
    ]


def test_prefixes_are_dropped_with_their_options() -> None:
    line = "FOO=1 sudo -u bob env -C x nice -n 5 timeout -s KILL 10 xargs -n 1 npx -y tee f"
    assert [w.text for w in steps(line, ROOT)[0].words] == ["tee", "f"]


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'cd memory && tee a'",
        "sh -ec 'cd memory && tee a'",
        "eval cd memory '&&' tee a",
        'echo "$(cd memory && tee a)"',
        "echo `cd memory && tee a`",
        "x=$(cd memory && tee a)",
        'cat > "$(cd memory && tee a)"',
    ],
)
def test_scripts_a_command_runs_are_walked_from_its_directory(command: str) -> None:
    assert ("tee", "/repo/memory") in where(command)


def test_a_scripts_cd_does_not_leak_into_the_command_line() -> None:
    assert where("echo $(cd memory) && ls")[-1] == ("ls", ROOT)
    assert where("bash -c 'cd memory' && ls")[-1] == ("ls", ROOT)


def test_scripts_nest_three_deep_at_most() -> None:
    inner = "tee deep"
    for _ in range(4):
        inner = f"echo $({inner})"
    assert ("tee", ROOT) not in where(inner)
    assert ("tee", ROOT) in where("echo $(echo $(echo $(tee deep)))")


def test_eval_of_words_a_shell_would_expand_is_not_walked() -> None:
    assert [name for name, _ in where('eval "$CMD"')] == ["eval"]


def test_a_line_that_cannot_be_read_runs_nothing_we_know_of() -> None:
    assert steps("echo 'unclosed", ROOT) == []

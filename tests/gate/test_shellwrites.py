"""What a Bash command line writes: the parser behind the gate's Bash rule."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.gate.shell import Op, Word, commands, tokenize
from memkeeper.gate.shellwrites import BashWrite, bash_writes

ROOT = "/repo"


def written(command: str, cwd: str = ROOT) -> list[tuple[str, str]]:
    return [(w.path, w.how) for w in bash_writes(command, cwd)]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hi > CLAUDE.md", [("/repo/CLAUDE.md", ">")]),
        ("echo hi >> memory/decisions.md", [("/repo/memory/decisions.md", ">>")]),
        ("printf x >|CLAUDE.md", [("/repo/CLAUDE.md", ">")]),
        ("make 2> build.log", [("/repo/build.log", ">")]),
        ("make &>> all.log", [("/repo/all.log", ">>")]),
        ("echo x >&CLAUDE.md", [("/repo/CLAUDE.md", ">")]),
        ("make 2>&1 | tee -a log.md", [("/repo/log.md", "tee -a")]),
        ("cat a | tee x.md y.md", [("/repo/x.md", "tee"), ("/repo/y.md", "tee")]),
        ("sed -i 's/a/b/' CLAUDE.md", [("/repo/CLAUDE.md", "sed -i")]),
        (
            "sed -i.bak -e s/a/b/ -e s/c/d/ A.md B.md",
            [("/repo/A.md", "sed -i"), ("/repo/B.md", "sed -i")],
        ),
        ("sed -i '' 's/a/b/' CLAUDE.md", [("/repo/CLAUDE.md", "sed -i")]),
        ("sed --in-place=.orig 's/a/b/' CLAUDE.md", [("/repo/CLAUDE.md", "sed -i")]),
        ("perl -pi -e 's/a/b/' CLAUDE.md", [("/repo/CLAUDE.md", "perl -i")]),
        (
            "cp -f draft.md CLAUDE.md",
            [("/repo/CLAUDE.md", "cp"), ("/repo/CLAUDE.md/draft.md", "cp")],
        ),
        ("mv -t memory a.md", [("/repo/memory/a.md", "mv")]),
        (
            "git checkout -- CLAUDE.md AGENTS.md",
            [("/repo/CLAUDE.md", "git checkout"), ("/repo/AGENTS.md", "git checkout")],
        ),
        ("git checkout HEAD~2 -- CLAUDE.md", [("/repo/CLAUDE.md", "git checkout")]),
        ("git restore --source=HEAD CLAUDE.md", [("/repo/CLAUDE.md", "git restore")]),
        ("dd if=/dev/zero of=CLAUDE.md bs=1", [("/repo/CLAUDE.md", "dd")]),
        ("truncate -s 0 CLAUDE.md", [("/repo/CLAUDE.md", "truncate")]),
        ("cd memory && echo x >> decisions.md", [("/repo/memory/decisions.md", ">>")]),
        ("cd /elsewhere; echo x > CLAUDE.md", [("/elsewhere/CLAUDE.md", ">")]),
        ("FOO=1 sudo -u bob tee /repo/AGENTS.md", [("/repo/AGENTS.md", "tee")]),
        ("bash -lc 'echo hi >> CLAUDE.md'", [("/repo/CLAUDE.md", ">>")]),
        ("echo 'a' > \"my notes.md\"", [("/repo/my notes.md", ">")]),
        (
            "make; echo done > out.md\necho more >> out.md",
            [("/repo/out.md", ">"), ("/repo/out.md", ">>")],
        ),
        ("if true; then echo x > a.md; fi", [("/repo/a.md", ">")]),
        ("(cd sub && echo x > a.md)", [("/repo/sub/a.md", ">")]),
    ],
)
def test_finds_the_files_a_command_writes(command: str, expected: list[tuple[str, str]]) -> None:
    assert written(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "cat CLAUDE.md",
        "echo 'a > CLAUDE.md'",
        'echo "x >> memory/decisions.md"',
        "grep -n build CLAUDE.md # > CLAUDE.md",
        "sed -n 's/a/b/p' CLAUDE.md",
        "sed 's/a/b/' CLAUDE.md > /dev/stdout",
        "git checkout -b feature",
        "git restore --staged CLAUDE.md",
        "echo x > $HOME/CLAUDE.md",
        "echo x > ~/CLAUDE.md",
        "echo x > *.md",
        "cp $SRC $DEST",
        "cd $DIR && echo x > CLAUDE.md",
        "echo it's unclosed > CLAUDE.md",
        "perl -pi script.pl CLAUDE.md",
        "git -C other checkout -- CLAUDE.md",
        "cat <<'EOF' > /dev/null\nrm > CLAUDE.md\nEOF",
    ],
)
def test_writes_nothing_it_cannot_name(command: str) -> None:
    assert [p for p, _ in written(command) if p.startswith(ROOT + "/")] == []


def test_a_heredoc_body_is_not_read_as_commands_but_its_redirect_is() -> None:
    command = "cat > CLAUDE.md <<'EOF'\n# it's > not a command\nEOF\necho ok >> log.md"
    assert written(command) == [("/repo/CLAUDE.md", ">"), ("/repo/log.md", ">>")]


def test_git_checkout_without_dashes_writes_only_if_the_name_is_a_file() -> None:
    assert bash_writes("git checkout main", ROOT) == (
        BashWrite("/repo/main", "git checkout", "is-file"),
    )


def test_cp_into_a_directory_writes_there_only_if_it_is_one() -> None:
    found = bash_writes("cp /tmp/x.md memory/", ROOT)
    assert BashWrite("/repo/memory/x.md", "cp", "parent-is-dir") in found


def test_tokens_keep_operators_apart_from_quoted_words() -> None:
    assert tokenize("echo '>' >> f 2>&1") == [
        Word("echo", True),
        Word(">", True),
        Op(">>"),
        Word("f", True),
        Op("2>&"),
        Word("1", True),
    ]


def test_expansions_make_a_word_not_plain() -> None:
    words = [t for t in tokenize("a $(b c) \"x$Y\" `d` *.md ~/z '$lit'") if isinstance(t, Word)]
    assert [w.plain for w in words] == [True, False, False, False, False, False, True]


def test_commands_split_at_every_separator() -> None:
    parsed = commands(tokenize("a && b || c; d | e & f\ng"))
    assert [c.words[0].text for c in parsed] == list("abcdefg")


@given(st.text())
def test_any_text_parses_or_yields_nothing_without_raising(command: str) -> None:
    found = bash_writes(command, ROOT)
    assert all(w.path.startswith("/") for w in found)


NAME = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=["Cs"]), min_size=1)


@given(NAME.filter(lambda n: n not in (".", "..", "-")))
def test_a_quoted_file_name_is_found_exactly(name: str) -> None:
    assert written(f"echo x > {shlex.quote(name)}") == [(f"/repo/{name}", ">")]

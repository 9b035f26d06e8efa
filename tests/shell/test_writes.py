"""What a Bash command line writes and discards: the parser behind the gate's Bash rule."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.shell.effects import Sweep, Target
from memkeeper.shell.parse import Op, Word, commands, tokenize
from memkeeper.shell.writes import bash_effects

ROOT = "/repo"


def written(command: str, cwd: str = ROOT) -> list[tuple[str, str]]:
    """The paths a command writes (not discards) and how."""
    found = bash_effects(command, cwd)
    return [(e.path, e.how) for e in found if isinstance(e, Target) and not e.discards]


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
        ("git -C sub checkout -- CLAUDE.md", [("/repo/sub/CLAUDE.md", "git checkout")]),
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
        ("(cd sub && ls); echo x > a.md", [("/repo/a.md", ">")]),
        (
            "pushd sub && echo x >> a.md && popd && echo y > b.md",
            [("/repo/sub/a.md", ">>"), ("/repo/b.md", ">")],
        ),
        ('echo "$(date > CLAUDE.md)"', [("/repo/CLAUDE.md", ">")]),
        ("v=`tee -a log.md`", [("/repo/log.md", "tee -a")]),
        ("eval 'echo x > CLAUDE.md'", [("/repo/CLAUDE.md", ">")]),
        ("sort -o CLAUDE.md CLAUDE.md", [("/repo/CLAUDE.md", "sort -o")]),
        ("sort -k2 --output=out.md in.md", [("/repo/out.md", "sort -o")]),
        ("awk -i inplace '{print}' CLAUDE.md", [("/repo/CLAUDE.md", "awk -i inplace")]),
        ("gawk -iinplace -v n=1 -f prog.awk n=2 A.md", [("/repo/A.md", "awk -i inplace")]),
        ("echo x | sponge CLAUDE.md", [("/repo/CLAUDE.md", "sponge")]),
        ("cat a | sponge -a CLAUDE.md", [("/repo/CLAUDE.md", "sponge -a")]),
        ("patch CLAUDE.md < fix.diff", [("/repo/CLAUDE.md", "patch")]),
        ("patch -p1 -d sub A.md -i fix.diff", [("/repo/sub/A.md", "patch")]),
        ("patch -o out.md CLAUDE.md fix.diff", [("/repo/out.md", "patch")]),
        (
            "ln -sf /tmp/x CLAUDE.md",
            [("/repo/CLAUDE.md", "ln -sf"), ("/repo/CLAUDE.md/x", "ln -sf")],
        ),
        ("ln -f a.md b.md", [("/repo/b.md", "ln -f"), ("/repo/b.md/a.md", "ln -f")]),
        ("curl -fsSLo CLAUDE.md https://x", [("/repo/CLAUDE.md", "curl -o")]),
        ("curl https://x --output CLAUDE.md", [("/repo/CLAUDE.md", "curl -o")]),
        ("wget -q -O CLAUDE.md https://x", [("/repo/CLAUDE.md", "wget -O")]),
        ("prettier --write CLAUDE.md", [("/repo/CLAUDE.md", "prettier --write")]),
        ("npx prettier --config p.json -w A.md", [("/repo/A.md", "prettier --write")]),
        ("mdformat --wrap 80 A.md", [("/repo/A.md", "mdformat")]),
        ("markdownlint --fix A.md", [("/repo/A.md", "markdownlint --fix")]),
        ("clang-format -i A.md", [("/repo/A.md", "clang-format -i")]),
        ("autopep8 --in-place A.md", [("/repo/A.md", "autopep8 -i")]),
        ("sd before after A.md B.md", [("/repo/A.md", "sd"), ("/repo/B.md", "sd")]),
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
        "git --git-dir=other/.git checkout -- CLAUDE.md",
        "cat <<'EOF' > /dev/null\nrm > CLAUDE.md\nEOF",
        "git commit -m \"$(cat <<'EOF'\nIt's > CLAUDE.md\nEOF\n)\"",
        "echo $((1 > CLAUDE))",
        "sort CLAUDE.md > /dev/null",
        "awk '{print}' CLAUDE.md",
        "awk -i other.awk '{print}' CLAUDE.md",
        "ln -s x CLAUDE.md",
        "patch -p1 < fix.diff",
        "patch --dry-run CLAUDE.md fix.diff",
        "prettier --check CLAUDE.md",
        "mdformat --check CLAUDE.md",
        "markdownlint CLAUDE.md",
        "curl -O https://x/CLAUDE.md",
        "sd -p a b CLAUDE.md",
        "find . -name '*.md' | xargs sed -i s/a/b/",
    ],
)
def test_writes_nothing_it_cannot_name(command: str) -> None:
    assert [p for p, _ in written(command) if p.startswith(ROOT + "/")] == []


def test_a_heredoc_body_is_not_read_as_commands_but_its_redirect_is() -> None:
    command = "cat > CLAUDE.md <<'EOF'\n# it's > not a command\nEOF\necho ok >> log.md"
    assert written(command) == [("/repo/CLAUDE.md", ">"), ("/repo/log.md", ">>")]


def test_git_checkout_without_dashes_writes_only_if_the_name_is_a_file() -> None:
    assert bash_effects("git checkout main", ROOT)[0] == Target(
        "/repo/main", "git checkout", "is-file"
    )


def test_cp_into_a_directory_writes_there_only_if_it_is_one() -> None:
    found = bash_effects("cp /tmp/x.md memory/", ROOT)
    assert Target("/repo/memory/x.md", "cp", "parent-is-dir") in found


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
    found = bash_effects(command, ROOT)
    assert all((e.path if isinstance(e, Target) else e.top).startswith("/") for e in found)


NAME = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=["Cs"]), min_size=1)


@given(NAME.filter(lambda n: n not in (".", "..", "-")))
def test_a_quoted_file_name_is_found_exactly(name: str) -> None:
    assert written(f"echo x > {shlex.quote(name)}") == [(f"/repo/{name}", ">")]


# -- deleting, moving away, and commands that reach many files -----------------------------------


def effects(command: str) -> list[Target | Sweep]:
    return list(bash_effects(command, ROOT))


def test_rm_unlink_and_mv_discard_the_link_itself_not_what_it_points_to() -> None:
    assert effects("rm -f a.md") == [Target("/repo/a.md", "rm", follow=False, discards=True)]
    assert effects("unlink a.md") == [Target("/repo/a.md", "unlink", follow=False, discards=True)]
    moved = effects("mv -t /tmp a.md")
    assert Target("/repo/a.md", "mv", follow=False, discards=True) in moved
    assert Target("/tmp/a.md", "mv", follow=False) in moved


def test_rm_r_and_mv_reach_every_file_below_a_directory() -> None:
    assert effects("rm -rf memory")[1] == Sweep("/repo/memory", "rm -r", ROOT, mindepth=1)
    assert Sweep("/repo/memory", "mv", ROOT, mindepth=1) in effects("mv memory old")


def test_cp_writes_through_a_link_and_mv_replaces_it() -> None:
    assert effects("cp a.md b.md")[0].follow is True
    assert effects("mv a.md b.md")[0].follow is False


def test_a_formatter_given_a_directory_reaches_its_markdown_files() -> None:
    sweep = effects("prettier --write docs")[1]
    assert sweep == Sweep(
        "/repo/docs", "prettier --write", ROOT, False, 1, names=(("*.md", False, False),)
    )
    assert all(isinstance(e, Target) for e in effects("gofmt -w ."))


def test_a_trailing_slash_sends_a_sweep_through_a_symlink() -> None:
    # `rm -r link/` empties the directory the link points to; `rm -r link` removes the link
    assert [s.follow for s in effects("rm -r link/ link") if isinstance(s, Sweep)] == [True, False]
    assert [s.follow for s in effects("find link/ -delete") if isinstance(s, Sweep)] == [True]

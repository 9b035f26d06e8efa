"""Shell command lines as words and operators: quoting, expansions, comments, operators and
here-documents, enough for the gate to see what a command writes."""

from __future__ import annotations

import re
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.shell.parse import Command, Op, Word, commands, tokenize


def texts(line: str) -> list[str]:
    """The tokens of ``line`` as text, operators and words alike."""
    return [t.text for t in tokenize(line)]


def plain(*words: str) -> list[Word]:
    return [Word(w, True) for w in words]


# -- words and quotes --------------------------------------------------------------------------


def test_blanks_separate_words_and_leave_nothing_behind() -> None:
    assert tokenize("  ls \t-la\r  dir ") == plain("ls", "-la", "dir")
    assert tokenize("") == []


def test_single_quotes_keep_everything_literal() -> None:
    assert tokenize("echo '$HOME > x; `y` \\n'") == plain("echo", "$HOME > x; `y` \\n")


def test_double_quotes_remove_the_escapes_a_shell_removes_and_keep_the_others() -> None:
    assert tokenize(r'echo "a\"b\\c\$d\n"') == plain("echo", 'a"b\\c$d\\n')


def test_a_backslash_escapes_one_character_and_joins_continued_lines() -> None:
    assert tokenize("cat my\\ file\\>x") == plain("cat", "my file>x")
    assert tokenize("ec\\\nho hi") == plain("echo", "hi")


def test_adjacent_quoted_and_bare_parts_make_one_word() -> None:
    assert tokenize("""a'b'"c"d""") == plain("abcd")
    assert tokenize("''") == plain("")


EXPANDED = ("$HOME", "${HOME}/x", "$(pwd)/x", "`pwd`", "$'a\\tb'", "*.md", "a?", "[ab].md")


@pytest.mark.parametrize("word", [*EXPANDED, "{a,b}", "~/x"])
def test_a_word_a_shell_would_expand_is_not_plain_and_keeps_its_text(word: str) -> None:
    assert tokenize(word) == [Word(word, False)]


def test_a_tilde_inside_a_word_is_plain() -> None:
    assert tokenize("a~b") == plain("a~b")


def test_an_expansion_in_double_quotes_makes_the_word_not_plain() -> None:
    assert tokenize('"x$Y"') == [Word("x$Y", False)]
    assert tokenize('"$(echo ")")"') == [Word('$(echo ")")', False)]


def test_a_command_substitution_reads_to_its_matching_paren_past_quotes() -> None:
    assert texts("echo $(a (b) ')' \")\") > out") == ["echo", "$(a (b) ')' \")\")", ">", "out"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("echo 'x", "unclosed '"),
        ('echo "x', 'unclosed "'),
        ("echo `x", "unclosed `"),
        ("echo $(x", "unclosed $("),
        ("echo ${x", "unclosed }"),
        ('echo "$(x"', "unclosed"),
    ],
)
def test_an_unclosed_quote_or_expansion_cannot_be_read(line: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        tokenize(line)


# -- comments and operators --------------------------------------------------------------------


def test_a_comment_runs_from_a_word_start_to_the_end_of_its_line() -> None:
    assert texts("echo a # > CLAUDE.md\nls") == ["echo", "a", "\n", "ls"]
    assert texts("echo a;# > x") == ["echo", "a", ";"]
    assert texts("echo a#b '#c'") == ["echo", "a#b", "#c"]


def test_the_longest_operator_wins() -> None:
    line = "a &>> b <<< c && d || e ;; f |& g >| h <> i >& j"
    assert [t.text for t in tokenize(line) if isinstance(t, Op)] == [
        *("&>>", "<<<", "&&", "||", ";;", "|&", ">|", "<>", ">&"),
    ]


def test_a_redirection_keeps_the_descriptor_written_right_before_it() -> None:
    assert tokenize("make 2>>log 1>&2") == [
        Word("make", True),
        Op("2>>"),
        Word("log", True),
        Op("1>&"),
        Word("2", True),
    ]


def test_a_number_apart_from_the_operator_is_a_word() -> None:
    assert texts("echo 2 > x") == ["echo", "2", ">", "x"]
    assert texts("echo a2> x") == ["echo", "a2", ">", "x"]


def test_an_operator_needs_no_blanks_around_it() -> None:
    assert texts("(cd x;ls)|wc>o") == ["(", "cd", "x", ";", "ls", ")", "|", "wc", ">", "o"]


# -- here-documents ------------------------------------------------------------------------------


def test_a_here_document_body_is_skipped_not_read_as_commands() -> None:
    line = "cat <<EOF > out.md\nrm -rf / > CLAUDE.md\nEOF\necho done"
    assert texts(line) == ["cat", "<<", "EOF", ">", "out.md", "\n", "echo", "done"]


def test_a_quoted_delimiter_ends_the_body_by_its_unquoted_text() -> None:
    assert texts("cat <<'END'\n$x > y\nEND\nls") == ["cat", "<<", "END", "\n", "ls"]


def test_a_dash_here_document_ends_at_a_tab_indented_delimiter() -> None:
    assert texts("cat <<-END\n\tbody > x\n\tEND\nls") == ["cat", "<<-", "END", "\n", "ls"]
    assert texts("cat <<END\n\tEND\nEND\nls") == ["cat", "<<", "END", "\n", "ls"]


def test_two_here_documents_on_one_line_are_skipped_in_order() -> None:
    line = "paste <<A <<B\na > x\nA\nb > y\nB\necho ok"
    assert texts(line) == ["paste", "<<", "A", "<<", "B", "\n", "echo", "ok"]


def test_an_unterminated_here_document_swallows_the_rest() -> None:
    assert texts("cat <<EOF\nnever > ends") == ["cat", "<<", "EOF", "\n"]


def test_a_here_string_has_no_body() -> None:
    assert texts("cat <<< word\necho > x") == ["cat", "<<<", "word", "\n", "echo", ">", "x"]


def test_a_here_document_without_a_delimiter_is_unreadable_not_a_crash() -> None:
    tokens = readable_or_refused("cat <<\n\necho hi > CLAUDE.md")
    assert tokens is None or Op("<<") in tokens


# -- simple commands ---------------------------------------------------------------------------


def test_commands_split_at_separators_and_keep_their_redirections() -> None:
    parsed = commands(tokenize("cd memory && sed -i x a.md 2> err; echo >> log"))
    assert parsed == [
        Command((Word("cd", True), Word("memory", True)), ()),
        Command(tuple(plain("sed", "-i", "x", "a.md")), ((">", Word("err", True)),)),
        Command((Word("echo", True),), ((">>", Word("log", True)),)),
    ]


def test_a_redirection_without_a_target_word_has_none() -> None:
    assert commands(tokenize("echo >")) == [Command((Word("echo", True),), ((">", None),))]
    assert commands(tokenize("echo > ; ls"))[0].redirects == ((">", None),)


def test_empty_commands_between_separators_are_dropped() -> None:
    assert [c.words[0].text for c in commands(tokenize(";; a ;\n\n& b |"))] == ["a", "b"]
    assert commands([]) == []


# -- properties --------------------------------------------------------------------------------

SHELLISH = st.text(st.sampled_from(list("ab2 \t\n<>|&;()\\'\"$`#{}*~-")))


def readable_or_refused(line: str) -> list[Op | Word] | None:
    try:
        return tokenize(line)
    except ValueError:
        return None


@given(st.one_of(st.text(), SHELLISH))
def test_tokenizing_any_text_returns_tokens_or_refuses_it_with_a_value_error(line: str) -> None:
    tokens = readable_or_refused(line)
    if tokens is not None:
        assert all(isinstance(c, Command) for c in commands(tokens))


@given(st.lists(st.text()))
def test_quoted_words_come_back_exactly_and_plain(words: list[str]) -> None:
    line = " ".join(shlex.quote(w) for w in words)
    assert tokenize(line) == plain(*words)


# -- command substitutions and subshells ---------------------------------------------------------


def words(line: str) -> list[Word]:
    return [t for t in tokenize(line) if isinstance(t, Word)]


def test_a_word_keeps_the_scripts_of_its_command_substitutions_in_order() -> None:
    [word] = words('"$(cat a > b) and `rm c` and $(x $(y))"')
    assert word.scripts == ("cat a > b", "rm c", "x $(y)")
    assert not word.plain


def test_scripts_do_not_change_what_a_word_compares_equal_to() -> None:
    assert tokenize("$(pwd)") == [Word("$(pwd)", False)]


def test_a_backquoted_script_loses_the_backslashes_that_escape_inside_it() -> None:
    [word] = words(r"`echo \`date\` \$HOME`")
    assert word.scripts == ("echo `date` $HOME",)


def test_arithmetic_is_no_script() -> None:
    [_, word] = words("echo $((1 > 2))")
    assert (word.text, word.scripts) == ("$((1 > 2))", ())


def test_a_here_document_inside_a_substitution_is_skipped_quotes_and_all() -> None:
    line = "git commit -m \"$(cat <<'EOF'\nDon't > CLAUDE.md\nEOF\n)\" && echo ok > log"
    tokens = tokenize(line)
    assert texts(line)[-5:] == ["&&", "echo", "ok", ">", "log"]
    message = next(t for t in tokens if isinstance(t, Word) and t.scripts)
    assert message.scripts == ("cat <<'EOF'\nDon't > CLAUDE.md\nEOF\n",)


def test_a_here_document_opened_in_a_substitution_is_skipped_after_its_line() -> None:
    line = "x=$(cat <<EOF) && echo ok\nbody > CLAUDE.md\nEOF\nls"
    assert texts(line) == ["x=$(cat <<EOF)", "&&", "echo", "ok", "\n", "ls"]


def test_substitutions_nested_too_deeply_cannot_be_read() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        tokenize("$(" * 40 + ")" * 40)


def test_commands_mark_the_subshells_they_open_and_close() -> None:
    parsed = commands(tokenize("(cd a; (b)); c; () d"))
    assert [(c.words[0].text, c.opens, c.closes) for c in parsed] == [
        ("cd", 1, 0),
        ("b", 1, 2),
        ("c", 0, 0),
        ("d", 0, 0),
    ]

"""The shell analyser against a real shell grammar: tree-sitter-bash as a differential oracle.

Hypothesis writes command lines from a small grammar — words (bare, single- and
double-quoted, backslash-escaped, ``$NAME`` bare or in double quotes, ``$( )`` holding a
command line of the same grammar, and concatenations of these), ``NAME=value`` prefixes,
redirections (``>``, ``>>``, ``<``, ``>|``, ``&>``, ``2>``, ``2>>``) before and among the
words, pipelines, ``&&``, ``||``, ``;``, ``&``, newlines and subshells ``( … )`` — and both
parsers read each line.
Compared, for every simple command in order (the commands inside a ``$( )`` right after the
command whose word holds it):

- its words: the text after quote removal of each word nothing expands, and for every word
  whether anything in it expands (the analyser's ``plain``; tree-sitter's expansion and
  substitution nodes);
- its redirections, in order: the operator without its descriptor, and the target's text
  when plain;
- how many subshells it runs inside.

Not compared (the grammar does not write them): here-documents, comments, globs, ``~``,
braces, keywords and compound commands (``if``, ``for``, ``{ …; }``), here-strings,
descriptor duplications (``2>&1``), line continuations, an escaped blank or an escape after
a quote (tree-sitter-bash reads those two apart from bash), and the text of words that
expand. Where tree-sitter-bash hangs a redirection elsewhere than bash does (on a whole
list or pipeline; a word after a target as a second target), the reading below gives it to
the command bash gives it to. tree-sitter is a test oracle only:
``tests/test_architecture.py`` checks that no module of memkeeper imports it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest
import tree_sitter_bash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Language, Node, Parser

from memkeeper.shell.parse import Command, Word, commands, tokenize

PARSER = Parser(Language(tree_sitter_bash.language()))

# Words tree-sitter-bash reads as keywords or as commands of their own kind.
RESERVED = frozenset(
    {
        *("if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do"),
        *("done", "in", "function", "select", "time", "coproc", "declare", "local", "export"),
        *("readonly", "typeset", "unset", "test"),
    }
)
EXPANDING = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
    }
)
REDIRECTS = (">", ">>", "<", ">|", "&>", "2>", "2>>")
SEPARATORS = (" && ", " || ", "; ", " | ", " & ", "\n")


class Simple(NamedTuple):
    """One simple command as both sides are compared: each word's text (None where it
    expands) and whether it is plain, each redirection's operator and target, and how many
    subshells hold it."""

    words: tuple[tuple[str | None, bool], ...]
    redirects: tuple[tuple[str, str | None], ...]
    depth: int


# -- the grammar ----------------------------------------------------------------------------------

names = st.text(alphabet="abcdefgxyz", min_size=1, max_size=5).filter(lambda w: w not in RESERVED)
bare = st.text(alphabet="abcxyz0129._/-", min_size=1, max_size=6).filter(
    lambda w: w not in RESERVED and not w.startswith("-")
)
single = st.text(alphabet='ab $;&|<>()"#*', max_size=6).map(lambda t: f"'{t}'")
double = st.text(alphabet="ab ;&|<>()'#*", max_size=6).map(lambda t: f'"{t}"')
# Not an escaped blank: tree-sitter-bash splits `\ x` where bash reads one word " x".
escaped = st.sampled_from(";&|<>()$'\"#*").map(lambda c: "\\" + c)
variable = names.map(lambda n: "$" + n)
quoted_variable = st.tuples(double, names).map(lambda p: f'"{p[0][1:-1]} ${p[1]}"')


def words(depth: int) -> st.SearchStrategy[str]:
    atoms = [bare, single, double, variable, quoted_variable]
    if depth < 2:
        # `$( (` with its blank: `$((` opens arithmetic
        atoms.append(lines(depth + 1).map(lambda line: f"$( {line})"))
    # An escape only at a word's start: tree-sitter-bash splits `''\;`, one word to bash.
    first = st.one_of(escaped, *atoms)
    return st.tuples(first, st.lists(st.one_of(*atoms), max_size=2)).map(
        lambda p: p[0] + "".join(p[1])
    )


def simple(depth: int) -> st.SearchStrategy[str]:
    """An assignment or a redirection first (not both: after a pipe, tree-sitter-bash reads
    ``A=0 >f b`` as an assignment alone), the command's name, then its words with
    redirections anywhere among them."""
    assignment = st.tuples(names, bare).map(lambda p: f"{p[0].upper()}={p[1]}")
    redirect = st.tuples(st.sampled_from(REDIRECTS), words(depth)).map(lambda p: p[0] + p[1])
    return st.tuples(
        st.one_of(st.just(""), assignment, redirect),
        bare,
        st.lists(st.one_of(words(depth), redirect), max_size=4),
    ).map(lambda p: " ".join([*filter(None, [p[0]]), p[1], *p[2]]))


@st.composite
def lines_of(draw: st.DrawFn, depth: int) -> str:
    parts = draw(st.lists(st.one_of(simple(depth), subshells(depth)), min_size=1, max_size=3))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + part
    return out


def lines(depth: int = 0) -> st.SearchStrategy[str]:
    return lines_of(depth)


def subshells(depth: int) -> st.SearchStrategy[str]:
    if depth >= 2:
        return simple(depth)
    return st.deferred(lambda: lines(depth + 1)).map(lambda line: f"( {line} )")


# -- the analyser's reading -----------------------------------------------------------------------


def analysed(line: str) -> list[Simple]:
    out: list[Simple] = []
    depth = 0
    for cmd in commands(tokenize(line)):
        depth += cmd.opens
        out.append(_simple(cmd, depth))
        for word in [*cmd.words, *(t for _, t in cmd.redirects if t is not None)]:
            for script in word.scripts:
                out += analysed(script)
        depth -= cmd.closes
    return out


def _simple(cmd: Command, depth: int) -> Simple:
    def seen(word: Word) -> tuple[str | None, bool]:
        return (word.text if word.plain else None, word.plain)

    targets = tuple((op, None if t is None or not t.plain else t.text) for op, t in cmd.redirects)
    return Simple(tuple(seen(w) for w in cmd.words), targets, depth)


# -- tree-sitter's reading ------------------------------------------------------------------------


def parsed(line: str) -> list[Simple]:
    tree = PARSER.parse(line.encode())
    assert not tree.root_node.has_error, line
    out: list[Simple] = []
    _walk(tree.root_node, 0, out)
    return out


Moved = dict[int, list[Node]]  # a command's id → redirections tree-sitter hung elsewhere


def _walk(node: Node, depth: int, out: list[Simple], moved: Moved | None = None) -> None:
    moved = {} if moved is None else moved
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        assert body is not None
        redirects = [c for c in node.children if c.type == "file_redirect"]
        if body.type == "command":
            _command(body, redirects + moved.get(body.id, []), depth, out)
            return
        # `a && b >f`, `a | b >f`: tree-sitter-bash hangs the redirections on the whole
        # list or pipeline, where bash gives them to its last command.
        assert body.type in ("list", "pipeline"), body
        _walk(body, depth, out, {**moved, _last(body).id: redirects})
    elif node.type == "command":
        _command(node, moved.get(node.id, []), depth, out)
    else:
        inner = depth + (node.type == "subshell")
        for child in node.children:
            _walk(child, inner, out, moved)


def _last(node: Node) -> Node:
    """The last simple command of a list or pipeline."""
    while node.type != "command":
        node = node.named_children[-1]
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            assert body is not None
            node = body
    return node


def _command(node: Node, redirects: list[Node], depth: int, out: list[Simple]) -> None:
    found: list[tuple[str | None, bool]] = []
    in_words: list[Node] = []  # the words' command substitutions, then the targets'
    in_targets: list[Node] = []
    before = [child for child in node.children if child.type == "file_redirect"]
    for child in node.children:
        if child.type == "variable_assignment":
            found.append((_text(child), True))
        elif child.type == "command_name":
            found.append(_word(child.children[0]))
            in_words += _substitutions(child)
        elif child.is_named and child.type != "file_redirect":
            found.append(_word(child))
            in_words += _substitutions(child)
    targets = []
    for redirect in before + redirects:
        op = next(c for c in redirect.children if not c.is_named)
        # `echo a >f b`: tree-sitter-bash makes `b` a second destination; bash, a word
        target, *more = redirect.children_by_field_name("destination")
        text, plain = _word(target)
        targets.append((_source(op), text if plain else None))
        in_targets += _substitutions(target)
        found += [_word(word) for word in more]
        in_words += [found for word in more for found in _substitutions(word)]
    out.append(Simple(tuple(found), tuple(targets), depth))
    for substitution in in_words + in_targets:
        for child in substitution.children:
            _walk(child, 0, out)


def _substitutions(node: Node) -> list[Node]:
    """The outermost command substitutions in ``node``, in order."""
    if node.type == "command_substitution":
        return [node]
    return [found for child in node.children for found in _substitutions(child)]


def _expands(node: Node) -> bool:
    return node.type in EXPANDING or any(_expands(child) for child in node.children)


def _word(node: Node) -> tuple[str | None, bool]:
    if _expands(node):
        return (None, False)
    return (_text(node), True)


def _text(node: Node) -> str:
    """A plain word's text after quote removal."""
    source = _source(node)
    if node.type in ("concatenation", "variable_assignment"):
        return "".join(_text(child) for child in node.children)
    if node.type == "raw_string":
        return source[1:-1]
    if node.type == "string":
        return source[1:-1]
    return re.sub(r"\\(.)", r"\1", source)


def _source(node: Node) -> str:
    text = node.text
    assert text is not None
    return text.decode()


# -- the comparison -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_the_analyser_reads_each_simple_command_as_bash_does(line: str) -> None:
    assert analysed(line) == parsed(line)


@pytest.mark.parametrize(
    "line",
    [
        "A=1 cat 'a b' \"c\"d\\ e > out.txt 2>>err && (cd x; rm -f y) | tee z",
        'echo $(cat <f) > "q r" || a\\ b',
        "( ( a ) ; b ) & c\nd $X >|f",
        ">f echo a >g b",  # redirections before and among the words
        "a && b >f | c 2>g",  # each to its own command
    ],
)
def test_a_few_lines_by_hand(line: str) -> None:
    assert analysed(line) == parsed(line)
    assert parsed(line)

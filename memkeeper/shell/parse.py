"""Shell command lines as words and operators, enough to see what a command writes.

Not a shell: it knows quoting (``'…'``, ``"…"``, ``\\``), comments, operators (``&&``,
``;``, ``|``, redirections with file-descriptor prefixes like ``2>``), here-documents (whose
bodies are skipped, not read as commands), and marks every word that a shell would expand
(``$VAR``, ``$(…)``, backquotes, globs, ``~``, braces) as not ``plain``: callers treat those as
unknown rather than guess. The scripts of command substitutions (``$(…)``, `` `…` ``) are kept
on the word they appear in, to be read as commands of their own; subshells ``( … )`` are
marked on the commands that open and close them. A command it cannot read (an unclosed
quote) raises ``ValueError``.

Pure functions over ``str``.
"""

from __future__ import annotations

import re

from memkeeper.records import Value

OPERATORS = (
    *("&>>", "<<<", "<<-"),
    *("&&", "||", ";;", "|&", ">>", "<<", "&>", ">&", "<&", ">|", "<>"),
    *("|", "&", ";", "<", ">", "(", ")", "\n"),
)
SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "\n", "(", ")"})
_SPECIAL = frozenset("*?[{}")
_MAX_NESTING = 32
_BACKQUOTED = re.compile(r"\\([\\`$])")  # inside `…`, a backslash escapes only these


class Word(Value):
    __slots__ = ("text", "plain", "scripts")
    text: str  # the value after quote removal
    plain: bool  # nothing in it a shell would expand
    scripts: tuple[str, ...]  # its $(…) and `…`, in order (not compared)

    def __init__(self, text: str, plain: bool, scripts: tuple[str, ...] = ()) -> None:
        self._fill(text, plain, scripts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Word):
            return False
        return (self.text, self.plain) == (other.text, other.plain)

    def __hash__(self) -> int:  # type: ignore[override]  # Record's is None
        return hash((Word, self.text, self.plain))


class Op(Value):
    __slots__ = ("text",)
    text: str  # an operator; a redirection keeps its descriptor (``2>``)

    def __init__(self, text: str) -> None:
        self._fill(text)


Token = Word | Op


class Command(Value):
    """One simple command: its words and its redirections (operator without descriptor);
    ``opens``/``closes``: how many subshells ``(`` start right before it and ``)`` end right
    after it (a ``cd`` inside one ends with it)."""

    __slots__ = ("words", "redirects", "opens", "closes")
    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word | None], ...]
    opens: int
    closes: int

    def __init__(
        self,
        words: tuple[Word, ...],
        redirects: tuple[tuple[str, Word | None], ...],
        opens: int = 0,
        closes: int = 0,
    ) -> None:
        self._fill(words, redirects, opens, closes)


def tokenize(line: str) -> list[Token]:
    """The words and operators of a command line; ``ValueError`` when a quote is unclosed."""
    lexer = _Lexer(line, 0)
    lexer.run()
    return lexer.tokens


def commands(tokens: list[Token]) -> list[Command]:
    """Simple commands, split at ``&&``, ``||``, ``;``, ``|``, ``&``, newlines and parens."""
    out: list[Command] = []
    words: list[Word] = []
    redirects: list[tuple[str, Word | None]] = []
    opens = 0  # `(` seen since the last command
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Word):
            words.append(token)
        elif token.text in SEPARATORS:
            if words or redirects:
                out.append(Command(tuple(words), tuple(redirects), opens))
                words, redirects, opens = [], [], 0
            if token.text == "(":
                opens += 1
            elif token.text == ")" and opens:
                opens -= 1  # `()`: nothing ran inside
            elif token.text == ")" and out:
                out[-1] = out[-1]._replace(closes=out[-1].closes + 1)
        else:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            redirects.append((token.text.lstrip("0123456789"), _word(target)))
            i += isinstance(target, Word)
        i += 1
    if words or redirects:
        out.append(Command(tuple(words), tuple(redirects), opens))
    return out


def _word(token: Token | None) -> Word | None:
    return token if isinstance(token, Word) else None


class _Lexer:
    """Reads ``text`` from ``start``; ``nested``: the inside of a ``$(``, up to its ``)``."""

    def __init__(self, text: str, start: int, *, nested: int = 0) -> None:
        if nested > _MAX_NESTING:
            raise ValueError("command substitutions nested too deeply")
        self.text = text
        self.i = start
        self.nested = nested  # how many `$(` this script is inside
        self.depth = 0  # parens open inside a nested script
        self.tokens: list[Token] = []
        self.chars: list[str] | None = None  # the word being read; None: between words
        self.plain = True
        self.scripts: list[str] = []  # the word's command substitutions
        self.delimiter_next = False  # the next word ends a here-document
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs)

    def run(self) -> int:
        """Lex to the end (or, nested, to the closing paren); where it stopped."""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == ")" and self.nested and self.depth == 0:
                self.flush()
                return self.i
            if c in " \t\r":
                self.flush()
                self.i += 1
            elif c == "#" and self.chars is None:
                end = self.text.find("\n", self.i)
                self.i = len(self.text) if end < 0 else end
            elif c in "&|;<>()\n":
                self.operator()
            else:
                self.word_part(c)
        self.flush()
        if self.nested:
            raise ValueError("unclosed $(")
        return self.i

    def word_part(self, c: str) -> None:
        if self.chars is None:
            self.chars, self.plain, self.scripts = [], True, []
        if c == "\\":
            nxt = self.text[self.i + 1 : self.i + 2]
            self.chars.append("" if nxt == "\n" else nxt)
            self.i += 2
        elif c == "'":
            end = self.closing("'", self.i + 1)
            self.chars.append(self.text[self.i + 1 : end])
            self.i = end + 1
        elif c == '"':
            self.double()
        elif c in "$`":
            self.plain = False
            end = self.expansion(self.i)
            self.chars.append(self.text[self.i : end])
            self.i = end
        else:
            if c in _SPECIAL or (c == "~" and not self.chars):
                self.plain = False
            self.chars.append(c)
            self.i += 1

    def double(self) -> None:
        assert self.chars is not None
        j = self.i + 1
        while j < len(self.text) and self.text[j] != '"':
            c = self.text[j]
            if c == "\\" and self.text[j + 1 : j + 2] in ('"', "\\", "$", "`", "\n"):
                self.chars.append(self.text[j + 1].replace("\n", ""))
                j += 2
            elif c in "$`":
                self.plain = False
                end = self.expansion(j)
                self.chars.append(self.text[j:end])
                j = end
            else:
                self.chars.append(c)
                j += 1
        if j >= len(self.text):
            raise ValueError('unclosed "')
        self.i = j + 1

    def expansion(self, at: int) -> int:
        """The end of ``$(…)``, ``${…}``, ``$'…'``, `` `…` `` or ``$NAME`` starting at ``at``;
        a command substitution's script goes to ``scripts``."""
        if self.text[at] == "`":
            end = self.closing("`", at + 1)
            self.scripts.append(_BACKQUOTED.sub(r"\1", self.text[at + 1 : end]))
            return end + 1
        nxt = self.text[at + 1 : at + 2]
        if nxt == "(" and self.text[at + 2 : at + 3] == "(":
            return self.balanced(at + 1)  # `$((…))`: arithmetic, no command in it
        if nxt == "(":
            inner = _Lexer(self.text, at + 2, nested=self.nested + 1)
            end = inner.run()
            self.heredocs += inner.heredocs  # bodies of `$(cat <<EOF)` follow this line
            self.scripts.append(self.text[at + 2 : end])
            return end + 1
        if nxt == "{":
            return self.closing("}", at + 2) + 1
        if nxt == "'":
            return self.closing("'", at + 2) + 1
        return at + 1

    def closing(self, quote: str, start: int) -> int:
        j = start
        while j < len(self.text) and self.text[j] != quote:
            j += 2 if self.text[j] == "\\" and quote != "'" else 1
        if j >= len(self.text):
            raise ValueError(f"unclosed {quote}")
        return j

    def balanced(self, start: int) -> int:
        """Just past the ``)`` matching the ``(`` at ``start``, skipping quoted text."""
        depth, j = 0, start
        while j < len(self.text):
            c = self.text[j]
            if c in "'\"`":
                j = self.closing(c, j + 1)
            elif c == "\\":
                j += 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ValueError("unclosed $((")

    def operator(self) -> None:
        prefix = ""
        chars = self.chars
        descriptor = chars is not None and self.plain and "".join(chars).isdigit()
        if descriptor and chars is not None and self.text[self.i] in "<>":
            prefix, self.chars = "".join(chars), None
        self.flush()
        op = next(o for o in OPERATORS if self.text.startswith(o, self.i))
        self.tokens.append(Op(prefix + op))
        self.i += len(op)
        self.depth += (op == "(") - (op == ")")
        if op in ("<<", "<<-"):
            self.delimiter_next = True
            self.heredocs.append(("", op == "<<-"))
        if op == "\n":
            if self.delimiter_next:  # `cat <<` then a newline: bash's syntax error too
                raise ValueError("a here-document without a delimiter")
            self.skip_heredocs()

    def flush(self) -> None:
        if self.chars is None:
            return
        text = "".join(self.chars)
        if self.delimiter_next:
            self.heredocs[-1] = (text, self.heredocs[-1][1])
            self.delimiter_next = False
        self.tokens.append(Word(text, self.plain, tuple(self.scripts)))
        self.chars = None

    def skip_heredocs(self) -> None:
        """Here-document bodies follow the line that opened them: skip past each delimiter."""
        for delimiter, strip in self.heredocs:
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
        self.heredocs = []

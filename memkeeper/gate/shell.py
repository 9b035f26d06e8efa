"""Shell command lines as words and operators, enough to see what a command writes.

Not a shell: it knows quoting (``'…'``, ``"…"``, ``\\``), comments, operators (``&&``,
``;``, ``|``, redirections with file-descriptor prefixes like ``2>``), here-documents (whose
bodies are skipped, not read as commands), and marks every word that a shell would expand
(``$VAR``, ``$(…)``, backquotes, globs, ``~``, braces) as not ``plain``: callers treat those as
unknown rather than guess. A command it cannot read (an unclosed quote) raises ``ValueError``.

Pure functions over ``str``.
"""

from __future__ import annotations

from dataclasses import dataclass

OPERATORS = (
    *("&>>", "<<<", "<<-"),
    *("&&", "||", ";;", "|&", ">>", "<<", "&>", ">&", "<&", ">|", "<>"),
    *("|", "&", ";", "<", ">", "(", ")", "\n"),
)
SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "\n", "(", ")"})
_SPECIAL = frozenset("*?[{}")


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # the value after quote removal
    plain: bool  # nothing in it a shell would expand


@dataclass(frozen=True, slots=True)
class Op:
    text: str  # an operator; a redirection keeps its descriptor (``2>``)


Token = Word | Op


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command: its words and its redirections (operator without descriptor)."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word | None], ...]


def tokenize(line: str) -> list[Token]:
    """The words and operators of a command line; ``ValueError`` when a quote is unclosed."""
    lexer = _Lexer(line)
    lexer.run()
    return lexer.tokens


def commands(tokens: list[Token]) -> list[Command]:
    """Simple commands, split at ``&&``, ``||``, ``;``, ``|``, ``&``, newlines and parens."""
    out: list[Command] = []
    words: list[Word] = []
    redirects: list[tuple[str, Word | None]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Word):
            words.append(token)
        elif token.text in SEPARATORS:
            out.append(Command(tuple(words), tuple(redirects)))
            words, redirects = [], []
        else:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            redirects.append((token.text.lstrip("0123456789"), _word(target)))
            i += isinstance(target, Word)
        i += 1
    out.append(Command(tuple(words), tuple(redirects)))
    return [c for c in out if c.words or c.redirects]


def _word(token: Token | None) -> Word | None:
    return token if isinstance(token, Word) else None


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Token] = []
        self.chars: list[str] | None = None  # the word being read; None: between words
        self.plain = True
        self.delimiter_next = False  # the next word ends a here-document
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs)

    def run(self) -> None:
        while self.i < len(self.text):
            c = self.text[self.i]
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

    def word_part(self, c: str) -> None:
        if self.chars is None:
            self.chars, self.plain = [], True
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
        """The end of ``$(…)``, ``${…}``, ``$'…'``, `` `…` `` or ``$NAME`` starting at ``at``."""
        if self.text[at] == "`":
            return self.closing("`", at + 1) + 1
        nxt = self.text[at + 1 : at + 2]
        if nxt == "(":
            return self.balanced(at + 1)
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
        raise ValueError("unclosed $(")

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
        self.tokens.append(Word(text, self.plain))
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

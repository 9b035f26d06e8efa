"""Who owns a path by a CODEOWNERS file (gitignore-style patterns, the last matching line
wins; a line with no owners leaves the path unowned). Pure: the file's text in, owners out.
"""

from __future__ import annotations

import pathspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# Where GitHub looks, in its order: the first that exists is the file.
PLACES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


def rules(text: str) -> list[tuple[pathspec.GitIgnoreSpec, tuple[str, ...]]]:
    """Each line's pattern and owners, in file order (comments and blank lines left out)."""
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split() if not line.lstrip().startswith("#") else []
        if words:
            spec = pathspec.GitIgnoreSpec.from_lines([words[0]])
            out.append((spec, tuple(words[1:])))
    return out


def owners_of(text: str, path: str) -> tuple[str, ...]:
    """The owners of ``path`` (root-relative): those of the last line whose pattern matches."""
    found: tuple[str, ...] = ()
    for spec, owners in rules(text):
        if spec.match_file(path):
            found = owners
    return found


def owners(text: str, targets: Iterable[str]) -> tuple[str, ...]:
    """The owners of every target's path (``FILE#KEY``: its file), each once, in order."""
    paths = [t.split("#", 1)[0] for t in targets]
    return tuple(dict.fromkeys(o for p in paths for o in owners_of(text, p)))

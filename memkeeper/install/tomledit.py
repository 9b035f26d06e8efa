"""One table of a TOML file, added and taken out as text, every other byte kept. Pure.

Codex reads its MCP servers from ``[mcp_servers.NAME]`` tables in ``.codex/config.toml``.
``tomllib`` reads the file; the table is written as text (no TOML writer is needed for a few
keys of strings): appended at the end after one blank line, or rewritten where it stands. A
table runs from its header to the next header. Each edit is checked by reading the result
back: anything that is not exactly "the user's file plus (or minus) this table" — the table
also spelled inline or with dotted keys elsewhere, sub-tables of its own — is refused with
what to do by hand, before anything is written.

Not tomlkit (0.15, tried in this module's place): it counts the blank lines and comments
before the next table as the edited table's own, so replacing or dropping
``[mcp_servers.memkeeper]`` deleted the user's comment introducing the table after it; it
spells a new header with its sibling's spacing (``[ mcp_servers.memkeeper]``), and it
replaced the user's dotted keys (``memkeeper.command = …`` under ``[mcp_servers]``) with a
table instead of refusing. tests/install/test_tomledit.py holds this module to those bytes.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid

if TYPE_CHECKING:
    from typing import Any

_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)


def load(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Invalid(
            f"{where}: not valid TOML ({exc}) — fix it, then run the same memkeeper command again",
            path=where,
        ) from None


def table(path: tuple[str, str], values: dict[str, Any]) -> str:
    """``[a.b]`` and its ``key = value`` lines (strings and lists of strings)."""
    header = "[" + ".".join(_key(part) for part in path) + "]\n"
    return header + "".join(f"{_key(k)} = {_value(v)}\n" for k, v in values.items())


def get(data: dict[str, Any], path: tuple[str, str]) -> Any:
    outer = data.get(path[0])
    return outer.get(path[1]) if isinstance(outer, dict) else None


def put(text: str, path: tuple[str, str], values: dict[str, Any], where: str) -> str:
    """``text`` with table ``path`` holding ``values``: rewritten where it is, else appended."""
    data = load(text, where)
    if get(data, path) == values:
        return text
    span = _span(text, path)
    block = table(path, values)
    if span is not None:
        new = text[: span[0]] + block + text[span[1] :]
    else:
        new = text + ("" if not text else "\n" if text.endswith("\n") else "\n\n") + block
    outer = data.get(path[0])
    expected = {**data, path[0]: {**(outer if isinstance(outer, dict) else {}), path[1]: values}}
    _verify(new, expected, path, where)
    return new


def drop(text: str, path: tuple[str, str], where: str) -> str:
    """``text`` without table ``path`` (and the blank line ``put`` put before it)."""
    data = load(text, where)
    span = _span(text, path)
    if span is None:
        return text
    start, end = span
    if text[:start].endswith("\n\n"):
        start -= 1
    new = text[:start] + text[end:]
    found = data.get(path[0])
    outer = {k: v for k, v in (found if isinstance(found, dict) else {}).items() if k != path[1]}
    expected = {k: v for k, v in data.items() if k != path[0]}
    if outer or _span(new, (path[0],)) is not None:
        expected[path[0]] = outer
    _verify(new, expected, path, where)
    return new


def _span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the table ``path`` is written: its header line to the next header (or the end)."""
    spelled = r"\s*\.\s*".join(
        rf"(?:{re.escape(p)}|\"{re.escape(p)}\"|'{re.escape(p)}')" for p in path
    )
    found = re.search(rf"^[ \t]*\[\s*{spelled}\s*\][ \t]*(?:#[^\n]*)?(?:\n|$)", text, re.MULTILINE)
    if found is None:
        return None
    following = _HEADER.search(text, found.end())
    end = following.start() if following else len(text)
    lines = text[found.end() : end].splitlines(keepends=True)
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        end -= len(lines.pop())  # blank lines and comments before the next table are its own
    return found.start(), end


def _verify(new: str, expected: dict[str, Any], path: tuple[str, ...], where: str) -> None:
    try:
        ok = tomllib.loads(new) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        name = ".".join(path)
        raise Invalid(
            f"{where}: [{name}] is written in a way memkeeper does not edit (inline, with "
            f"dotted keys, or with tables of its own) — edit [{name}] by hand (see "
            "docs/reference.md §4.20), then try again",
            path=where,
        )


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _value(value: Any) -> str:
    """A TOML string or list of strings: JSON's spelling of them is TOML's too (ASCII)."""
    return json.dumps(value, ensure_ascii=True)

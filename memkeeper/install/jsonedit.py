"""JSON configuration files edited as text, so a user's file keeps every byte memkeeper did
not add: its comments, its layout, the order of its keys. Pure.

Agents' settings are JSON, some of them JSONC (Gemini's and VS Code's allow ``//`` and
``/* */`` comments and trailing commas). ``parse`` reads either, on the text ``gate.jsonc``
blanks (comments, trailing commas and a byte-order mark turned into spaces of the same length,
line breaks kept), so its offsets are those of the file and ``json`` reports errors at the
file's own line and column; the tree it returns knows where each value starts and ends. The edits
are insertions and removals of whole members and items, each one the exact inverse of the
other: ``insert`` appends a child after the container's last one (or into an empty one)
indented like its siblings, and ``remove`` takes out exactly the text between the child and
its previous sibling (or the next one), so an insert then a remove gives the file back byte
for byte.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.gate.jsonc import blank, scan

if TYPE_CHECKING:
    from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True, slots=True)
class Node:
    """One value in the text: ``text[start:end]``. An object's children are its members (the
    key's opening quote to the value's end), an array's its items."""

    start: int
    end: int
    value: Any
    keys: tuple[str, ...] = ()  # an object's keys, one per child
    children: tuple[Child, ...] = ()

    def member(self, key: str) -> Child | None:
        """The object's (last) member named ``key``, as ``json`` would read it."""
        found = [child for name, child in zip(self.keys, self.children, strict=True) if name == key]
        return found[-1] if found else None

    def index(self, child: Child) -> int:
        return self.children.index(child)


@dataclass(frozen=True, slots=True)
class Child:
    """A member (``start`` at its key) or an item (``start`` at the value) of a container."""

    start: int
    node: Node

    @property
    def end(self) -> int:
        return self.node.end


def parse(text: str, where: str) -> Node:
    """The tree of ``text`` (JSON or JSONC); ``Invalid`` at ``where:LINE:COL`` if it is not."""
    plain = blank(text)
    try:
        json.loads(plain)
    except json.JSONDecodeError as exc:
        raise Invalid(
            f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}) — fix it, then "
            "run the same memkeeper command again",
            path=where,
            line=exc.lineno,
        ) from None
    return _node(plain, 0)


def _skip(text: str, i: int) -> int:
    found = _SPACE.match(text, i)
    return found.end() if found else i


def _node(text: str, i: int) -> Node:
    i = _skip(text, i)
    if text[i] == "{":
        return _object(text, i)
    if text[i] == "[":
        return _array(text, i)
    value, end = _DECODER.raw_decode(text, i)
    return Node(i, end, value)


def _object(text: str, start: int) -> Node:
    keys: list[str] = []
    children: list[Child] = []
    i = _skip(text, start + 1)
    while text[i] != "}":
        key, after = _DECODER.raw_decode(text, i)
        colon = _skip(text, after)
        node = _node(text, colon + 1)
        keys.append(key)
        children.append(Child(i, node))
        i = _skip(text, node.end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    value = {key: child.node.value for key, child in zip(keys, children, strict=True)}
    return Node(start, i + 1, value, tuple(keys), tuple(children))


def _array(text: str, start: int) -> Node:
    children: list[Child] = []
    i = _skip(text, start + 1)
    while text[i] != "]":
        node = _node(text, i)
        children.append(Child(node.start, node))
        i = _skip(text, node.end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return Node(start, i + 1, [c.node.value for c in children], (), tuple(children))


# -- edits ------------------------------------------------------------------------------------


def insert(text: str, container: Node, value: Any, key: str | None = None) -> str:
    """``text`` with ``value`` added to ``container`` after its last child (as member ``key``
    of an object), on a line of its own indented like its siblings' — after what follows the
    last child on its line (a comment stays where it was)."""
    unit = indent_unit(text)
    base = _line_indent(text, container.start)
    children = container.children
    if children and _starts_line(text, children[0].start):
        inner = _line_indent(text, children[0].start)
    else:
        inner = base + unit
    rendered = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + inner)
    child = rendered if key is None else f"{json.dumps(key, ensure_ascii=False)}: {rendered}"
    if not children:
        at = container.start + 1
        closing = "" if "\n" in text[at : container.end - 1] else "\n" + base
        return text[:at] + "\n" + inner + child + closing + text[at:]
    plain, commas = scan(text)
    last = children[-1].end
    eol = _line_end(text, plain, last)
    trailing = any(last <= c < (eol or last) for c in commas)
    if eol is None:
        return text[:last] + ",\n" + inner + child + text[last:]
    if trailing:  # JSONC: the new child gets one too
        return text[:eol] + "\n" + inner + child + "," + text[eol:]
    return text[:last] + "," + text[last:eol] + "\n" + inner + child + text[eol:]


def remove(text: str, container: Node, child: Child) -> str:
    """``text`` without ``child`` of ``container``: the inverse of ``insert``."""
    children = container.children
    k = container.index(child)
    if k + 1 < len(children):
        return text[: child.start] + text[children[k + 1].start :]
    if k == 0:
        return _remove_only(text, container, child)
    previous = children[k - 1].end
    plain, commas = scan(text)
    newline = text.rfind("\n", 0, child.start)
    own_line = newline > previous and not plain[newline + 1 : child.start].strip()
    after = _line_end(text, plain, child.end)
    trailing = [c for c in commas if child.end <= c < (after or child.end)]
    if own_line and trailing:
        return text[:newline] + text[trailing[0] + 1 :]
    if own_line and text[previous] == "," and _line_end(text, plain, previous + 1) == newline:
        return text[:previous] + text[previous + 1 : newline] + text[child.end :]
    return text[:previous] + text[child.end :]


def _remove_only(text: str, container: Node, child: Child) -> str:
    at = container.start + 1
    rest = text[child.end : container.end - 1]
    trailer = "\n" + _line_indent(text, container.start)
    if rest.startswith(trailer) and "\n" not in rest[len(trailer) :]:
        rest = rest[len(trailer) :]  # the line break insert gave a container that had none
    return text[:at] + rest + text[container.end - 1 :]


def _line_end(text: str, plain: str, pos: int) -> int | None:
    """The line break ending ``pos``'s line if only spaces, comments and a trailing comma
    come before it (not inside a comment running on), else None."""
    end = pos
    while end < len(plain) and plain[end] in " \t\r":
        end += 1
    if end == len(plain) or plain[end] != "\n":
        return None
    between = text[pos:end]
    if between.rfind("/*") > between.rfind("*/"):
        return None  # the line break is inside a block comment
    return end


def replace(text: str, node: Node, value: Any) -> str:
    """``text`` with ``node``'s value replaced by ``value``, indented as its line is."""
    rendered = json.dumps(value, indent=indent_unit(text), ensure_ascii=False)
    rendered = rendered.replace("\n", "\n" + _line_indent(text, node.start))
    return text[: node.start] + rendered + text[node.end :]


def indent_unit(text: str) -> str:
    """The file's indentation step: the first indented line's, else two spaces."""
    found = re.search(r"\n([ \t]+)\S", text)
    if found is None:
        return "  "
    return "\t" if found.group(1).startswith("\t") else found.group(1)


def _line_indent(text: str, pos: int) -> str:
    line = text.rfind("\n", 0, pos) + 1
    found = re.match(r"[ \t]*", text[line:pos])
    return found.group(0) if found else ""


def _starts_line(text: str, pos: int) -> bool:
    line = text.rfind("\n", 0, pos) + 1
    return not text[line:pos].strip()

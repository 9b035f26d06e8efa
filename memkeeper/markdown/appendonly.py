"""Append-only history: entries only ever go at the end (pure functions over bytes).

- ``make_entry`` fills the policy's ``entry_template`` (``{date} {time} {agent} {text}``);
- ``append_entry`` adds it after a blank line, in the file's line endings;
- ``first_changed_line`` says where a new version stops extending the old one: anything but
  a pure extension of the last known content is a violation of the file's class;
- ``leaves_block_open`` catches an entry whose unclosed fence or HTML block would swallow
  every entry after it.
"""

from __future__ import annotations

import time

from memkeeper.errors import Invalid
from memkeeper.markdown.lines import LINE_END, detect_newline

_PROBE = "memkeeper-probe-heading"


def make_entry(template: str | None, text: str, agent: str, now: float) -> str:
    """The entry's text: ``text`` alone, or poured into the template."""
    body = text.strip("\r\n")
    if not body.strip():
        raise Invalid("the entry is empty — give --text or an --entry-file with some text")
    if template is None:
        return body + "\n"
    moment = time.gmtime(now)
    fields = {
        "date": time.strftime("%Y-%m-%d", moment),
        "time": time.strftime("%H:%M UTC", moment),
        "agent": agent,
        "text": body,
    }
    import string  # only an entry with a template needs it

    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is not None:
            if name not in fields:  # the policy validates templates; this is the backstop
                raise Invalid(f"entry_template: unknown placeholder {{{name}}}")
            out.append(fields[name])
    return "".join(out).rstrip("\r\n") + "\n"


def append_entry(data: bytes, entry: str) -> bytes:
    """``data`` with ``entry`` after it, separated by a blank line, in the file's line endings."""
    newline = detect_newline(data)
    body = LINE_END.sub(newline, entry.encode("utf-8")).rstrip(b"\r\n") + newline
    if not data:
        return body
    head = data if data.endswith((b"\n", b"\r")) else data + newline
    if LINE_END.split(head)[-2].strip():
        head += newline  # a blank line keeps the entry from joining the last paragraph
    return head + body


def first_changed_line(old: bytes, new: bytes) -> int | None:
    """``None`` when ``new`` extends ``old``; else the 1-based line where they first differ."""
    if new.startswith(old):
        return None
    same = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        same += 1
    return len(LINE_END.findall(new, 0, same)) + 1


def entry_title(entry: str) -> str:
    """The first non-blank line of an entry, without heading marks, for events and regions."""
    for line in entry.splitlines():
        if line.strip():
            title = line.strip().lstrip("#").strip()
            return title if len(title) <= 120 else title[:119] + "…"
    return ""


def leaves_block_open(data: bytes) -> bool:
    """True when a heading written after ``data`` would not be a heading: an unclosed fence
    or HTML block at the end of the file swallows whatever is appended next."""

    newline = detect_newline(data)
    tail = b"" if not data or data.endswith((b"\n", b"\r")) else newline
    from memkeeper.markdown.sections import split  # markdown-it: the gate's calls skip it

    doc = split(data + tail + newline + b"# " + _PROBE.encode() + newline)
    return not doc.sections or doc.sections[-1].title != _PROBE

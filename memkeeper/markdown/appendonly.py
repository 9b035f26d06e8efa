"""Append-only history: entries only ever go at the end (pure functions over bytes).

- ``make_entry`` fills the policy's ``entry_template`` (``{date} {time} {agent} {text}``);
- ``append_entry`` adds it after a blank line, in the file's line endings;
- ``first_changed_line`` says where a new version stops extending the old one: anything but
  a pure extension of the last known content is a violation of the file's class;
- ``leaves_block_open`` catches an entry whose unclosed fence or HTML block would swallow
  every entry after it;
- ``entry_rows`` indexes what an append added from the file's last section alone (what
  follows a top-level heading parses the same whatever came before it), so an append to a
  10 MB log parses its last entry and the new one, not the log.
"""

from __future__ import annotations

import time

from memkeeper.errors import Invalid
from memkeeper.markdown.lines import LINE_END, count_lines, detect_newline
from memkeeper.records import SectionRow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

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


def append_entry(data: bytes, entry: str, newline: bytes | None = None) -> bytes:
    """``data`` with ``entry`` after it, separated by a blank line, in the file's line endings
    (``newline``: ``detect_newline(data)``, when the caller has it). The result's most
    frequent line ending is still ``data``'s: the entry only adds more of it."""
    newline = newline or detect_newline(data)
    body = LINE_END.sub(newline, entry.encode("utf-8")).rstrip(b"\r\n") + newline
    if not data:
        return body
    head = data if data.endswith((b"\n", b"\r")) else data + newline
    if _last_line(head).strip():
        head += newline  # a blank line keeps the entry from joining the last paragraph
    return head + body


def _last_line(head: bytes) -> bytes:
    """The last line of ``head`` (which ends with a line ending), without its ending: found
    from the end, whatever the file's size."""
    text = head[:-2] if head.endswith(b"\r\n") else head[:-1]
    return text[max(text.rfind(b"\n"), text.rfind(b"\r")) + 1 :]


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


def leaves_block_open(data: bytes, *, newline: bytes | None = None, within: bool = False) -> bool:
    """True when a heading written after ``data`` would not be a heading: an unclosed fence
    or HTML block at the end of the file swallows whatever is appended next. ``within``:
    ``data`` is the file's end from its last top-level heading's body on (nothing is open
    there), whose line endings are ``newline``."""
    newline = newline or detect_newline(data)
    tail = b"" if not data or data.endswith((b"\n", b"\r")) else newline
    probe = data + tail + newline + b"# " + _PROBE.encode() + newline
    if within:
        from memkeeper.markdown.lines import line_starts
        from memkeeper.markdown.sections import find_headings

        text = probe.decode("utf-8")
        heads = find_headings(probe, text, line_starts(probe), first=False)[0]
        return not heads or heads[-1].title != _PROBE
    from memkeeper.markdown.sections import split  # markdown-it: the gate's calls skip it

    doc = split(probe)
    return not doc.sections or doc.sections[-1].title != _PROBE


def entry_rows(
    last: SectionRow, added: bytes, keys: Iterable[str], data: bytes
) -> list[SectionRow] | None:
    """The rows an append leaves from the file's last section ``last`` on (``data`` is the
    file before the append, ``keys`` its present sections' keys): ``last`` with its body
    extended, then a row per heading ``added`` brings, each at rev 1 and the ords after
    ``last``'s. None when only a parse of the whole file can say: the last section is the
    preamble, a bare heading or named by a stable id, a new heading is outside the last
    one's level (its ancestors are not all known here), the file may open front matter, or
    link definitions are in play."""
    from memkeeper.markdown.resplit import stable_of

    if not last.level or not last.body or stable_of(last.heading, last.key) is not None:
        return None  # (a heading that ends the file gains its line ending: its row changes)
    chunk = last.body + added
    if data.startswith((b"---", b"\xef\xbb\xbf---")) or b"]:" in chunk:
        return None
    from memkeeper.markdown.lines import line_starts
    from memkeeper.markdown.sections import assign_keys, find_headings

    starts = line_starts(chunk)
    heads = find_headings(chunk, chunk.decode("utf-8"), starts, first=False)[0]
    if any(head.level < last.level or head.linked for head in heads):
        return None
    parent = last.key.rpartition("/")[0]  # slugs hold no "/": what is before is the parent's
    nest = [(0, parent)] if parent else []
    named = assign_keys(
        ((h.level, h.title, h.stable) for h in heads), keys, [*nest, (last.level, last.key)]
    )
    bounds = [*starts, len(chunk)]
    cuts = [bounds[h.start_line] for h in heads] + [len(chunk)]
    rows = [
        _entry_row(
            last.key, last.ord, last.title, last.level, last.base, last.heading, chunk[: cuts[0]]
        )
    ]
    for n, (head, (key, base)) in enumerate(zip(heads, named, strict=True)):
        heading = chunk[cuts[n] : bounds[head.body_line]]
        body = chunk[bounds[head.body_line] : cuts[n + 1]]
        rows.append(_entry_row(key, last.ord + n + 1, head.title, head.level, base, heading, body))
    return rows


def _entry_row(
    key: str, ord_: int, title: str, level: int, base: str, heading: bytes, body: bytes
) -> SectionRow:
    from memkeeper.events import digest

    text = heading + body
    return SectionRow(
        key, ord_, 1, digest(text), True, title, level, base, heading, body, count_lines(text)
    )

"""``memkeeper append``: add an entry at the end of an append-only file, under its lock.

Appends from racing agents serialise on the file lock, so each lands whole, after the one
before it, in the order of their ``entry.appended`` events. Indexing a rewrite of history
(anything but an extension of the last content memkeeper saw) records ``policy.violation``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memkeeper import limits
from memkeeper.errors import Refused
from memkeeper.fs import crash
from memkeeper.fs import files as fsio
from memkeeper.markdown import appendonly
from memkeeper.markdown.lines import count_lines, detect_newline
from memkeeper.markdown.patchrules import text_bytes
from memkeeper.records import FileState

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import SectionRow


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where the entry landed and the file's new revision."""

    path: str
    start_line: int
    end_line: int
    file_rev: int
    file_hash: str
    event_id: int
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "file_rev": self.file_rev,
            "file_hash": self.file_hash,
            "event_id": self.event_id,
            "warnings": list(self.warnings),
        }


def append(ws: Workspace, rel: str, text: str | bytes) -> AppendResult:
    """Add ``text`` (poured into the file's ``entry_template``, if any) at the end of ``rel``."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    body = text_bytes(limits.body(raw, "the entry"), "entry")
    template = _entry_template(ws, rel)
    entry = appendonly.make_entry(template, body, ws.agent, ws.now())
    return ws.retrying(rel, lambda: _attempt(ws, rel, entry, appendonly.entry_title(body)))


def _attempt(ws: Workspace, rel: str, entry: str, title: str) -> AppendResult:
    """One try of the append under the file's lock (``retrying`` starts it over after a race)."""
    with ws.locked(rel):
        with ws.editing(rel, missing_ok=True) as data:
            warnings = _check_claims(ws, rel)
            done = _write(ws, rel, data, entry, title)
            crash.crashpoint("append.before_commit")  # file and index written, not committed
        crash.crashpoint("append.after_commit")  # committed, lock still held
    return replace(done, warnings=warnings)


def _check_claims(ws: Workspace, rel: str) -> tuple[str, ...]:
    """Warnings for other agents' advisory claims on the file; ``Refused`` (reason
    ``claimed``) under another agent's strict claim or a ``strict: true`` rule."""
    if not ws.store.any_live_claim(ws.claim_now):  # nobody claims: no clock read
        return ()
    now = ws.claim_now()
    from memkeeper.claims.wording import holder_json
    from memkeeper.ops.claimwrites import write_decision

    decision = write_decision(ws, rel, None, None, now)
    if decision.refusal is None:
        return decision.warnings
    holders = [holder_json(c, now) for c in decision.holders]
    raise Refused(decision.refusal, reason="claimed", holders=holders)


def _write(ws: Workspace, rel: str, old: bytes | None, entry: str, title: str) -> AppendResult:
    data = old or b""
    newline = detect_newline(data)
    new = appendonly.append_entry(data, entry, newline)
    tail = None if old is None else _entry_rows(ws, rel, data, new)
    rows = None if tail is None else tail[1]
    if tail is not None:  # the checks on the last section's body and what follows alone
        body = tail[0].body
        end = new[len(data) - len(body) :]
        opens = appendonly.leaves_block_open(end, newline=newline, within=True)
        opened = opens and appendonly.leaves_block_open(body, newline=newline, within=True)
    else:
        opens = appendonly.leaves_block_open(new)
        opened = opens and appendonly.leaves_block_open(data)
    if opens and not opened:
        raise Refused(
            f"{rel}: the entry leaves a code fence or HTML block open, which would swallow "
            "every entry after it — close it",
            reason="structure",
        )
    if old is None:  # a new file: the policy manages its path, so its directories may be made
        fsio.make_directories(ws.top, rel)
    if rows is None:
        ws.replace_file(rel, old, new)
    else:
        _index_entry(ws, rel, data, new, rows)
    state = ws.store.file_state(rel)
    assert state is not None
    total = count_lines(new)
    first = total - count_lines(entry.encode("utf-8")) + 1
    event = ws.record(
        "entry.appended",
        rel,
        None,
        {
            "file_rev": state.file_rev,
            "start_line": first,
            "end_line": total,
            "title": title,
        },
    )
    return AppendResult(rel, first, total, state.file_rev, state.file_hash, event.id)


def _entry_rows(
    ws: Workspace, rel: str, data: bytes, new: bytes
) -> tuple[SectionRow, list[SectionRow]] | None:
    """The file's last section's row and the rows the append leaves from it on, at rev 1,
    from that row and the present keys alone (``appendonly.entry_rows``); None: the file is
    indexed whole, as any other change."""
    keys = ws.store.section_keys(rel)
    if not keys:
        return None
    found = ws.store.indexed_section(rel, keys[-1][0])
    if found is None or not data.endswith(found[1].heading + found[1].body):
        return None  # (the index holds ``data``: ``editing`` indexed it)
    last = found[1]
    rows = appendonly.entry_rows(last, new[len(data) :], (key for key, _ in keys), data)
    return None if rows is None else (last, rows)


def _index_entry(ws: Workspace, rel: str, old: bytes, new: bytes, rows: list[SectionRow]) -> None:
    """Replace the file and index the append: only the rows from its last section on, each
    row's rev continued from the one the index holds for its key (a key that left and comes
    back continues counting)."""
    from memkeeper.events import digest

    state = ws.store.file_state(rel)
    assert state is not None
    new_hash = digest(new)
    ws.replace_file(rel, old, new, index=False, hashes=(state.file_hash, new_hash))
    changed = []
    for row in rows:
        known = ws.store.section_row(rel, row.key)
        if known is not None and known.present and known.hash == row.hash:
            continue  # the last section, when the entry is its own section
        changed.append(row._replace(rev=1 if known is None else known.rev + 1))
    ws.store.put_sections(rel, changed)
    ws.put_file(rel, FileState(state.file_rev + 1, new_hash), new)


def _entry_template(ws: Workspace, rel: str) -> str | None:
    """The rule's ``entry_template``; ``Refused`` unless ``rel`` is an append-only file.
    Both from the verdicts' cache: no YAML parsed while the policy is unchanged."""
    rule = ws.rule(rel)
    if rule.file_class is None:
        raise Refused(
            f"{rel}: not managed by the policy (.memkeeper.yaml) — memkeeper only appends to "
            "append-only files; add a rule for it",
            reason="unmanaged",
        )
    if rule.file_class != "append-only":
        hint = (
            " — private files are yours alone: edit it directly"
            if rule.file_class == "private"
            else " — change it with memkeeper patch PATH#KEY"
        )
        raise Refused(
            f"{rel}: is {rule.file_class}; append is only for append-only files{hint}",
            reason="class",
        )
    return ws.entry_template(rel)

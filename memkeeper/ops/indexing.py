"""``Indexing``: the index of each managed file kept up to date with the disk, and the
lookups of its sections.

A change memkeeper did not make (a human's save, an agent's own write tool) is indexed on
the next look at the file, recorded as ``section.external_edit`` events (none for a private
file; a ``policy.violation`` too for append-only history that was rewritten). Before that, a
replace the store committed but the disk does not show is settled (``WriteAhead``), and
with a shared store the file is compared with the store's version (``SharedSync``).
"""

from __future__ import annotations

from memkeeper.events import digest
from memkeeper.fs import files
from memkeeper.records import FileState
from memkeeper.store.retry import Retry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.markdown.revisions import Reindex
    from memkeeper.markdown.sections import Document
    from memkeeper.ops.shape import WorkspaceShape
    from memkeeper.records import SectionRow
else:
    WorkspaceShape = object


REFRESH_ATTEMPTS = 10  # looks at a file mid-save before a read answers from the index


class Indexing(WorkspaceShape):
    """The part of a ``Workspace`` that indexes files and answers from the index."""

    def refresh(
        self, rel: str, *, actor: str | None = None, detail: dict[str, Any] | None = None
    ) -> bool:
        """Bring the index of ``rel`` up to date with the file on disk; ``actor`` and
        ``detail``: who made a change found, and how (see ``index_file``). A file another
        process has open for writing (a save in progress) is waited for briefly, then left
        as the index last saw it: a half-written state is never indexed. With a shared store,
        a look another writer got in first with (two roots indexing one file at once) starts
        over on what the store holds then — unless this runs inside another operation's
        transaction, whose own retry (``again``) it belongs to. False: the file stayed open
        for writing the whole time (the index was left as it was)."""
        if self.shared and not self.writing_open():
            return self.again(lambda: self._refresh(rel, actor, detail))
        return self._refresh(rel, actor, detail)

    def _refresh(self, rel: str, actor: str | None, detail: dict[str, Any] | None) -> bool:
        data = files.read_bytes(self.top, rel)
        state = self.store.file_state(rel)
        if state is not None and state.file_hash == digest(data):
            self.seen_agreeing(rel, state, data)
            return True
        with self.locked(rel):
            # 0.01 s, 0.02 s, … between looks: a save in progress is given ~0.5 s in all
            for _ in Retry(REFRESH_ATTEMPTS, delay=0.01, backoff=1.0, step=0.01).tries():
                try:
                    data = files.read_bytes(self.top, rel, whole=True)
                    with self.writing():
                        self.index_file(rel, data, actor=actor, detail=detail)
                    return True
                except files.Raced:
                    continue
        return False

    def index_file(
        self,
        rel: str,
        data: bytes,
        *,
        external: bool = True,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
        push: bool = False,
        doc: Document | None = None,
    ) -> Document | None:
        """Index a change memkeeper did not make (``external=False``: one it just wrote, which
        records no event). Its ``section.external_edit`` events name ``actor`` when known (the
        Claude Code hook knows which agent's tool made it), else ``external``, and carry
        ``detail`` in their data. A replace the store committed but the file does not show
        is settled first (``settle_pending``). ``doc``: ``data`` already split, not split
        again. Call under the file lock, inside writing()."""
        state = self.store.file_state(rel)
        file_hash = digest(data)
        if state is not None and state.file_hash == file_hash:
            if self.shared:
                self.agreed(rel, state.file_rev, file_hash, data)
            return None
        if self.shared and external and state is not None and not push:
            found = self.look_shared(rel, data, file_hash, state)
            if found is None:
                return None
            data, file_hash = found, digest(found)
        elif external and state is not None and not self.staging(rel):
            settled = self.settle_pending(rel, data, file_hash)
            if settled is None:
                return None
            if settled is not data:
                data, file_hash = settled, digest(settled)
                if state.file_hash == file_hash:
                    return None
        from memkeeper.markdown import revisions
        from memkeeper.markdown.sections import split

        if doc is None or doc.data is not data:
            doc = split(data, rel)
        previous = self.store.sections(rel, with_absent=True)
        change = revisions.reindex(previous, doc)
        self.store.put_sections(rel, change.rows)
        self.put_file(rel, FileState(1 if state is None else state.file_rev + 1, file_hash), data)
        if external and state is not None:
            self._note_external(rel, previous, change, data, actor, detail or {})
        return doc

    def put_file(self, rel: str, state: FileState, data: bytes) -> None:
        """Store the file's new state (its bytes are ``data``); with a shared store, also
        remember that version (other roots' files may hold it later: a checkout, a clone) and
        that this root's file holds it once the transaction is done."""
        self.store.put_file(rel, state)
        if self.shared:
            self.store.keep_version(rel, state.file_hash, state.file_rev)
            self.agreed(rel, state.file_rev, state.file_hash, data)

    def committed(self, rel: str) -> bytes:
        """The file's bytes as the store holds them (every section's heading and body)."""
        return b"".join(row.heading + row.body for row in self.store.sections(rel))

    def _note_external(
        self,
        rel: str,
        previous: list[SectionRow],
        change: Reindex,
        data: bytes,
        actor: str | None,
        detail: dict[str, Any],
    ) -> None:
        """Events for an edit memkeeper did not make: none for a private file; for history
        that was rewritten rather than extended, a ``policy.violation`` too — and history only
        extended (an agent's own edit tool adding an entry at the end) records each new entry as
        ``entry.appended``, as ``append`` does, so feeds built from entries show it."""
        file_class = self.rule(rel).file_class
        if file_class == "private":
            return
        extended = file_class == "append-only" and not self._note_rewrite(rel, previous, data)
        revs = {row.key: row.rev for row in change.rows}
        titles = {row.key: row.title for row in change.rows}
        known = {row.key for row in previous if row.present}
        for key in change.changed:
            event = {"rev": revs[key], "noticed_by": self.agent, **detail}
            entry = extended and key not in known
            if entry:
                event["title"] = titles.get(key, key)
            self.record(
                "entry.appended" if entry else "section.external_edit",
                rel,
                key,
                event,
                actor=actor or "external",
            )

    def _note_rewrite(self, rel: str, previous: list[SectionRow], data: bytes) -> bool:
        """Record ``policy.violation`` (True) when ``data`` does not extend what the index last
        held — unless it puts back the history the last violation rewrote (``git checkout HEAD
        --``, the fix ``check`` suggests): that is ``history.restored``, no second violation."""
        from memkeeper.markdown import appendonly

        old = b"".join(row.heading + row.body for row in previous if row.present)
        line = appendonly.first_changed_line(old, data)
        if line is None:
            return False
        last = self.store.last_events(rel).get(None)
        if last is not None and last.type == "policy.violation":
            before = last.data.get("before")
            if before is not None and before == digest(data):
                data_ = {"noticed_by": self.agent, "violation": last.id}
                self.record("history.restored", rel, None, data_, actor="external")
                return True
        self.record(
            "policy.violation",
            rel,
            None,
            {
                "rule": "append-only",
                "line": line,
                "message": f"{rel}:{line}: history was rewritten, not extended",
                "noticed_by": self.agent,
                "before": digest(old),
            },
            actor="external",
        )
        return True

    def section_row(self, rel: str, ref_key: str) -> SectionRow:
        """The present section ``ref_key`` names (exact key or unambiguous suffix)."""
        return self.indexed_section(rel, ref_key)[1]

    def indexed_section(self, rel: str, ref_key: str) -> tuple[FileState, SectionRow]:
        """The file's state and the present section ``ref_key`` names, read together: one
        statement when the reference names one section (the rest: ``refs.resolve_key``)."""
        found = self.store.section_candidates(rel, ref_key)
        exact = [hit for hit in found if hit[1].key == ref_key]
        if exact or len(found) == 1:
            return (exact or found)[0]
        from memkeeper.markdown import refs

        key = refs.resolve_key(rel, ref_key, self.store.section_keys(rel))  # raises, mostly
        hit = self.store.indexed_section(rel, key)
        assert hit is not None
        return hit

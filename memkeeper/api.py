"""``Memory``: the Python API (contract §9) that composes parsing, policy, store and files.

The CLI is a thin shell over this class. Reads of an unchanged, already indexed file are
answered from the index without parsing Markdown or YAML; every write re-reads the file under
its lock and indexes any change memkeeper did not make *before* comparing revisions.
"""

from __future__ import annotations

import json
import os

from memkeeper.errors import Failed
from memkeeper.events import digest, iso_utc
from memkeeper.fs import files as fsio
from memkeeper.fs import root as repo
from memkeeper.markdown import refs
from memkeeper.records import Event, PatchResult, SectionInfo, SectionText
from memkeeper.store.sqlite import FileState, SectionRow, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

    from memkeeper.clock import Clock
    from memkeeper.leases.decisions import Claim, Mode
    from memkeeper.markdown.revisions import Reindex
    from memkeeper.markdown.sections import Document
    from memkeeper.ops.append import AppendResult
    from memkeeper.ops.regen import RegenResult
    from memkeeper.store.recontables import Reconciliation

POLICY_FILE = ".memkeeper.yaml"
HOME_DIR = ".memkeeper"
AGENT_ENV = "MEMKEEPER_AGENT"
_READ_ATTEMPTS = 20


class Memory:
    """Shared memory files under one root, seen by one agent."""

    def __init__(
        self, root: str | os.PathLike[str], agent: str, clock: Clock | None = None
    ) -> None:
        self.top = os.fspath(root)  # the root as a str: pathlib costs start-up time
        self.agent = agent
        self.home = os.path.join(root, HOME_DIR)
        self._clock = clock
        self._db: Store | None = None
        self._verdicts: dict[str, dict[str, Any]] = {}
        self._policy_seen: tuple[object, bytes, str] | None = None

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        clock: Clock | None = None,
    ) -> Memory:
        """Find the root like the CLI does; the agent defaults to ``$MEMKEEPER_AGENT``."""
        chosen = agent or os.environ.get(AGENT_ENV) or "human"
        return cls(repo.find_root(root), chosen, clock)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- reading ---------------------------------------------------------------------------

    def sections(self, path: str) -> list[SectionInfo]:
        return self.indexed_sections(self.relpath(path))

    def indexed_sections(self, rel: str) -> list[SectionInfo]:
        """The sections of a root-relative path, indexing it first if it changed."""
        self.refresh(rel)
        rows = self.store.sections(rel)
        out, line = [], 1
        for row in rows:
            assert row.hash is not None
            out.append(
                SectionInfo(
                    row.key, row.title, row.level, row.rev, row.hash, line, line + row.lines - 1
                )
            )
            line += row.lines
        return out

    def read(self, ref: str) -> SectionText:
        """A section (``PATH#KEY``) or a whole file (``PATH``) with its revisions."""
        path, key = refs.split_ref(ref)
        rel = self.relpath(path)
        for _ in range(_READ_ATTEMPTS):  # a writer may land between our read and the index
            data = fsio.read_bytes(self.top, rel)
            answer = self._read_indexed(rel, key, digest(data), data)
            if answer is not None:
                return answer
            self.refresh(rel)
        answer = self._read_indexed(rel, key, None, None)  # what the index holds, at least
        assert answer is not None
        return answer

    def _read_indexed(
        self, rel: str, key: str | None, file_hash: str | None, data: bytes | None
    ) -> SectionText | None:
        """Answer from the index, if it holds ``file_hash`` (``None``: whatever it holds)."""
        with self.store.reading():
            state = self.store.file_state(rel)
            if state is None or file_hash not in (None, state.file_hash):
                return None
            if key is None:
                whole = data if data is not None else fsio.read_bytes(self.top, rel)
                return SectionText(
                    rel,
                    None,
                    "",
                    whole.decode("utf-8"),
                    state.file_rev,
                    state.file_hash,
                    state.file_rev,
                    state.file_hash,
                )
            found = self.section_row(rel, key)
        return section_text(rel, state, found)

    def section_row(self, rel: str, ref_key: str) -> SectionRow:
        """The present section ``ref_key`` names (exact key or unambiguous suffix)."""
        hit = self.store.indexed_section(rel, ref_key)
        if hit is None:
            key = refs.resolve_key(rel, ref_key, self.store.section_keys(rel))
            hit = self.store.indexed_section(rel, key)
        assert hit is not None
        return hit[1]

    def events(self, since: int = 0, limit: int | None = None) -> list[Event]:
        return self.store.events(since, limit)

    def emit(self, type: str, data: dict[str, Any] | None = None) -> Event:
        """Record a coordination event from outside (``task.completed``, ``risk.found`` …);
        ``Invalid`` for a type memkeeper itself uses or data that is not a JSON object."""
        from memkeeper.ops.emit import emit

        return emit(self, type, data)

    # -- writing -----------------------------------------------------------------------------

    def patch(
        self,
        ref: str,
        body: str | bytes | None = None,
        *,
        expect_rev: int,
        expect_file_hash: str | None = None,
        dmp: str | None = None,
        claim: str | None = None,
    ) -> PatchResult:
        """Compare-and-swap one section's body; see contract §4 "Patch rules"."""
        from memkeeper.ops.patch import patch

        return patch(
            self,
            ref,
            body,
            expect_rev=expect_rev,
            expect_file_hash=expect_file_hash,
            dmp=dmp,
            claim=claim,
        )

    # -- claims (contract §4 "Claims"; the work is in claims.py) -------------------------------

    def claim(
        self,
        targets: str | Iterable[str],
        mode: Mode = "write",
        ttl: float | None = None,
        priority: int = 0,
        strict: bool = False,
        wait: float | None = None,
        objective: str = "",
    ) -> Claim:
        """Take a lease on paths, globs or ``PATH#KEY`` sections; ``Busy`` if not granted
        (within ``wait`` seconds, when given) or aborted to break a deadlock."""
        from memkeeper.ops.claims import LeaseTable

        scope = [targets] if isinstance(targets, str) else list(targets)
        return LeaseTable(self).claim(
            scope,
            mode=mode,
            ttl=ttl,
            priority=priority,
            strict=strict,
            wait=wait,
            objective=objective,
        )

    def renew(self, id: str, ttl: float | None = None) -> Claim:
        """Extend a claim of this agent's to ``now + ttl`` (the policy's default TTL)."""
        from memkeeper.ops.claims import LeaseTable

        return LeaseTable(self).renew(id, ttl)

    def release(self, id: str) -> Claim:
        """Give back a claim of this agent's; returns it as it was."""
        from memkeeper.ops.claims import LeaseTable

        return LeaseTable(self).release(id)

    def claims(self) -> list[Claim]:
        """The live claims of every agent, oldest grant first."""
        from memkeeper.ops.claims import LeaseTable

        return LeaseTable(self).live()[0]

    def metrics(self) -> dict[str, Any]:
        """Lease counters for the last hour (claims held, queue depth, deadlocks, …)."""
        from memkeeper.ops.claims import LeaseTable

        return LeaseTable(self).metrics()

    def sweep_claims(self) -> list[Claim]:
        """Expire the claims that are due (each leaves ``claim.expired``); the daemon's tick."""
        from memkeeper.ops.claims import LeaseTable

        return LeaseTable(self).sweep()

    def lease_ttls(self) -> tuple[int, int]:
        """The policy's ``leases:`` default and maximum TTL, cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"leases:{policy_hash}"
        remembered = self._verdicts.get(cache_key)
        if remembered is not None:
            return int(remembered["default"]), int(remembered["max"])
        cached = self.store.cached(cache_key)
        if cached is None:
            from memkeeper.policy.model import empty_policy, load_policy

            policy = load_policy(policy_bytes, POLICY_FILE) if policy_bytes else empty_policy()
            cached = json.dumps([policy.default_ttl, policy.max_ttl])
            self.store.cache(cache_key, cached)
        default_ttl, max_ttl = json.loads(cached)
        self._verdicts[cache_key] = {"default": default_ttl, "max": max_ttl}
        return int(default_ttl), int(max_ttl)

    # -- history and generated regions (appending.py, regen.py, reconcile.py, check.py) --------

    def append(self, path: str, text: str | bytes) -> AppendResult:
        """Add an entry at the end of an append-only file, in the policy's entry_template."""
        from memkeeper.ops.append import append

        return append(self, self.relpath(path), text)

    def regen(self, path: str | None = None) -> list[RegenResult]:
        """Re-render the generated regions of one file, or of every generated file."""
        from memkeeper.ops.regen import regen

        return regen(self, None if path is None else self.relpath(path))

    def reconciliations(self, *, resolved: bool = False) -> list[Reconciliation]:
        """Open reconciliations (hand edits of generated regions); all with ``resolved``."""
        return self.store.reconciliations(resolved=resolved)

    def resolve(self, rec_id: int, how: str) -> Reconciliation:
        """Resolve a reconciliation: ``keep-human`` or ``take-generated``."""
        from memkeeper.ops.reconcile import resolve

        return resolve(self, rec_id, how)

    def check(self, paths: Iterable[str] = (), *, staged: bool = False) -> dict[str, Any]:
        """Validate managed files against the policy; ``Failed`` lists the violations."""
        from memkeeper.ops.check import check

        return check(self.root, [self.relpath(p) for p in paths], staged=staged)

    # -- indexing ----------------------------------------------------------------------------

    def refresh(
        self, rel: str, *, actor: str | None = None, detail: dict[str, Any] | None = None
    ) -> None:
        """Bring the index of ``rel`` up to date with the file on disk; ``actor`` and
        ``detail``: who made a change found, and how (see ``index_file``)."""
        data = fsio.read_bytes(self.top, rel)
        state = self.store.file_state(rel)
        if state is not None and state.file_hash == digest(data):
            return
        with self.locked(rel):
            data = fsio.read_bytes(self.top, rel)
            with self.store.writing():
                self.index_file(rel, data, actor=actor, detail=detail)

    def index_file(
        self,
        rel: str,
        data: bytes,
        *,
        external: bool = True,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Document | None:
        """Index a change memkeeper did not make (``external=False``: one it just wrote, which
        records no event). Its ``section.external_edit`` events name ``actor`` when known (the
        Claude Code hook knows which agent's tool made it), else ``external``, and carry
        ``detail`` in their data. Call under the file lock, inside writing()."""
        state = self.store.file_state(rel)
        file_hash = digest(data)
        if state is not None and state.file_hash == file_hash:
            return None
        from memkeeper.markdown import revisions as index
        from memkeeper.markdown.sections import split

        doc = split(data, rel)
        previous = self.store.sections(rel, with_absent=True)
        change = index.reindex(previous, doc)
        self.store.put_sections(rel, change.rows)
        self.store.put_file(rel, FileState(1 if state is None else state.file_rev + 1, file_hash))
        if external and state is not None:
            self._note_external(rel, previous, change, data, actor, detail or {})
        return doc

    def _note_external(
        self,
        rel: str,
        previous: list[SectionRow],
        change: Reindex,
        data: bytes,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Events for an edit memkeeper did not make: none for a private file; for history
        that was rewritten rather than extended, a ``policy.violation`` too."""
        file_class = self.rule(rel).get("class")
        if file_class == "private":
            return
        if file_class == "append-only":
            from memkeeper.ops.append import note_rewrite

            note_rewrite(self, rel, previous, data)
        revs = {row.key: row.rev for row in change.rows}
        for key in change.changed:
            self.record(
                "section.external_edit",
                rel,
                key,
                {"rev": revs[key], "noticed_by": self.agent, **(detail or {})},
                actor=actor or "external",
            )

    def record(
        self,
        type: str,
        path: str | None,
        section: str | None,
        data: dict[str, Any],
        actor: str | None = None,
    ) -> Event:
        return self.store.append_event(
            iso_utc(self.now()), actor or self.agent, type, path, section, data
        )

    # -- policy ---------------------------------------------------------------------------------

    def rule(self, rel: str, key: str | None = None) -> dict[str, Any]:
        """The policy's verdict for a file (and section), cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"rule:{policy_hash}:{rel}#{key or ''}"
        verdict = self._verdicts.get(cache_key)
        if verdict is not None:
            return verdict
        cached = self.store.cached(cache_key)
        if cached is not None:
            verdict = dict(json.loads(cached))
        else:
            verdict = _verdict(policy_bytes, rel, key)
            self.store.cache(cache_key, json.dumps(verdict))
        self._verdicts[cache_key] = verdict
        return verdict

    def _policy(self) -> tuple[bytes, str]:
        """The policy file's bytes and hash, re-read only when its stat changes."""
        path = os.path.join(self.top, POLICY_FILE)
        try:
            info = os.stat(path)
            signature = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
        except FileNotFoundError:
            signature = None
        if self._policy_seen is None or self._policy_seen[0] != signature:
            data = b""
            if signature is not None:
                with open(path, "rb") as handle:
                    data = handle.read()
            self._policy_seen = (signature, data, digest(data))
        return self._policy_seen[1], self._policy_seen[2]

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The memory root (resolved)."""
        from pathlib import Path

        return Path(self.top)

    @property
    def store_opened(self) -> bool:
        return self._db is not None

    @property
    def store(self) -> Store:
        if self._db is None:
            self._db = Store.open(self.home)
        return self._db

    def relpath(self, user_path: str) -> str:
        return fsio.confine(self.top, repo.relative_path(self.top, user_path))

    def now(self) -> float:
        if self._clock is not None:
            return self._clock.now()
        import time

        return time.time()

    def locked(self, rel: str) -> Any:
        _ = self.store  # the home (and its lock directory) exists once the store is open
        lock = os.path.join(self.home, "locks", digest(rel.encode())[7:31] + ".lock")
        return fsio.file_lock(lock)

    def verify(self) -> dict[str, Any]:
        """Check the event chain and every indexed file against the index; raise ``Failed``."""
        from memkeeper.ops.verify import problems

        found = problems(self)
        if found:
            raise Failed(f"verify found {len(found)} problem(s)", violations=found)
        return {"events": len(self.events()), "files": len(self.store.indexed_paths())}


def section_text(rel: str, state: FileState, row: SectionRow) -> SectionText:
    return SectionText(
        rel,
        row.key,
        row.heading.decode("utf-8"),
        row.body.decode("utf-8"),
        row.rev,
        row.hash or "",
        state.file_rev,
        state.file_hash,
    )


def _verdict(policy_bytes: bytes, rel: str, key: str | None) -> dict[str, Any]:
    from memkeeper.policy.model import empty_policy, load_policy

    policy = load_policy(policy_bytes, POLICY_FILE) if policy_bytes else empty_policy()
    rule = policy.classify(rel)
    if rule is None:
        return {"class": None, "strict": False, "owners": None}
    section = rule.section_rule(key) if key is not None else None
    return {
        "class": rule.file_class,
        "strict": rule.strict or (section is not None and section.strict),
        "owners": list(section.owners) if section and section.owners is not None else None,
    }

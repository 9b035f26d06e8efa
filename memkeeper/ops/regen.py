"""``memkeeper regen``: re-render generated regions from events, live claims and reconciliations.

The shell around ``regions`` and ``render``. Every region of every file is parsed and its
source checked before anything is written. Then, file by file under its lock: a region whose
text no longer matches its checksum was edited by hand — it is left alone and gets a
reconciliation (opened once; a later regen only refreshes its texts) — and the others are
rendered. A file is written only when its bytes change, so a regen with nothing new leaves
files and their mtimes alone (and records no event). A region reads only the events it
shows (``shown_events``: each query's newest matches, from the log's end, through its index
by type), so a render costs the same at a thousand events and at a million. Private files
never reach a region: neither their events nor claims on them are shown.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.coordination import ClaimView
from memkeeper.errors import Invalid, Refused
from memkeeper.events import digest, iso_utc
from memkeeper.fs import crash
from memkeeper.fs import files as fsio
from memkeeper.fs.walk import managed_files
from memkeeper.ops.claims import ClaimTable
from memkeeper.policy.loader import load_policy
from memkeeper.regions import gitform
from memkeeper.regions import markers as regions
from memkeeper.regions.render import Context, RuleView, compile_region
from memkeeper.regions.shown import event_matches, event_queries, shown_limit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy
    from memkeeper.records import Event
    from memkeeper.regions.markers import Region
    from memkeeper.regions.render import Renderer
    from memkeeper.regions.templates import Query
    from memkeeper.work.items import Item


UNDONE = "undone"  # the resolution of a reconciliation whose hand edit was undone
PAGE = 64  # events read back at a time for a query's newest matches


@dataclass(frozen=True, slots=True)
class RegenResult:
    """What a regen did to one file."""

    path: str
    rendered: tuple[str, ...]  # regions whose text changed
    unchanged: tuple[str, ...]
    edited: tuple[str, ...]  # left alone: edited by hand, reconciliation open
    written: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "rendered": list(self.rendered),
            "unchanged": list(self.unchanged),
            "edited": list(self.edited),
            "written": self.written,
        }


def regen(
    ws: Workspace, rel: str | None, *, skip: frozenset[str] = frozenset()
) -> list[RegenResult]:
    """Re-render ``rel`` (a generated file), or every generated file when ``None`` but those
    in ``skip`` (the daemon's: files someone else changed a moment ago)."""

    policy = load_policy(ws.root)
    targets = [path for path in _targets(ws, policy, rel) if path not in skip]
    for path in targets:  # every marker and source is valid before anything is written
        _compiled(path, fsio.read_bytes(ws.root, path), policy)
    claims = live_claims(ws, policy)
    with _live_renames(ws, policy, targets):
        for path in targets:  # reconciliations first, so a reconciliations region shows them all
            _visit_retrying(ws, policy, path, claims, write=False)
        return [_visit_retrying(ws, policy, path, claims, write=True) for path in targets]


@contextlib.contextmanager
def _live_renames(ws: Workspace, policy: Policy, targets: list[str]) -> Iterator[None]:
    """With the clean filter installed, rename each live page (``git: placeholder``) into
    place under git's index lock, its index entry kept up with it (``fs.gitindex``) — unless
    the caller (the daemon) already does."""
    from memkeeper.fs.git import git_dir
    from memkeeper.fs.gitindex import LiveIndex, filter_installed

    found = git_dir(ws.top)
    if ws.rename_guard is not None or found is None or not filter_installed(ws.top, found):
        yield
        return
    rules = ((path, policy.classify(path)) for path in targets)
    live = {path for path, rule in rules if rule is not None and rule.git == "placeholder"}
    index = LiveIndex(ws.top, found)
    if live:
        index.wait_for_git()  # before the pages are staged (``LiveIndex.wait_for_git``)

    def guarded(rel: str, rename: Callable[[], object], staged: str) -> None:
        if rel in live:
            index.rename(rel, rename, staged)
        else:
            rename()

    ws.rename_guard = guarded
    try:
        yield
    finally:
        ws.rename_guard = None
        index.flush()  # a page renamed while git held its index: once more


def _visit_retrying(
    ws: Workspace, policy: Policy, rel: str, claims: tuple[ClaimView, ...], write: bool
) -> RegenResult:
    return ws.retrying(rel, lambda: _visit(ws, policy, rel, claims, write))


def _targets(ws: Workspace, policy: Policy, rel: str | None) -> list[str]:
    if rel is None:
        found = managed_files(policy, ws.root)
        return [path for path, rule in found if rule.file_class == "generated"]
    rule = policy.classify(rel)
    fsio.read_bytes(ws.root, rel)  # a missing file is Invalid before a policy refusal
    if rule is None or rule.file_class != "generated":
        what = "not managed by the policy" if rule is None else f"is {rule.file_class}"
        raise Refused(
            f"{rel}: {what}; only generated files have regions to render — give "
            "the file `class: generated` in .memkeeper.yaml",
            reason="unmanaged" if rule is None else "class",
        )
    return [rel]


def _compiled(
    rel: str, data: bytes, policy: Policy
) -> tuple[tuple[Region, ...], dict[str, Renderer]]:
    # A merge left half done: its markers, not a region marker it split, are the problem, and a
    # render would overwrite one side of the conflict inside a region.
    from memkeeper.ops.check import conflict_markers

    unresolved = conflict_markers(data)
    if unresolved:
        line, marker = unresolved[0]
        raise Invalid(
            f"{rel}:{line}: unresolved merge conflict (a `{marker}` line) — resolve it first: "
            "keep the text you want and delete the marker lines; regen wrote nothing"
        )
    found = regions.parse(data, rel)
    return found, {r.id: compile_region(r, policy.templates, rel) for r in found}


def _visit(
    ws: Workspace, policy: Policy, rel: str, claims: tuple[ClaimView, ...], write: bool
) -> RegenResult:
    with ws.locked(rel):
        restore_live(ws, rel)
        with ws.editing(rel) as read:
            assert read is not None
            data = read
            found, renderers = _compiled(rel, data, policy)
            changed = [r for r in found if r.edited(data)]
            before = context(ws, policy, claims, changed) if changed else None
            wanted = {} if before is None else {r.id: renderers[r.id](before) for r in changed}
            edited = [r for r in changed if not _holds(r, data, wanted[r.id])]
            for region in edited:
                open_reconciliation(ws, rel, region, data, wanted[region.id])
            close_undone(ws, rel, found, edited)
            if not write:
                return RegenResult(rel, (), (), tuple(r.id for r in edited), False)
            rendered = [r for r in found if r not in edited]
            now = context(ws, policy, claims, rendered)
            texts = {r.id: renderers[r.id](now) for r in rendered}
            done = _write(ws, rel, data, found, texts, edited)
            crash.crashpoint("regen.before_commit")  # file and index written, not committed
        crash.crashpoint("regen.after_commit")  # committed, lock still held
    return done


def restore_live(ws: Workspace, rel: str) -> bool:
    """A page git wrote in its stored form (``regions.gitform``: a checkout, a stash, a
    reset), which differs from what the index holds only in placeholders where the index
    has rendered regions, gets those regions back — the bytes the index holds, written as
    memkeeper's own (no event: git changed nothing a person wrote). True if so. Under the
    file's lock."""
    data = fsio.read_bytes(ws.root, rel, whole=True)
    with ws.writing():
        state = ws.store.file_state(rel)
        if state is None or state.file_hash == digest(data):
            return False
        live = ws.committed(rel)
        if digest(live) != state.file_hash or gitform.restore(data, live, rel) != live:
            return False
        ws.replace_file(rel, data, live, hashes=(digest(data), state.file_hash))
    return True


def _write(
    ws: Workspace,
    rel: str,
    data: bytes,
    found: tuple[Region, ...],
    texts: Mapping[str, str],
    edited: list[Region],
) -> RegenResult:
    new = regions.fill(data, found, texts)
    after = {r.id: new[r.text_start : r.end] for r in regions.parse(new, rel)}
    changed = tuple(
        r.id for r in found if r.id in texts and after[r.id] != data[r.text_start : r.end]
    )
    unchanged = tuple(r.id for r in found if r.id in texts and r.id not in changed)
    if new != data:
        ws.replace_file(rel, data, new)
        state = ws.store.file_state(rel)
        assert state is not None
        ws.record(
            "region.regenerated", rel, None, {"regions": list(changed), "file_rev": state.file_rev}
        )
    return RegenResult(rel, changed, unchanged, tuple(r.id for r in edited), new != data)


def open_reconciliation(ws: Workspace, rel: str, region: Region, data: bytes, text: str) -> None:
    """Open (once) the reconciliation of a hand-edited region, with ``reconcile.opened``."""
    human = region.text(data).decode("utf-8", "replace")
    row, opened = ws.store.reconciliations.open_reconciliation(
        rel, region.id, human, text, ws.agent, iso_utc(ws.now())
    )
    if opened:
        ws.record(
            "reconcile.opened",
            rel,
            None,
            {"id": row.id, "region": region.id, "line": region.start_line},
        )


def _holds(region: Region, data: bytes, text: str) -> bool:
    """True when the region holds exactly ``text`` as ``fill`` writes it (line endings
    aside): a hand edit that wrote what memkeeper renders is no edit to reconcile."""
    rendered = text.encode("utf-8")
    if rendered and not rendered.endswith((b"\n", b"\r")):
        rendered += b"\n"
    return regions.checksum(region.text(data)) == regions.checksum(rendered)


def close_undone(ws: Workspace, rel: str, found: tuple[Region, ...], edited: list[Region]) -> None:
    """Close the open reconciliations of ``rel``'s regions that are no longer edited by hand
    (the human undid the edit, or wrote what memkeeper renders), each with
    ``reconcile.resolved`` (resolution ``undone``, actor ``external``)."""
    settled = {r.id for r in found} - {r.id for r in edited}
    for row in ws.store.reconciliations.reconciliations(path=rel):
        if row.region not in settled:
            continue
        ws.store.reconciliations.resolve_reconciliation(
            row.id, UNDONE, "external", iso_utc(ws.now())
        )
        data = {
            "id": row.id,
            "region": row.region,
            "resolution": UNDONE,
            "reason": "the hand edit is gone: the region holds what memkeeper rendered",
            "noticed_by": ws.agent,
        }
        ws.record("reconcile.resolved", rel, None, data, actor="external")


# -- what regions are rendered from ----------------------------------------------------------


def context(
    ws: Workspace, policy: Policy, claims: tuple[ClaimView, ...], shown: Sequence[Region]
) -> Context:
    """What the regions ``shown`` are rendered from: the events they show
    (``shown_events``), the open reconciliations, nothing about private files; the
    policy's rules."""
    queries = [query for region in shown for query in event_queries(region, policy.templates)]
    events = shown_events(ws, policy, queries)
    open_ = ws.store.reconciliations.reconciliations()
    found = tuple(r for r in open_ if not is_private(policy, r.path))
    return Context(events, claims, found, rule_views(policy), _work(ws, claims))


def shown_events(ws: Workspace, policy: Policy, queries: Sequence[Query]) -> tuple[Event, ...]:
    """The events ``queries`` show, oldest first: for each, its newest matches, none about a
    private file — all a render needs of the log (``regions.shown``), read from its end."""
    found: dict[int, Event] = {}
    for query in queries:
        found.update((event.id, event) for event in _newest(ws, policy, query))
    return tuple(found[i] for i in sorted(found))


def _newest(ws: Workspace, policy: Policy, query: Query) -> list[Event]:
    """The newest events ``query`` shows, read back a page at a time from the log's end
    (through the index by type, when it names types) until it has them all."""
    wanted = shown_limit(query)
    page = max(wanted, PAGE)
    found: list[Event] = []
    before = None
    while len(found) < wanted:
        batch = ws.store.recent_events(query.types, query.path, before, page)
        found += [e for e in batch if event_matches(query, e) and not about_private(policy, e)]
        if len(batch) < page:
            break
        before = batch[-1].id
    return found[:wanted]


def _work(ws: Workspace, claims: tuple[ClaimView, ...]) -> tuple[Item, ...]:
    """Every work item, one whose claim is no longer live shown back in the pool (as the next
    ``work`` operation will put it)."""
    from memkeeper.ops.work import unfinished
    from memkeeper.work import rules

    items = unfinished(ws.store)
    gone = {i.id for i in rules.stale(items, (c.id for c in claims))}
    return tuple(rules.returned(i, "expired") if i.id in gone else i for i in items)


def rule_views(policy: Policy) -> tuple[RuleView, ...]:
    """The policy's file rules, in order, as the ``howto`` region shows them."""
    return tuple(
        RuleView(
            rule.path,
            rule.file_class,
            rule.strict,
            tuple((key, s.owners, s.strict) for key, s in rule.sections.items()),
            rule.entry_template,
        )
        for rule in policy.rules
    )


def live_claims(ws: Workspace, policy: Policy) -> tuple[ClaimView, ...]:
    """The live claims as plain fields, without targets inside private files, each with the
    watchdog's idle mark (``ops.idleclaims``). Takes its own transaction (it may expire
    claims), so call it outside ``writing()``."""
    from memkeeper.ops.idleclaims import idle_marks

    out = []
    live = ClaimTable(ws).live()[0]
    marks = idle_marks(ws, live)  # the watchdog's: shown as "(idle since HH:MM)"
    for claim in live:
        targets = [t for t in claim.targets if not is_private(policy, t.partition("#")[0])]
        idle = marks.get(claim.id)
        if targets:
            out.append(
                ClaimView(
                    claim.id,
                    claim.token,
                    claim.agent,
                    claim.mode,
                    tuple(targets),
                    claim.priority,
                    claim.strict,
                    claim.expires_at,
                    claim.objective,
                    None if idle is None else idle.ts,
                )
            )
    return tuple(out)


def about_private(policy: Policy, event: Event) -> bool:
    """An event about a private file, or a claim event naming one: never rendered."""
    targets = event.data.get("targets")
    named = [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []
    return is_private(policy, event.path) or any(
        is_private(policy, t.partition("#")[0]) for t in named
    )


def is_private(policy: Policy, path: str | None) -> bool:
    """True for a path (or a directory or glob target) that a private rule covers."""
    if not path:
        return False
    for candidate in (path.rstrip("/"), path.rstrip("/") + "/x"):
        rule = policy.classify(candidate)
        if rule is not None and rule.file_class == "private":
            return True
    return False

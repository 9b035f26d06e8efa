"""Compare-and-swap patches of one section (docs/reference.md §4 "Patch rules"): the shell around
``markdown.patchrules``' pure rules.

Under the file's lock and inside one store transaction: index any change memkeeper did not
make, resolve the section, check owners and claims, compare ``expect_rev`` (and the file hash)
with the section *as it is on disk now*, then splice the body in, refuse any change to the
document's structure, write atomically and record the new revision with its event.

With ``merge``, a stale ``expect_rev`` is not the end (§4 "Merging stale patches"): the body
at that rev (kept by the store) is the base of a three-way merge of the agent's body into the
current one (``fs.gitmerge``); a merge that lands is patched in like any body (event
``section.merged``), one that does not keeps the agent's body as a proposal
(``ops.proposals``) and is a conflict naming it.
"""

from __future__ import annotations

from memkeeper.errors import Conflict, Invalid, Refused
from memkeeper.events import digest, iso_utc
from memkeeper.fs import crash
from memkeeper.markdown import refs
from memkeeper.markdown.lines import count_lines
from memkeeper.names import POLICY_FILE
from memkeeper.ops.read import section_text
from memkeeper.records import FileState, PatchResult, SectionRow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.coordination import Proposal
    from memkeeper.errors import ConflictReason
    from memkeeper.ops.workspace import Workspace

WRITABLE_CLASSES = ("section-owned", "generated")
# Open proposals one section keeps at most: past that a body whose merge failed is not kept
# (the conflict still answers, with the current text).
MAX_OPEN_PROPOSALS = 20


def patch(
    ws: Workspace,
    ref: str,
    body: str | bytes | None = None,
    *,
    expect_rev: int,
    expect_file_hash: str | None = None,
    dmp: str | None = None,
    claim: str | None = None,
    merge: bool = False,
    proposal: int | None = None,
) -> PatchResult:
    """Compare-and-swap one section's body; see docs/reference.md §4 "Patch rules". With
    ``merge``, a stale ``expect_rev`` merges three ways instead of losing at once;
    ``proposal``: the write applies that open proposal, closed in the same transaction
    (``ops.proposals.apply``)."""
    path, ref_key = refs.split_ref(ref)
    if ref_key is None:
        raise Invalid(
            f"{ref}: patch needs a section — write PATH#KEY "
            f"(list them with: memkeeper sections {path})"
        )
    if (body is None) == (dmp is None):
        raise Invalid("patch needs exactly one of a body or a diff-match-patch payload")
    if dmp is not None:
        from memkeeper.limits import body as bounded

        bounded(dmp.encode("utf-8", "surrogatepass"), "the diff-match-patch payload")
    if expect_file_hash is not None:
        if merge:
            raise Invalid(
                "--merge and --expect-file-hash ask for opposite things: a merge lands into a "
                "file others changed, the file hash asks that nobody did — drop one of them"
            )
        expect_file_hash = _file_hash(expect_file_hash)
    rel = ws.relpath(path)
    new_body = None
    if body is not None:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        from memkeeper.limits import body as bounded
        from memkeeper.markdown.patchrules import text_bytes

        text_bytes(bounded(raw, "the body"), "body")
        new_body = raw
    _ = ws.store  # a write: the store exists from here on (and keeps the verdicts cached)
    rule = ws.rule(rel)
    _check_class(rel, rule.file_class)
    want = _Want(new_body, dmp, claim, expect_rev, expect_file_hash, merge, proposal)
    return ws.retrying(rel, lambda: _attempt(ws, rel, ref_key, want))


class _Want:
    """What the caller asked of one patch."""

    __slots__ = ("body", "dmp", "claim", "expect_rev", "expect_file_hash", "merge", "proposal")

    def __init__(
        self,
        body: bytes | None,
        dmp: str | None,
        claim: str | None,
        expect_rev: int,
        expect_file_hash: str | None,
        merge: bool,
        proposal: int | None,
    ) -> None:
        self.body, self.dmp, self.claim = body, dmp, claim
        self.expect_rev, self.expect_file_hash = expect_rev, expect_file_hash
        self.merge, self.proposal = merge, proposal


def _attempt(ws: Workspace, rel: str, ref_key: str, want: _Want) -> PatchResult:
    """One try of the patch under the file's lock (``retrying`` starts it over after a race)."""
    with ws.locked(rel):
        with ws.editing(rel) as data:
            assert data is not None
            state, row = ws.indexed_section(rel, ref_key)
            _check_owner(ws, rel, row.key)
            warnings = _check_claims(ws, rel, row.key, want.claim)
            if want.proposal is not None:
                open_proposal(ws, want.proposal)  # still open: nobody applied or dropped it
            lost = _compare(rel, row, state, want.expect_rev, want.expect_file_hash)
            new_body, dmp, base_rev = want.body, want.dmp, None
            if lost is not None and want.merge and lost.reason == "stale_revision":
                merged = _merge(ws, rel, row, want, lost)
                if isinstance(merged, bytes):
                    new_body, dmp, base_rev, lost = merged, None, want.expect_rev, None
                else:
                    lost = merged
            if lost is None:
                done = _apply(ws, rel, data, row, state, new_body, dmp, base_rev, want.claim)
                if want.proposal is not None:
                    _close_proposal(ws, rel, row.key, want.proposal, done)
                if want.claim is not None:  # the last step before the commit
                    from memkeeper.ops.claimwrites import recheck_fence

                    recheck_fence(ws, rel, row.key, want.claim)
            else:
                ws.store.tally("conflict", ws.now())  # committed: the metrics count lost races
        if lost is not None:
            raise lost
        crash.crashpoint("patch.after_commit")  # committed, lock still held
    return done._replace(warnings=warnings) if warnings else done


def _merge(
    ws: Workspace, rel: str, row: SectionRow, want: _Want, lost: Conflict
) -> bytes | Conflict:
    """The agent's change (the body at ``expect_rev`` → its body) merged into the current
    body, or the conflict to answer: ``merge: base_unknown`` when that body is no longer
    kept, else with the agent's body kept as a proposal."""
    from memkeeper.fs.gitmerge import merge

    base = ws.store.body_at(rel, row.key, want.expect_rev)
    if base is None or want.expect_rev > row.rev:
        kept = f"the body at rev {want.expect_rev} is not kept, so nothing to merge from"
        return _conflict(lost, f"{lost.message} ({kept})", merge="base_unknown")
    mine = want.body
    if want.dmp is not None:
        from memkeeper.markdown import patchrules

        ref = f"{rel}#{row.key} at rev {want.expect_rev}"
        mine = patchrules.apply_dmp(base.decode("utf-8"), want.dmp, ref).encode("utf-8")
    assert mine is not None
    # The body with the section's line endings, as a plain patch writes it: an agent's LF
    # body must not differ on every line from a CRLF file's base and current body.
    from memkeeper.markdown.lines import LINE_END, detect_newline

    mine = LINE_END.sub(detect_newline(row.body + base), mine)
    outcome, merged = merge(base, row.body, mine, ws.home)
    if outcome == "merged":
        return merged
    why = "overlap" if outcome == "conflict" else "unavailable"
    open_here = [p for p in ws.store.proposals.proposals() if (p.path, p.section) == (rel, row.key)]
    same = (rel, row.key, want.expect_rev, mine, ws.agent)
    retried = next((p for p in open_here if _identity(p) == same), None)
    if retried is None and len(open_here) >= MAX_OPEN_PROPOSALS:
        full = (
            f"{rel}#{row.key}: changed since you read it (expected rev {want.expect_rev}, it is "
            f"at rev {row.rev}), the merge did not land, and the section already has "
            f"{len(open_here)} open proposals, the most kept: your body is not kept. Read the "
            f"current content and patch with rev {row.rev}, or apply or drop some of them "
            "(`memkeeper proposals`)"
        )
        return _conflict(lost, full, merge=why, proposal=None)
    proposal = retried or ws.store.proposals.open_proposal(
        rel, row.key, want.expect_rev, mine, ws.agent, iso_utc(ws.now())
    )
    if retried is None:
        data = {"proposal": proposal.id, "base_rev": want.expect_rev, "rev": row.rev, "why": why}
        ws.record("proposal.opened", rel, row.key, data)
    what = (
        "your change and the one made since touch the same lines"
        if outcome == "conflict"
        else "git, which memkeeper merges with, cannot be run here"
    )
    message = (
        f"{rel}#{row.key}: changed since you read it (expected rev {want.expect_rev}, it is at "
        f"rev {row.rev}) and the merge did not land: {what}. Your body is kept as proposal "
        f"{proposal.id} — merge it into the current content and patch with rev {row.rev}, or "
        f"`memkeeper proposals apply {proposal.id} --expect-rev {row.rev}` to replace it"
    )
    return _conflict(lost, message, merge=why, proposal=proposal.id)


def _identity(proposal: Proposal) -> tuple[str, str, int, bytes, str]:
    """What makes two proposals one: a retry of the same body from the same read by the same
    agent is kept once."""
    return (proposal.path, proposal.section, proposal.base_rev, proposal.body, proposal.agent)


def _conflict(lost: Conflict, message: str, **extra: Any) -> Conflict:
    """``lost`` with another message and more fields."""
    return Conflict(message, **{**lost.fields, **extra})


def open_proposal(ws: Workspace, proposal_id: int) -> Proposal:
    """The open proposal ``proposal_id`` (read inside the caller's transaction), or
    ``Invalid`` saying why there is none."""
    found = ws.store.proposals.proposal(proposal_id)
    if found is None:
        raise Invalid(f"there is no proposal {proposal_id} — list them with: memkeeper proposals")
    if found.state != "open":
        raise Invalid(
            f"proposal {proposal_id} was {found.state} by {found.closed_by} at "
            f"{found.closed_at}; there is nothing left to do with it"
        )
    return found


def _close_proposal(ws: Workspace, rel: str, key: str, proposal: int, done: PatchResult) -> None:
    ws.store.proposals.close_proposal(proposal, "applied", ws.agent, iso_utc(ws.now()), done.rev)
    ws.record("proposal.applied", rel, key, {"proposal": proposal, "rev": done.rev})


def _apply(
    ws: Workspace,
    rel: str,
    data: bytes,
    row: SectionRow,
    state: FileState,
    new_body: bytes | None,
    dmp: str | None,
    base_rev: int | None = None,
    claim: str | None = None,
) -> PatchResult:
    from memkeeper.markdown import patchrules as patching

    if dmp is not None:
        patched = patching.apply_dmp(row.body.decode("utf-8"), dmp, f"{rel}#{row.key}")
        new_body = patched.encode("utf-8")
    assert new_body is not None
    start, following = ws.store.splice_context(rel, row.ord)
    cut = patching.splice(data, start, row.heading, row.body, new_body, row.level > 0)
    if ws.rule(rel).file_class == "generated":
        _check_regions(ws, rel, row.key, data, cut.data)
    heading, body = cut.heading, cut.body
    if not patching.body_is_inert(row.body, body, row.heading, following) and not (
        heading == row.heading
        and patching.keeps_structure(
            cut.data, cut.body_start, cut.body_end, row.body, following, preamble=not row.level
        )
    ):
        _check_structure(ws, rel, data, cut.data, row.key, cut.body_start, cut.body_end)
    if heading + body == row.heading + row.body:
        return PatchResult(
            rel, row.key, row.rev, row.hash or "", state.file_rev, state.file_hash, 0
        )._replace(base_rev=base_rev)
    crash.crashpoint("patch.before_write")
    new_state = FileState(state.file_rev + 1, digest(cut.data))
    hashes = (state.file_hash, new_state.file_hash)  # the index holds ``data``'s: it indexed it
    ws.replace_file(rel, data, cut.data, index=False, hashes=hashes)  # rows are put below
    crash.crashpoint("patch.after_write")
    new_row = row._replace(
        rev=row.rev + 1,
        hash=digest(heading + body),
        heading=heading,
        body=body,
        lines=count_lines(heading + body),
    )
    ws.store.put_sections(rel, [new_row])
    ws.put_file(rel, new_state, cut.data)
    event_data: dict[str, object] = {"rev": new_row.rev, "hash": new_row.hash}
    event_data |= {"file_rev": new_state.file_rev, **({"claim": claim} if claim else {})}
    if base_rev is None:
        event = ws.record("section.patched", rel, row.key, event_data)
    else:
        event_data.update(base_rev=base_rev, merged_into=row.rev)
        event = ws.record("section.merged", rel, row.key, event_data)
    crash.crashpoint("patch.before_commit")  # file and index written, not committed
    return PatchResult(
        rel,
        row.key,
        new_row.rev,
        new_row.hash or "",
        new_state.file_rev,
        new_state.file_hash,
        event.id,
        base_rev=base_rev,
    )


def _check_structure(
    ws: Workspace, rel: str, old: bytes, new: bytes, key: str, body_start: int, body_end: int
) -> None:
    from memkeeper.markdown.patchrules import structure_problem
    from memkeeper.markdown.sections import split

    problem = structure_problem(split(old, rel), split(new, rel), key, body_start, body_end)
    if problem is not None:
        raise Refused(f"{rel}#{key}: {problem}", reason="structure")


def _check_regions(ws: Workspace, rel: str, key: str, old: bytes, new: bytes) -> None:
    """A generated file takes patches outside its regions only (reason ``class``)."""
    from memkeeper.regions.markers import patch_problem

    problem = patch_problem(rel, old, new)
    if problem is not None:
        raise Refused(
            f"{rel}#{key}: {problem} — edit outside the markers; `memkeeper regen` "
            "renders what is inside them",
            reason="class",
        )


def _check_owner(ws: Workspace, rel: str, key: str) -> None:
    owners = ws.rule(rel, key).owners
    if owners is not None and ws.agent not in owners:
        raise Refused(
            f"{rel}#{key}: only {', '.join(owners)} may patch this section "
            f"(policy {POLICY_FILE}); you are {ws.agent!r}",
            reason="owner",
        )


def _check_claims(ws: Workspace, rel: str, key: str, claim: str | None) -> tuple[str, ...]:
    """Warnings from advisory claims; ``Refused`` for strict ones or a failed fence.
    One cheap query when nobody holds a claim and the write names none."""
    if claim is None and not ws.store.any_live_claim(ws.claim_now):
        return ()
    from memkeeper.ops.claimwrites import check_write

    return check_write(ws, rel, key, claim)


def _compare(
    rel: str, row: SectionRow, state: FileState, expect_rev: int, expect_file_hash: str | None
) -> Conflict | None:
    """The conflict a compare-and-swap at ``expect_rev`` loses with, if any."""
    if row.rev == expect_rev and expect_file_hash in (None, state.file_hash):
        return None
    stale_rev = row.rev != expect_rev
    reason: ConflictReason = "stale_revision" if stale_rev else "stale_file_hash"
    expected: dict[str, Any] = {"rev": expect_rev}
    if expect_file_hash is not None:
        expected["file_hash"] = expect_file_hash
    what = (
        f"expected rev {expect_rev}, it is at rev {row.rev}"
        if stale_rev
        else f"expected file hash {expect_file_hash}, it is {state.file_hash}"
    )
    return Conflict(
        f"{rel}#{row.key}: changed since you read it ({what}) — merge your edit into the "
        "current content and retry with the current rev",
        reason=reason,
        expected=expected,
        current=section_text(rel, state, row),
        retryable=True,
        recover=f"memkeeper patch '{rel}#{row.key}' --expect-rev {row.rev} --body-file FILE",
    )


_HEX = frozenset("0123456789abcdef")


def _file_hash(given: str) -> str:
    """A well-formed file hash (``sha256:`` and 64 hex digits, either case), lowercased;
    ``Invalid`` otherwise: comparing a malformed one could only ever be a conflict."""
    digits = given.removeprefix("sha256:").lower()
    if given.startswith("sha256:") and len(digits) == 64 and _HEX.issuperset(digits):
        return "sha256:" + digits
    raise Invalid(
        f"--expect-file-hash {given!r} is not a file hash — pass the file_hash that "
        "`memkeeper read` printed: sha256: followed by 64 hex digits"
    )


def _check_class(rel: str, file_class: str | None) -> None:
    if file_class is None:
        raise Refused(
            f"{rel}: not managed by the policy ({POLICY_FILE}) — memkeeper only "
            "patches managed files; add a rule for it",
            reason="unmanaged",
        )
    if file_class not in WRITABLE_CLASSES:
        hint = " — add an entry with memkeeper append" if file_class == "append-only" else ""
        raise Refused(f"{rel}: is {file_class}; patch is not allowed{hint}", reason="class")

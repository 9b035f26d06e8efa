"""Compare-and-swap patches of one section (docs/reference.md §4 "Patch rules"): the shell around
``markdown.patchrules``' pure rules.

Under the file's lock and inside one store transaction: index any change memkeeper did not
make, resolve the section, check owners and claims, compare ``expect_rev`` (and the file hash)
with the section *as it is on disk now*, then splice the body in, refuse any change to the
document's structure, write atomically and record the new revision with its event.
"""

from __future__ import annotations

from memkeeper.errors import Conflict, Invalid, Refused
from memkeeper.events import digest
from memkeeper.fs import files as fsio
from memkeeper.markdown import refs
from memkeeper.markdown.lines import count_lines
from memkeeper.names import POLICY_FILE
from memkeeper.ops.read import section_text
from memkeeper.records import FileState, PatchResult, SectionRow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.errors import ConflictReason
    from memkeeper.ops.workspace import Workspace

WRITABLE_CLASSES = ("section-owned", "generated")


def patch(
    ws: Workspace,
    ref: str,
    body: str | bytes | None = None,
    *,
    expect_rev: int,
    expect_file_hash: str | None = None,
    dmp: str | None = None,
    claim: str | None = None,
) -> PatchResult:
    """Compare-and-swap one section's body; see docs/reference.md §4 "Patch rules"."""
    path, ref_key = refs.split_ref(ref)
    if ref_key is None:
        raise Invalid(
            f"{ref}: patch needs a section — write PATH#KEY "
            f"(list them with: memkeeper sections {path})"
        )
    if (body is None) == (dmp is None):
        raise Invalid("patch needs exactly one of a body or a diff-match-patch payload")
    if expect_file_hash is not None:
        expect_file_hash = _file_hash(expect_file_hash)
    rel = ws.relpath(path)
    new_body = None
    if body is not None:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        from memkeeper.markdown.patchrules import text_bytes

        text_bytes(raw, "body")
        new_body = raw
    _ = ws.store  # a write: the store exists from here on (and keeps the verdicts cached)
    rule = ws.rule(rel)
    _check_class(rel, rule.file_class)
    return ws.retrying(
        rel, lambda: _attempt(ws, rel, ref_key, new_body, dmp, claim, expect_rev, expect_file_hash)
    )


def _attempt(
    ws: Workspace,
    rel: str,
    ref_key: str,
    new_body: bytes | None,
    dmp: str | None,
    claim: str | None,
    expect_rev: int,
    expect_file_hash: str | None,
) -> PatchResult:
    """One try of the patch under the file's lock (``retrying`` starts it over after a race)."""
    with ws.locked(rel):
        with ws.editing(rel) as data:
            assert data is not None
            row = ws.section_row(rel, ref_key)
            _check_owner(ws, rel, row.key)
            warnings = _check_claims(ws, rel, row.key, claim)
            state = ws.store.file_state(rel)
            assert state is not None
            lost = _compare(rel, row, state, expect_rev, expect_file_hash)
            if lost is None:
                done = _apply(ws, rel, data, row, state, new_body, dmp)
            else:
                ws.store.tally("conflict", ws.now())  # committed: the metrics count lost races
        if lost is not None:
            raise lost
        fsio.crashpoint("patch.after_commit")  # committed, lock still held
    return done._replace(warnings=warnings) if warnings else done


def _apply(
    ws: Workspace,
    rel: str,
    data: bytes,
    row: SectionRow,
    state: FileState,
    new_body: bytes | None,
    dmp: str | None,
) -> PatchResult:
    from memkeeper.markdown import patchrules as patching

    if dmp is not None:
        patched = patching.apply_dmp(row.body.decode("utf-8"), dmp, f"{rel}#{row.key}")
        new_body = patched.encode("utf-8")
    assert new_body is not None
    start = ws.store.bytes_before(rel, row.ord)
    cut = patching.splice(data, start, row.heading, row.body, new_body, row.level > 0)
    if ws.rule(rel).file_class == "generated":
        _check_regions(ws, rel, row.key, data, cut.data)
    heading, body = cut.heading, cut.body
    following = ws.store.heading_at(rel, row.ord + 1)
    if not patching.body_is_inert(row.body, body, row.heading, following):
        _check_structure(ws, rel, data, cut.data, row.key, cut.body_start, cut.body_end)
    if heading + body == row.heading + row.body:
        return PatchResult(
            rel, row.key, row.rev, row.hash or "", state.file_rev, state.file_hash, 0
        )
    fsio.crashpoint("patch.before_write")
    ws.replace_file(rel, data, cut.data, index=False)  # the index is updated row by row below
    fsio.crashpoint("patch.after_write")
    new_row = row._replace(
        rev=row.rev + 1,
        hash=digest(heading + body),
        heading=heading,
        body=body,
        lines=count_lines(heading + body),
    )
    new_state = FileState(state.file_rev + 1, digest(cut.data))
    ws.store.put_sections(rel, [new_row])
    ws.store.put_file(rel, new_state)
    event = ws.record(
        "section.patched",
        rel,
        row.key,
        {"rev": new_row.rev, "hash": new_row.hash, "file_rev": new_state.file_rev},
    )
    fsio.crashpoint("patch.before_commit")  # file and index written, not committed
    return PatchResult(
        rel,
        row.key,
        new_row.rev,
        new_row.hash or "",
        new_state.file_rev,
        new_state.file_hash,
        event.id,
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
    if claim is None and not ws.store.any_live_claim(ws.now()):
        return ()
    from memkeeper.ops.claims import check_write

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

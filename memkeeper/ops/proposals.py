"""Proposals: the bodies of ``patch --merge`` calls whose merge could not land
(docs/reference.md §4 "Merging stale patches"), kept so that nothing an agent wrote is lost.

``list_proposals`` and ``show`` read; ``apply`` patches the section with a proposal's body
(a compare-and-swap like any patch, at the rev the caller read) and closes it in the same
transaction; ``drop`` forgets one. Events ``proposal.applied`` and ``proposal.dropped``
(``proposal.opened`` is ``ops.patch``'s).
"""

from __future__ import annotations

from memkeeper.errors import Invalid
from memkeeper.events import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.coordination import Proposal
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import PatchResult


def list_proposals(ws: Workspace, *, closed: bool = False) -> list[Proposal]:
    """Open proposals, oldest first (closed ones too with ``closed``); none where there is
    no store yet (nothing is created)."""
    if not ws.has_store:
        return []
    return ws.store.proposals.proposals(closed=closed)


def show(ws: Workspace, proposal_id: int) -> dict[str, Any]:
    """One proposal with the section as it is now and a diff from it to the proposal."""
    import difflib

    from memkeeper.ops.read import read

    found = _proposal(ws, proposal_id)
    payload: dict[str, Any] = found.to_json(body=True)
    try:
        current = read(ws, found.ref)
    except Invalid:  # the section is gone: the proposal can only be dropped
        payload["current"] = None
        payload["diff"] = ""
        return payload
    payload["current"] = {"rev": current.rev, "hash": current.hash, "content": current.content}
    diff = difflib.unified_diff(
        current.content.splitlines(keepends=True),
        found.text.splitlines(keepends=True),
        f"{found.ref} (rev {current.rev}, now)",
        f"proposal {found.id} (by {found.agent}, from rev {found.base_rev})",
    )
    payload["diff"] = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    return payload


def apply(ws: Workspace, proposal_id: int, *, expect_rev: int) -> tuple[Proposal, PatchResult]:
    """Patch the proposal's section with its body at ``expect_rev`` (a ``Conflict`` when
    stale, as for any patch) and close it as applied."""
    from memkeeper.ops.patch import patch

    found = _proposal(ws, proposal_id)
    result = patch(ws, found.ref, found.body, expect_rev=expect_rev, proposal=found.id)
    closed = ws.store.proposals.proposal(found.id)
    assert closed is not None
    return closed, result


def drop(ws: Workspace, proposal_id: int) -> Proposal:
    """Forget an open proposal (its body stays in the store, closed as ``dropped``)."""
    from memkeeper.ops.patch import open_proposal

    _proposal(ws, proposal_id)

    def once() -> Proposal:
        with ws.store.writing():
            found = open_proposal(ws, proposal_id)
            ws.store.proposals.close_proposal(found.id, "dropped", ws.agent, iso_utc(ws.now()))
            ws.record("proposal.dropped", found.path, found.section, {"proposal": found.id})
        return found

    found = ws.again(once)
    dropped = ws.store.proposals.proposal(found.id)
    assert dropped is not None
    return dropped


def _proposal(ws: Workspace, proposal_id: int) -> Proposal:
    if not ws.has_store:
        raise Invalid(
            f"there is no proposal {proposal_id} — nothing has been proposed under "
            f"{ws.top} (no .memkeeper/ state)"
        )
    found = ws.store.proposals.proposal(proposal_id)
    if found is None:
        raise Invalid(f"there is no proposal {proposal_id} — list them with: memkeeper proposals")
    return found

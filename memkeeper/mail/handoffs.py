"""What the taker of a claim is told with it (docs/reference.md §4.28, "Handoff"): the
predecessor's words — its abandon's reason and ``--message`` — and where its work stood.
Pure.

A takeover of an abandoned claim posts this, in the takeover's transaction, as a ``handoff``
message from the predecessor to the taker: the taker's inbox keeps it, its channel delivers
it once. An expired claim left no words; its taker is told where the work stood all the same.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.claims.lifecycle import ClaimRecord


def handoff_text(old: ClaimRecord, new_id: str) -> str:
    """The message to whoever took ``old`` over as claim ``new_id``."""
    targets = ", ".join(old.targets)
    how = (
        "abandoned it"
        if old.state in ("abandoned", "taken-over") and old.reason
        else "let it expire"
    )
    lines = [f"you took over claim {old.id} on {targets} as {new_id}; {old.agent} {how}."]
    if old.reason:
        lines.append(f"Why: {old.reason.strip()}")
    evidence = old.evidence
    if evidence is not None and evidence.reported:
        lines.append(f"Their message: {evidence.reported.strip()}")
    if evidence is not None and evidence.head:
        lines.append(
            f"Their work stood at commit {evidence.head} ({evidence.changed_count} files changed)."
        )
    return "\n".join(lines)

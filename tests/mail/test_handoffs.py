"""What a taker is told with the claim it took over: whose it was, why it was left, the
leaver's message and where the work stood — or that it was left to expire."""

from __future__ import annotations

from dataclasses import replace

from memkeeper.claims.evidence import Evidence
from memkeeper.claims.lifecycle import ClaimRecord
from memkeeper.claims.plan import make_plan
from memkeeper.mail.handoffs import handoff_text


def record(**changes: object) -> ClaimRecord:
    base = ClaimRecord(
        "c4", "codex:t2", "taken-over", 3, 7, "write", ("src/api/",), "ship", make_plan(),
        "2026-12-07T00:00:00Z",
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


def test_an_abandoned_claims_taker_hears_why_the_message_and_where_it_stood() -> None:
    found = Evidence("abc123", "base0", ("a.py",), 1, "", (), (), "t", "start from the migration")
    text = handoff_text(record(reason="blocked on the schema", evidence=found), "c9")
    assert text.splitlines() == [
        "you took over claim c4 on src/api/ as c9; codex:t2 abandoned it.",
        "Why: blocked on the schema",
        "Their message: start from the migration",
        "Their work stood at commit abc123 (1 files changed).",
    ]


def test_an_expired_claims_taker_hears_it_was_left_to_expire() -> None:
    assert handoff_text(record(), "c9") == (
        "you took over claim c4 on src/api/ as c9; codex:t2 let it expire."
    )

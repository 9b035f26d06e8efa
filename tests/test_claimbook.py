"""``Memory.claims``: called, the live claims as before; its verbs reach ``ops.claimlife``."""

from __future__ import annotations

from pathlib import Path

from memkeeper import Memory


def test_calling_it_still_lists_the_live_claims(tmp_path: Path) -> None:
    (tmp_path / ".memkeeper.yaml").write_text("version: 1\nfiles: []\n")
    memory = Memory(tmp_path, "a")
    try:
        claim = memory.claims.take("src/", objective="x", tests=["tests/test_x.py"])
        assert memory.claims() == [claim]
        assert memory.claims.record(claim.id).plan.tests == ("tests/test_x.py",)
    finally:
        memory.close()

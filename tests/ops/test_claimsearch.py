"""``search_claims`` (``claims --search``) through the Python API on both stores: live claims
ranked by the meaning of their objective; a clear error for an empty text, a limit below one,
and without the ``semantic`` extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memkeeper import Invalid, Memory
from tests.ops.test_claimsimilar import RETRY, THEME, other

__all__ = ["other"]  # the fixture: agent-b on the same root and store


def test_search_ranks_live_claims_by_meaning_of_their_objective(
    memory: Memory, other: Memory
) -> None:
    retry = memory.claim("src/http/", objective=RETRY)
    theme = other.claim("src/ui/", objective=THEME)
    other.claim("src/x/")  # no objective: never found
    found = memory.search_claims("retry behaviour")
    assert [m.claim.id for m in found] == [retry.id, theme.id]
    assert found[0].score > found[1].score
    assert [m.claim.id for m in memory.search_claims("retry behaviour", limit=1)] == [retry.id]
    memory.release(retry.id)
    assert [m.claim.id for m in memory.search_claims("retry behaviour")] == [theme.id]


@pytest.mark.parametrize(
    ("text", "limit", "named"),
    [("  ", 10, "needs words to look for"), ("retry", 0, "--limit must be 1 or more, not 0")],
)
def test_search_refuses_an_empty_text_and_a_limit_below_one(
    memory: Memory, text: str, limit: int, named: str
) -> None:
    with pytest.raises(Invalid, match=named):
        memory.search_claims(text, limit)


def test_search_without_the_extra_says_how_to_install_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(Invalid, match=r"install it with: pip install 'memkeeper\[semantic\]'"):
        memory.search_claims("retry")


def test_a_root_without_a_store_finds_nothing_and_makes_no_store(tmp_path: Path) -> None:
    (tmp_path / ".memkeeper.yaml").write_text("version: 1\n")
    bare = Memory.open(tmp_path, agent="a")
    try:
        assert bare.search_claims("retry") == []
    finally:
        bare.close()
    assert not (tmp_path / ".memkeeper").exists()

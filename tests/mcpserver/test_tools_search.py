"""``memory_claims`` with ``search``: the live claims ranked by meaning as the CLI's JSON, and
an ``invalid`` result naming the install line without the ``semantic`` extra."""

from __future__ import annotations

import sys

from memkeeper.mcpserver import tools

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pytest

    from memkeeper import Memory


def test_search_is_the_clis_json_with_each_claims_score(memory: Memory) -> None:
    memory.claim("src/http/", objective="fix retry backoff in the http client")
    found = tools.answer(lambda: tools.search_claims(memory, "retry behaviour", 5))
    assert (found["status"], found["search"]) == ("ok", "retry behaviour")
    matches = found["matches"]
    assert isinstance(matches, list)
    assert [m["objective"] for m in matches] == ["fix retry backoff in the http client"]
    assert 0 < matches[0]["score"] <= 1


def test_search_without_the_extra_is_an_invalid_result(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    got = tools.answer(lambda: tools.search_claims(memory, "retry", 5))
    assert got["status"] == "invalid"
    assert "pip install 'memkeeper[semantic]'" in str(got["message"])

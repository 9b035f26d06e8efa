"""Claims compared by meaning through ``main(argv)``, in this process: the warning in ``claim``'s
answer (text and JSON), ``claims --search TEXT [--limit N]``, and exit 2 with the install line
without the ``semantic`` extra."""

from __future__ import annotations

import sys

from tests.cli.test_claims import as_agent

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pytest

    from tests.conftest import Cli


def test_a_similar_objective_is_a_warning_in_the_claims_answer(cli: Cli) -> None:
    first = as_agent(
        cli, "a", "claim", "src/http/", "--objective", "fix retry backoff in the http client"
    )
    run = cli(
        "--agent", "b", "claim", "src/fetch/",
        "--objective", "make request timeouts configurable in the fetcher",
    )  # fmt: skip
    assert run.code == 0
    lines = run.stdout.splitlines()
    assert lines[0].startswith("granted ")
    assert lines[1].startswith(
        f"warning: objective similar to claim {first.json['id']} of a (score 0."
    )
    unrelated = as_agent(
        cli, "c", "claim", "src/ui/", "--objective", "dark mode for the settings page"
    )
    assert unrelated.json["warnings"] == []


def test_claims_search_ranks_live_claims_by_meaning(cli: Cli) -> None:
    retry = as_agent(
        cli, "a", "claim", "src/http/", "--objective", "fix retry backoff in the http client"
    )
    theme = as_agent(cli, "b", "claim", "src/ui/", "--objective", "dark mode for the settings page")
    found = cli("claims", "--search", "retry behaviour", "--json")
    assert found.code == 0
    assert found.json["search"] == "retry behaviour"
    ids = [m["id"] for m in found.json["matches"]]
    assert ids == [retry.json["id"], theme.json["id"]]
    assert found.json["matches"][0]["score"] > found.json["matches"][1]["score"]
    assert found.json["matches"][0]["objective"] == "fix retry backoff in the http client"
    one = cli("claims", "--search", "retry behaviour", "--limit", "1")
    assert one.stdout.startswith("live claims by similarity to 'retry behaviour': 1\n  0.")
    assert one.stdout.rstrip().endswith(": fix retry backoff in the http client")


def test_claims_search_without_the_extra_is_exit_2_with_the_install_line(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if it were not installed
    run = cli("claims", "--search", "retry", "--json")
    assert run.code == 2
    assert run.json["status"] == "invalid"
    assert "pip install 'memkeeper[semantic]'" in run.json["message"]
    assert cli("claims", "--json").code == 0  # the plain list needs no extra


def test_a_bad_limit_and_an_empty_search_are_exit_2(cli: Cli) -> None:
    assert cli("claims", "--search", "retry", "--limit", "0").code == 2
    assert cli("claims", "--search", "retry", "--limit", "x").code == 2
    assert cli("claims", "--search", " ").code == 2
    alone = cli("claims", "--limit", "3")
    assert alone.code == 2
    assert "--limit goes with --search TEXT" in alone.stderr

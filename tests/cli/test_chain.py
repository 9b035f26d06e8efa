"""``memkeeper compact`` and ``verify [--full]`` through ``main``: what they print for people
and as JSON; ``events`` saying on stderr where a compacted log starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.fs import keyring

if TYPE_CHECKING:
    from tests.conftest import Cli


@pytest.fixture
def keyed(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    config = str(tmp_path / "config")
    monkeypatch.setenv("XDG_CONFIG_HOME", config)
    keyring.create({"XDG_CONFIG_HOME": config}, "human", "alice")
    assert cli("init").code == 0
    return cli


def emitted(cli: Cli, count: int) -> None:
    for n in range(count):
        assert cli("emit", "task.done", "--data", f'{{"n": {n}}}').code == 0


def bound(sample: Path, text: str) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + text)


def test_verify_says_what_it_checked_after_the_checkpoint(keyed: Cli) -> None:
    emitted(keyed, 3)
    assert keyed("verify", "--json").json["checkpoint"] == 3
    emitted(keyed, 1)
    done = keyed("verify")
    assert done.code == 0
    assert "event chain of 4 event(s) intact" in done.stdout
    assert "1 event(s) checked after the checkpoint at event 3" in done.stdout
    full = keyed("verify", "--full", "--json").json
    assert (full["checked"], full["since"], full["events"]) == (4, 0, 4)


def test_verify_without_a_key_says_no_checkpoint_was_written(cli: Cli) -> None:
    assert cli("init").code == 0
    emitted(cli, 1)
    done = cli("verify")
    assert "no checkpoint was written: this process has no key" in done.stdout


def test_compact_prints_where_the_log_starts_and_events_says_so(keyed: Cli, sample: Path) -> None:
    bound(sample, "events:\n  keep: 2\n")
    emitted(keyed, 5)
    done = keyed("compact")
    assert done.code == 0
    assert done.stdout == "compacted 3 event(s): the log starts after event 3\n"
    assert keyed("compact").stdout == "nothing to compact: the log starts after event 3\n"
    listed = keyed("events", "--json")
    assert [line.count('"id"') for line in listed.stdout.splitlines()] == [1, 1]
    assert "events up to 3 were compacted into a checkpoint" in listed.stderr
    assert keyed("events", "--since", "3").stderr == ""
    assert "events up to 3 were compacted" in keyed("verify", "--full").stdout

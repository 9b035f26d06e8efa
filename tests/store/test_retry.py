"""What ``StoreRetry`` promises: it is no ``MemkeeperError`` (no handler of memkeeper's own
errors takes it for a failure to report), it is the very class the etcd store raises, its
module loads no etcd client (the SQLite path imports it), and the loop it is meant for —
``Workspace.again`` — runs the whole operation again on it, gives up as ``store_busy``, and
lets every other error through at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure, MemkeeperError
from memkeeper.ops import workspace
from memkeeper.ops.workspace import Workspace
from memkeeper.store import etcdstore
from memkeeper.store.retry import StoreRetry


def test_a_store_retry_is_no_memkeeper_error() -> None:
    assert issubclass(StoreRetry, Exception)
    assert not issubclass(StoreRetry, MemkeeperError)  # the CLI boundary's expected errors


def test_the_etcd_store_raises_the_class_the_local_path_catches() -> None:
    assert etcdstore.StoreRetry is StoreRetry
    assert "StoreRetry" in etcdstore.__all__


def test_its_module_and_the_local_store_load_no_etcd_client() -> None:
    probe = (
        "import sys, memkeeper.store.retry, memkeeper.store.sqlite, memkeeper.ops.workspace; "
        "print(sorted(m for m in sys.modules if m.startswith('memkeeper.store.etcd')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path, "agent-a")  # opens no store: ``again`` needs none


def test_again_runs_the_whole_operation_until_it_is_not_asked_to(ws: Workspace) -> None:
    calls: list[int] = []

    def operation() -> str:
        calls.append(len(calls))
        if len(calls) < 3:
            raise StoreRetry("another writer got in first")
        return "done"

    assert ws.again(operation) == "done"
    assert calls == [0, 1, 2]


def test_again_gives_up_as_store_busy_after_its_attempts(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace, "STORE_ATTEMPTS", 4)
    calls: list[int] = []

    def always_beaten() -> None:
        calls.append(1)
        raise StoreRetry("another writer got in first")

    with pytest.raises(EnvironmentFailure) as caught:
        ws.again(always_beaten)
    assert len(calls) == 4
    assert caught.value.fields["reason"] == "store_busy"
    assert "nothing was changed" in caught.value.message
    assert caught.value.__suppress_context__  # no StoreRetry traceback in the report


def test_again_lets_any_other_error_through_at_once(ws: Workspace) -> None:
    calls: list[int] = []

    def fails() -> None:
        calls.append(1)
        raise EnvironmentFailure("the disk is full")

    with pytest.raises(EnvironmentFailure, match="the disk is full"):
        ws.again(fails)
    assert calls == [1]

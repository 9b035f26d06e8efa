"""The dashboard's work queue (``GET /api/work``): who works on what — the claimed items with
their holder, claim, since when and the watchdog's idle mark — the ready list in ``work next``'s
order, and the counts of each state; an item whose claim was released elsewhere shows back in
the ready list; read-only: nothing to POST."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the dashboard needs memkeeper[serve]")

from starlette.testclient import TestClient

from memkeeper import Memory
from memkeeper.dashboard.app import build
from memkeeper.ops.idleclaims import mark_idle
from tests.conftest import run_main

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WORKER = "claude-code:s1"


@pytest.fixture
def root(sample: Path) -> Path:
    assert run_main(sample, "init").code == 0
    return sample


@pytest.fixture
def worker(root: Path) -> Iterator[Memory]:
    memory = Memory.open(root, agent=WORKER)
    yield memory
    memory.close()


@pytest.fixture
def client(root: Path) -> Iterator[TestClient]:
    app = build(str(root), TOKEN, agent="human", poll_s=0.02)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def test_an_empty_queue(client: TestClient) -> None:
    got = client.get("/api/work", headers=AUTH)
    assert got.status_code == 200, got.text
    assert got.json() == {
        "status": "ok",
        "working": [],
        "ready": [],
        "blocked": [],
        "counts": {"open": 0, "claimed": 0, "ready": 0, "done": 0, "failed": 0, "blocked": 0},
    }


def test_who_works_on_what_the_ready_list_in_order_and_the_counts(
    client: TestClient, worker: Memory
) -> None:
    worker.work.add("low", paths=["docs/"])
    worker.work.add("urgent", paths=["src/"], priority=5)
    worker.work.add("later", after=[2])
    worker.work.add("also", priority=1)
    item, claim = worker.work.next()  # "urgent"
    worker.work.add("gone")
    taken, _ = worker.work.next()  # "also"
    worker.work.done(taken.id)
    worker.work.add("doomed", priority=9)
    doomed, _ = worker.work.next()
    worker.work.fail(doomed.id, "cannot")
    got = client.get("/api/work", headers=AUTH).json()
    [working] = got["working"]
    assert (working["id"], working["title"], working["agent"]) == (item.id, "urgent", WORKER)
    assert (working["claim"], working["paths"], working["idle"]) == (claim.id, ["src/"], None)
    assert working["since"].endswith("Z")
    assert [(r["position"], r["title"]) for r in got["ready"]] == [(1, "low"), (2, "gone")]
    assert got["counts"] == {
        "open": 3,
        "claimed": 1,
        "ready": 2,
        "done": 1,
        "failed": 1,
        "blocked": 0,
    }


def test_an_idle_claim_is_marked_on_its_item(client: TestClient, worker: Memory) -> None:
    worker.work.add("stuck", paths=["src/"])
    _, claim = worker.work.next()
    event = mark_idle(worker.workspace, claim, 1500.0, 0.0)
    assert event is not None
    [working] = client.get("/api/work", headers=AUTH).json()["working"]
    assert working["idle"] == {"since": event.ts, "idle_s": 1500.0, "event": event.id}


def test_an_item_whose_claim_was_released_elsewhere_is_ready_again(
    client: TestClient, worker: Memory
) -> None:
    worker.work.add("one", paths=["src/"])
    _, claim = worker.work.next()
    worker.release(claim.id)
    got = client.get("/api/work", headers=AUTH).json()
    assert (got["working"], [r["title"] for r in got["ready"]]) == ([], ["one"])


def test_it_needs_the_token_and_takes_no_post(client: TestClient) -> None:
    assert client.get("/api/work").status_code == 401
    assert client.post("/api/work", json={}, headers=AUTH).status_code == 405

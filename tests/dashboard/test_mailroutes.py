"""The dashboard's messages: the newest listed with each named recipient's state, and a
message sent into an agent's inbox by POST — as the dashboard's identity, with the token in
the header; a bad body is a clear 4xx that sends nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the dashboard needs memkeeper[serve]")

from starlette.testclient import TestClient

from memkeeper import Memory
from memkeeper.dashboard.app import build
from tests.conftest import run_main

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
AGENT = "claude-code:s1"


@pytest.fixture
def root(sample: Path) -> Path:
    assert run_main(sample, "init").code == 0
    return sample


@pytest.fixture
def client(root: Path) -> Iterator[TestClient]:
    app = build(str(root), TOKEN, agent="human", poll_s=0.02)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def test_a_human_sends_a_message_into_an_agents_inbox(client: TestClient, root: Path) -> None:
    sent = client.post(
        "/api/messages", json={"to": AGENT, "text": "stop the deploy", "about": ""}, headers=AUTH
    )
    assert sent.status_code == 200, sent.text
    message = sent.json()["message"]
    assert (message["sender"], message["to"], message["about"]) == ("human", AGENT, None)
    agent = Memory.open(root, agent=AGENT)
    try:
        [got] = agent.mail.inbox()
        assert (got.sender, got.text) == ("human", "stop the deploy")
        agent.mail.ack(got.id)
    finally:
        agent.close()
    listed = client.get("/api/messages", headers=AUTH).json()["messages"]
    assert [(m["id"], m["to"], m["acked_at"] is not None) for m in listed] == [
        (message["id"], AGENT, True)
    ]


def test_the_newest_come_first_and_one_to_all_has_no_recipients_state(
    client: TestClient, root: Path
) -> None:
    for to, text in ((AGENT, "one"), ("all", "two")):
        assert client.post("/api/messages", json={"to": to, "text": text}, headers=AUTH).is_success
    listed = client.get("/api/messages", headers=AUTH).json()["messages"]
    assert [(m["text"], m["acked_at"]) for m in listed] == [("two", None), ("one", None)]


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        ({"to": AGENT}, 400, "give 'to'"),
        ({"to": 3, "text": "x"}, 400, "give 'to'"),
        ({"to": AGENT, "text": "x", "about": 7}, 400, "'about'"),
        ({"to": AGENT, "text": " "}, 400, "the message is empty"),
        ({"to": AGENT, "text": "x", "about": "c404"}, 400, "no claim, file or section"),
        ({"to": "two words", "text": "x"}, 400, "is not an identity"),
    ],
)
def test_a_bad_message_is_refused_and_nothing_is_sent(
    client: TestClient, body: dict[str, object], code: int, says: str
) -> None:
    refused = client.post("/api/messages", json=body, headers=AUTH)
    assert refused.status_code == code
    assert says in refused.json()["message"]
    assert client.get("/api/messages", headers=AUTH).json()["messages"] == []


def test_sending_needs_the_token_in_the_header(client: TestClient) -> None:
    url = f"/api/messages?token={TOKEN}"
    assert client.post(url, json={"to": AGENT, "text": "x"}).status_code == 401
    assert client.get("/api/messages").status_code == 401
    assert client.get("/api/messages", headers=AUTH).json()["messages"] == []

"""The dashboard's HTTP API in process (Starlette's TestClient, lifespan included): the token
on every request, each endpoint's JSON, resolving through POST, and hostile requests — each a
clear 4xx JSON answer that changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the dashboard needs memkeeper[serve]")

from starlette.testclient import TestClient

from memkeeper import Memory
from memkeeper.dashboard.app import MAX_BODY, build
from tests.conftest import run_main, tree_bytes

TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ENDPOINTS = (
    "/api/status",
    "/api/claims",
    "/api/claim-records",
    "/api/meetings",
    "/api/files",
    "/api/sections?path=CLAUDE.md",
    "/api/events",
    "/api/reconciliations",
    "/api/metrics",
)


@pytest.fixture
def root(sample: Path) -> Path:
    assert run_main(sample, "init").code == 0
    return sample


@pytest.fixture
def client(root: Path) -> Iterator[TestClient]:
    app = build(str(root), TOKEN, agent="human", poll_s=0.02)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def open_reconciliation(root: Path) -> int:
    """A hand edit inside the claims region of memory/status.md, noticed by regen."""
    assert run_main(root, "regen").code == 0
    path = root / "memory/status.md"
    path.write_text(path.read_text().replace("_No live claims._", "a hand edit", 1))
    assert run_main(root, "regen").code == 0
    listed = run_main(root, "reconcile", "list", "--json").json["reconciliations"]
    rec_id: int = listed[0]["id"]
    return rec_id


@pytest.mark.parametrize("path", ENDPOINTS)
def test_every_request_needs_the_token(client: TestClient, path: str) -> None:
    bare = client.get(path)
    assert bare.status_code == 401
    assert bare.json()["status"] == "unauthorized"
    assert "token" in bare.json()["message"]
    wrong = client.get(path, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert client.get(path, headers=AUTH).status_code == 200


@pytest.mark.parametrize("path", ["/", f"/?token={TOKEN}", "/static/app.js", "/static/app.css"])
def test_the_page_and_its_files_carry_no_secret_and_need_no_token(
    client: TestClient, root: Path, path: str
) -> None:
    page = client.get(path, follow_redirects=False)
    assert page.status_code == 200
    assert TOKEN not in page.text
    assert str(root.resolve()) not in page.text
    assert "{{" not in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/", f"/?token={TOKEN}", f"/api/status?token={TOKEN}"])
def test_the_token_never_goes_into_a_cookie(client: TestClient, path: str) -> None:
    # cookies ignore ports: one set here would go to every other server on this host
    assert "set-cookie" not in client.get(path).headers


def test_a_cookie_holding_the_token_authenticates_nothing(client: TestClient) -> None:
    client.cookies.set("memkeeper_token", TOKEN)
    assert client.get("/api/status").status_code == 401


def test_a_post_needs_the_header_not_the_cookie(client: TestClient, root: Path) -> None:
    rec_id = open_reconciliation(root)
    client.get(f"/api/status?token={TOKEN}")
    refused = client.post(f"/api/reconciliations/{rec_id}/resolve", json={"how": "keep-human"})
    assert refused.status_code == 401
    assert run_main(root, "reconcile", "list", "--json").json["reconciliations"]


def test_status_claims_and_metrics(client: TestClient, root: Path) -> None:
    assert run_main(root, "claim", "CLAUDE.md#build", "--ttl", "120", "--agent", "a1").code == 0
    status = client.get("/api/status", headers=AUTH).json()
    assert status["status"] == "ok"
    assert status["root"] == str(root.resolve())
    assert {f["path"] for f in status["files"]} >= {"CLAUDE.md", "memory/decisions.md"}
    claims = client.get("/api/claims", headers=AUTH).json()
    (claim,) = claims["claims"]
    assert (claim["agent"], claim["mode"], claim["token"]) == ("a1", "write", 1)
    assert claims["waiters"] == []
    assert claims["now"].endswith("Z")
    metrics = client.get("/api/metrics", headers=AUTH).json()
    assert metrics["claims_held"] == 1
    assert metrics["contention"] == []


def test_claim_records_by_state_with_their_evidence(client: TestClient, root: Path) -> None:
    memory = Memory.open(root, agent="a1")
    done = memory.claims.take("src/", objective="retry")
    memory.claims.complete(done.id, evidence="tests passed")
    memory.claims.abandon(memory.claim("docs/").id, "blocked")
    memory.claim("memory/")
    memory.close()
    answer = client.get("/api/claim-records", headers=AUTH).json()
    assert answer["by_state"] == {"completed": 1, "abandoned": 1, "active": 1}
    newest, abandoned, completed = answer["records"]
    assert (newest["state"], abandoned["reason"]) == ("active", "blocked")
    assert completed["evidence"]["reported"]["self_reported"] is True


def test_meetings_with_their_deadlines_and_release_requests_with_answers(
    client: TestClient, root: Path
) -> None:
    a, b = "claude-code:s1", "codex:t2"
    assert run_main(root, "claim", "docs/", "--agent", a).code == 0
    assert run_main(root, "claim", "docs/", "--request-release", "--agent", b).code == 5
    opened = run_main(root, "meeting", "open", "--with", a, "--targets", "docs/", "--agent", b)
    assert opened.code == 0
    assert run_main(root, "answer", "1", "--reason", "busy", "--eta", "60", "--agent", a).code == 0
    seen = client.get("/api/meetings", headers=AUTH).json()
    (meeting,) = seen["meetings"]
    assert (meeting["id"], meeting["state"], meeting["participants"]) == (1, "open", [b, a])
    assert meeting["deadline"].endswith("Z")
    (request,) = seen["release_requests"]
    assert (request["from"], request["to"], request["claim"]) == (b, a, "c1")
    assert (request["answer"]["reason"], request["answer"]["eta_s"]) == ("busy", 60)


def test_files_and_a_section_with_its_history(client: TestClient, root: Path) -> None:
    memory = Memory.open(root, agent="a2")
    read = memory.read("CLAUDE.md#build")
    memory.patch("CLAUDE.md#build", read.content + "- more\n", expect_rev=read.rev)
    files = {f["path"]: f for f in client.get("/api/files", headers=AUTH).json()["files"]}
    assert files["memory/scratch/agent-a.md"] == {
        "path": "memory/scratch/agent-a.md",
        "class": "private",
        "sections": [],
    }
    build = next(s for s in files["CLAUDE.md"]["sections"] if s["key"].endswith("build"))
    assert build["rev"] == 2
    assert build["last"]["actor"] == "a2"
    assert build["last"]["type"] == "section.patched"
    one = client.get(f"/api/sections?path=CLAUDE.md&key={build['key']}", headers=AUTH).json()
    assert one["content"].endswith("- more\n")
    assert [e["type"] for e in one["history"]] == ["section.patched"]
    listed = client.get("/api/sections?path=CLAUDE.md", headers=AUTH).json()
    assert [s["key"] for s in listed["sections"]] == [
        s["key"] for s in files["CLAUDE.md"]["sections"]
    ]


def test_one_file_answers_as_the_listing_shows_it(client: TestClient, root: Path) -> None:
    memory = Memory.open(root, agent="a2")
    ref = "memory/architecture.md#storage"
    read = memory.read(ref)
    memory.patch(ref, read.content + "- more\n", expect_rev=read.rev)
    listed = client.get("/api/files", headers=AUTH).json()["files"]
    assert len(listed) >= 6
    for entry in listed:
        one = client.get(f"/api/sections?path={entry['path']}", headers=AUTH).json()
        assert one == {"status": "ok", **{k: entry[k] for k in ("path", "class", "sections")}}


# Paths a policy glob (``memory/**``) matches that the walk for managed files never reaches.
WALK_SKIPS = [
    ("memory/node_modules/notes.md", "file"),
    ("memory/.venv/notes.md", "file"),
    ("memory/__pycache__/notes.md", "file"),
    ("memory/.notes.md.memkeeper-123.tmp", "file"),  # a killed writer's temp
    ("memory/link.md", "symlink"),
    ("README.md", "unmanaged"),
]


@pytest.mark.parametrize(("rel", "how"), WALK_SKIPS)
def test_a_path_the_walk_skips_is_not_a_managed_file(
    client: TestClient, root: Path, rel: str, how: str
) -> None:
    target = root / rel
    if how == "file":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# Notes\n\nhere\n")
    elif how == "symlink":
        target.symlink_to("architecture.md")
    assert target.is_file()
    listed = [f["path"] for f in client.get("/api/files", headers=AUTH).json()["files"]]
    assert rel not in listed
    answer = client.get(f"/api/sections?path={rel}", headers=AUTH)
    assert answer.status_code == 404, answer.text
    assert answer.json() == {"status": "not_found", "message": f"{rel} is not a managed file"}


def test_a_path_through_a_symlinked_directory_answers_for_the_file_it_reaches(
    client: TestClient, root: Path
) -> None:
    (root / "memory/real").mkdir()
    (root / "memory/real/notes.md").write_text("# Notes\n\nhere\n")
    (root / "memory/alias").symlink_to("real", target_is_directory=True)
    listed = [f["path"] for f in client.get("/api/files", headers=AUTH).json()["files"]]
    assert "memory/alias/notes.md" not in listed
    answer = client.get("/api/sections?path=memory/alias/notes.md", headers=AUTH).json()
    assert answer["path"] == "memory/real/notes.md"
    (root / "memory/pub").symlink_to("scratch", target_is_directory=True)
    private = client.get("/api/sections?path=memory/pub/agent-a.md", headers=AUTH)
    assert (private.json()["path"], private.json()["class"]) == (
        "memory/scratch/agent-a.md",
        "private",
    )
    assert "batching" not in private.text  # a private file's text is never served
    text = client.get(
        "/api/sections?path=memory/pub/agent-a.md&key=agent-a-scratchpad", headers=AUTH
    )
    assert text.status_code == 403
    assert "batching" not in text.text


def test_a_new_file_and_a_policy_change_show_at_once(client: TestClient, root: Path) -> None:
    def listed(endpoint: str) -> set[str]:
        return {f["path"] for f in client.get(endpoint, headers=AUTH).json()["files"]}

    assert "memory/new.md" not in listed("/api/files")
    (root / "memory/new.md").write_text("# New\n\nhere\n")
    assert "memory/new.md" in listed("/api/files") & listed("/api/status")
    policy = root / ".memkeeper.yaml"
    rule = "  - path: memory/**\n    class: section-owned\n"
    assert rule in policy.read_text()
    policy.write_text(policy.read_text().replace(rule, ""))
    for endpoint in ("/api/files", "/api/status"):
        assert {"memory/new.md", "memory/architecture.md"}.isdisjoint(listed(endpoint))
        assert "memory/decisions.md" in listed(endpoint)
    gone = client.get("/api/sections?path=memory/new.md", headers=AUTH)
    assert gone.status_code == 404


def test_events_page_through_the_log(client: TestClient, root: Path) -> None:
    for n in range(3):
        assert run_main(root, "emit", "test.ping", "--data", json.dumps({"n": n})).code == 0
    first = client.get("/api/events?since=0&limit=2", headers=AUTH).json()
    assert [e["data"]["n"] for e in first["events"]] == [0, 1]
    rest = client.get(f"/api/events?since={first['next_since']}", headers=AUTH).json()
    assert [e["data"]["n"] for e in rest["events"]] == [2]


def test_a_reconciliation_is_listed_with_its_diff_and_resolved_by_post(
    client: TestClient, root: Path
) -> None:
    rec_id = open_reconciliation(root)
    (listed,) = client.get("/api/reconciliations", headers=AUTH).json()["reconciliations"]
    assert listed["id"] == rec_id
    assert "+a hand edit" in listed["diff"]
    done = client.post(
        f"/api/reconciliations/{rec_id}/resolve", json={"how": "keep-human"}, headers=AUTH
    )
    assert done.status_code == 200
    assert done.json()["reconciliation"]["resolution"] == "keep-human"
    assert done.json()["reconciliation"]["resolved_by"] == "human"
    assert run_main(root, "reconcile", "list", "--json").json["reconciliations"] == []


def test_the_contention_audit_says_who_waited_on_whom(client: TestClient, root: Path) -> None:
    assert run_main(root, "claim", "CLAUDE.md#build", "--ttl", "60", "--agent", "a1").code == 0
    waited = run_main(root, "claim", "CLAUDE.md#build", "--wait", "0.3", "--agent", "a2")
    assert waited.code == 5
    (wait,) = client.get("/api/metrics", headers=AUTH).json()["contention"]
    assert (wait["agent"], wait["outcome"]) == ("a2", "timeout")
    assert [w["agent"] for w in wait["waited_on"]] == ["a1"]
    assert 0.2 <= wait["waited_s"] < 5


HOSTILE = [
    ("get", "/api/sections?path=../outside.md", None, 400, "invalid"),
    ("get", "/api/sections?path=memory/scratch/agent-a.md&key=x", None, 403, "refused"),
    ("get", "/api/sections", None, 400, "invalid"),
    ("get", "/api/events?since=abc", None, 400, "invalid"),
    ("get", "/static/../app.py", None, 404, "not_found"),
    ("post", "/api/reconciliations/99/resolve", {"how": "keep-human"}, 404, "invalid"),
    ("post", "/api/reconciliations/1/resolve", {"how": "both"}, 400, "invalid"),
    ("post", "/api/reconciliations/x/resolve", {"how": "keep-human"}, 400, "invalid"),
    ("post", "/api/reconciliations/1/resolve", "not json", 400, "invalid"),
    ("post", "/api/reconciliations/1/resolve", "x" * (MAX_BODY + 1), 413, "invalid"),
]


@pytest.mark.parametrize(("method", "path", "body", "code", "status"), HOSTILE)
def test_a_hostile_request_is_a_clear_4xx_and_changes_nothing(
    client: TestClient,
    root: Path,
    method: str,
    path: str,
    body: object,
    code: int,
    status: str,
) -> None:
    open_reconciliation(root)
    before = tree_bytes(root)
    events = len(Memory.open(root).events())
    if method == "get":
        answer = client.get(path, headers=AUTH)
    elif isinstance(body, str):
        answer = client.post(path, content=body.encode(), headers=AUTH)
    else:
        answer = client.post(path, json=body, headers=AUTH)
    assert answer.status_code == code, answer.text
    assert answer.json()["status"] == status
    assert answer.json()["message"]
    assert tree_bytes(root) == before
    assert len(Memory.open(root).events()) == events


def test_a_foreign_host_header_is_refused(client: TestClient) -> None:
    answer = client.get("/api/status", headers={**AUTH, "Host": "evil.example:8765"})
    assert answer.status_code == 403
    assert "loopback" in answer.json()["message"]


@pytest.mark.parametrize(
    "path",
    [
        f"/api/events?since={2**64}",
        "/api/events?since=-1",
        f"/api/events?limit={2**64}",
        f"/api/stream?since={2**64}",
        "/api/sections?path=CLAUDE.md%00x",
        "/api/sections?path=CLAUDE.md&key=bu%00ild",
    ],
)
def test_numbers_past_64_bits_and_nul_characters_are_a_400_not_a_500(
    client: TestClient, path: str
) -> None:
    answer = client.get(path, headers=AUTH)
    assert answer.status_code == 400, answer.text
    assert answer.json()["status"] == "invalid"


def test_a_reconciliation_id_past_64_bits_is_a_400(client: TestClient) -> None:
    answer = client.post(
        f"/api/reconciliations/{2**64}/resolve", json={"how": "keep-human"}, headers=AUTH
    )
    assert answer.status_code == 400


def test_events_the_signers_file_does_not_vouch_for_are_marked(
    client: TestClient, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "alice"))
    assert run_main(root, "emit", "test.before").code == 0  # no signers file yet: not judged
    before = client.get("/api/events?since=0", headers=AUTH).json()["events"]
    assert all("signature_problem" not in e for e in before)
    assert run_main(root, "keys", "init", "--human-name", "alice").code == 0
    assert run_main(root, "keys", "trust", "alice", "human").code == 0
    assert run_main(root, "emit", "test.signed").code == 0
    assert run_main(root, "emit", "test.unsigned", env={"XDG_CONFIG_HOME": str(tmp_path)}).code == 0
    assert run_main(root, "--agent", "bot", "emit", "test.as-another").code == 0
    bob = {"XDG_CONFIG_HOME": str(tmp_path / "bob")}
    assert run_main(root, "keys", "init", "--human-name", "bob", env=bob).code == 0
    assert run_main(root, "emit", "test.by-bob", env=bob).code == 0
    shown = {
        e["type"]: e["signature_problem"]
        for e in client.get("/api/events?since=0", headers=AUTH).json()["events"]
    }
    assert shown["test.signed"] is None
    assert shown["test.unsigned"] == "it is not signed"
    assert shown["test.as-another"] == "it is signed by alice, whose key may not sign as bot"
    assert shown["test.before"] == "it is not signed"  # before alice had a key
    assert shown["test.by-bob"].endswith("a key the signers file does not list")


def test_an_idle_claim_carries_the_watchdogs_mark(client: TestClient, root: Path) -> None:
    from memkeeper.ops.idleclaims import mark_idle

    memory = Memory.open(root, agent="a1")
    idle, busy = memory.claim("src/"), memory.claim("docs/")
    event = mark_idle(memory.workspace, idle, 1200.0, idle.granted_at)
    memory.close()
    assert event is not None
    shown = {c["id"]: c["idle"] for c in client.get("/api/claims", headers=AUTH).json()["claims"]}
    assert shown == {
        idle.id: {"since": event.ts, "idle_s": 1200.0, "event": event.id},
        busy.id: None,
    }

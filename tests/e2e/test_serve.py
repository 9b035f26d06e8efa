"""``memkeeper serve`` as a process: the URL it prints, the event stream delivering an event
another process committed, and the refusal to listen beyond loopback unless asked."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("starlette", reason="the dashboard needs memkeeper[serve]")

import httpx

from tests.conftest import MEMKEEPER


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}


@pytest.fixture
def server(sample: Path) -> Iterator[tuple[str, str]]:
    """A running ``memkeeper serve --port 0``: its base URL and token."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, env=env(), check=True, capture_output=True)
    process = subprocess.Popen(
        [MEMKEEPER, "serve", "--port", "0"],
        cwd=sample,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("memkeeper dashboard: http://127.0.0.1:"), line
        url = urlsplit(line.removeprefix("memkeeper dashboard: "))
        token = parse_qs(url.query)["token"][0]
        yield f"http://127.0.0.1:{url.port}", token
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    # uvicorn re-raises the signal once it has shut down, so the exit is SIGTERM's own
    assert process.returncode in (0, -signal.SIGTERM), (
        process.stderr.read() if process.stderr else ""
    )
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def test_the_stream_delivers_an_event_another_process_commits(
    server: tuple[str, str], sample: Path
) -> None:
    base, token = server
    got: queue.Queue[dict[str, object]] = queue.Queue()
    headers = {"Authorization": f"Bearer {token}"}

    def listen() -> None:
        try:
            with httpx.stream("GET", f"{base}/api/stream", headers=headers, timeout=30) as answer:
                got.put({"status_code": answer.status_code, **answer.headers})
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        got.put(json.loads(line.removeprefix("data:").strip()))
        except httpx.HTTPError:
            pass  # the server stopped at the end of the test

    threading.Thread(target=listen, daemon=True).start()
    opened = got.get(timeout=10)
    assert opened["status_code"] == 200
    assert str(opened["content-type"]).startswith("text/event-stream")
    for n in range(3):
        subprocess.run(
            [MEMKEEPER, "emit", "test.stream", "--data", json.dumps({"n": n})],
            cwd=sample,
            env=env(),
            check=True,
            capture_output=True,
        )
        sent = time.monotonic()
        event = got.get(timeout=5)
        assert time.monotonic() - sent < 1.0
        assert (event["type"], event["data"]) == ("test.stream", {"n": n})


def test_the_api_answers_over_http(server: tuple[str, str]) -> None:
    base, token = server
    assert httpx.get(f"{base}/api/status").status_code == 401
    answer = httpx.get(f"{base}/api/status", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    assert answer.json()["status"] == "ok"


def test_a_non_loopback_host_needs_allow_remote(sample: Path) -> None:
    done = subprocess.run(
        [MEMKEEPER, "serve", "--host", "0.0.0.0", "--port", "0", "--json"],
        cwd=sample,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--allow-remote" in json.loads(done.stdout)["message"]

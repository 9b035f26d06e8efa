"""``memkeeper serve``'s own checks and binding (``dashboard.serve``), in process: which hosts
count as loopback; a host beyond it without ``allow_remote``, a port out of range and a port
already taken, each refused with its exact message before anything is served; and, served for
real in a thread, the socket bound to the host asked for, the URL printed with the port picked
and the token, and the dashboard answering at that URL."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("uvicorn", reason="the dashboard needs memkeeper[serve]")

import httpx
import uvicorn

from memkeeper.dashboard.app import is_loopback
from memkeeper.dashboard.serve import serve
from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.names import HOME_DIR


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("0:0:0:0:0:0:0:1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("[::]", False),
        ("192.168.1.10", False),
        ("10.0.0.1", False),
        ("::ffff:192.168.1.10", False),
        ("example.com", False),
        ("localhost.example.com", False),
        ("LOCALHOST", False),  # a name is taken only as written
        ("", False),
    ],
)
def test_which_hosts_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def _remote(host: str) -> str:
    return (
        f"--host {host} would let other machines reach the dashboard — it shows every agent's "
        "claims and memory files and resolves reconciliations; pass --allow-remote as well if "
        "that is what you want (the token is still required)"
    )


def _port(port: int) -> str:
    return f"--port {port} is not a port number (0 picks a free one)"


@pytest.mark.parametrize(
    ("host", "port", "allow_remote", "message"),
    [
        ("0.0.0.0", 8765, False, _remote("0.0.0.0")),
        ("::", 8765, False, _remote("::")),
        ("192.168.1.10", 0, False, _remote("192.168.1.10")),
        ("example.com", 0, False, _remote("example.com")),
        ("0.0.0.0", 70000, False, _remote("0.0.0.0")),  # the host is judged first
        ("127.0.0.1", -1, False, _port(-1)),
        ("127.0.0.1", 65536, False, _port(65536)),
        ("0.0.0.0", 65536, True, _port(65536)),  # allowed beyond loopback: the port is next
    ],
)
def test_a_refused_host_or_port_says_why_and_serves_nothing(
    sample: Path,
    capsys: pytest.CaptureFixture[str],
    host: str,
    port: int,
    allow_remote: bool,
    message: str,
) -> None:
    with pytest.raises(Invalid) as refused:
        serve(str(sample), None, host=host, port=port, allow_remote=allow_remote)
    assert refused.value.message == message
    assert refused.value.exit_code == 2
    assert capsys.readouterr() == ("", "")
    assert not (sample / HOME_DIR).exists()


def test_a_port_already_taken_is_an_environment_failure(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(EnvironmentFailure) as failed:
            serve(str(sample), None, port=port)
    assert failed.value.message == (
        f"cannot listen on 127.0.0.1:{port}: Address already in use — pick another --port (0: any)"
    )
    assert capsys.readouterr().out == ""  # no URL for a server that is not there


class Served:
    """A ``serve`` running in a thread: what it printed and the socket uvicorn listens on."""

    def __init__(self, out: str, err: str, server: uvicorn.Server) -> None:
        self.out, self.err = out, err
        self.url = out.strip().removeprefix("memkeeper dashboard: ")
        split = urlsplit(self.url)
        self.base = f"{split.scheme}://{split.netloc}"
        self.token = parse_qs(split.query)["token"][0]
        (listening,) = server.servers
        (sock,) = listening.sockets
        self.address: tuple[str, int] = sock.getsockname()[:2]


@contextlib.contextmanager
def serving(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str
) -> Iterator[Served]:
    """``serve(root, host=host, port=0)`` in a thread until the block ends; uvicorn's own
    ``Server``, remembered as ``serve`` makes it, so that the test can tell it to stop (in a
    thread uvicorn takes no signals)."""
    made: list[uvicorn.Server] = []

    class Remembered(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            made.append(self)

    monkeypatch.setattr(uvicorn, "Server", Remembered)
    outcome: list[int | BaseException] = []

    def run() -> None:
        try:
            outcome.append(serve(str(root), None, host=host, port=0))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not (made and made[0].started):
        assert not outcome, outcome
        assert time.monotonic() < deadline, "the dashboard never started"
        time.sleep(0.005)
    out, err = capsys.readouterr()
    try:
        yield Served(out, err, made[0])
    finally:
        made[0].should_exit = True
        thread.join(10)
    assert outcome == [0]


@pytest.mark.parametrize(
    ("host", "shown", "address"),
    [
        ("127.0.0.1", "127.0.0.1", "127.0.0.1"),
        ("localhost", "localhost", "127.0.0.1"),
        ("::1", "[::1]", "::1"),
        ("[::1]", "[::1]", "::1"),
    ],
)
def test_it_listens_on_the_host_asked_for_and_prints_where_with_the_token(
    sample: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    host: str,
    shown: str,
    address: str,
) -> None:
    with serving(sample, monkeypatch, capsys, host) as served:
        bound, port = served.address
        assert bound == address
        assert port > 0  # port 0: a free one, picked at bind time
        assert served.out == f"memkeeper dashboard: http://{shown}:{port}/?token={served.token}\n"
        assert len(served.token) == 32  # 24 random bytes, URL-safe
        assert served.err == "memkeeper dashboard: Ctrl-C to stop\n"
        auth = {"Authorization": f"Bearer {served.token}"}
        answer = httpx.get(f"{served.base}/api/status", headers=auth, timeout=10)
        assert answer.status_code == 200, answer.text
        assert answer.json()["root"] == str(sample)
        assert httpx.get(f"{served.base}/api/status", timeout=10).status_code == 401


def test_a_loopback_address_serve_accepts_is_one_the_dashboard_answers_on(
    sample: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(sample, monkeypatch, capsys, "127.0.0.2") as served:
        assert served.address[0] == "127.0.0.2"
        auth = {"Authorization": f"Bearer {served.token}"}
        answer = httpx.get(f"{served.base}/api/status", headers=auth, timeout=10)
        assert answer.status_code == 200, answer.text

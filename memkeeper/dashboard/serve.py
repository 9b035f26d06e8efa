"""Bind, print the URL with its token, and run the dashboard until SIGINT/SIGTERM."""

from __future__ import annotations

import secrets
import socket
import sys

import uvicorn

from memkeeper.dashboard.app import build, is_loopback
from memkeeper.errors import EnvironmentFailure, Invalid

DEFAULT_PORT = 8765


def serve(
    root: str | None,
    agent: str | None,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
) -> int:
    """Serve the dashboard of ``root``; ``agent`` resolves reconciliations (``human`` by
    default). A host that is not the loopback address needs ``allow_remote``."""
    if not is_loopback(host) and not allow_remote:
        raise Invalid(
            f"--host {host} would let other machines reach the dashboard — it shows every "
            "agent's claims and memory files and resolves reconciliations; pass "
            "--allow-remote as well if that is what you want (the token is still required)"
        )
    if not 0 <= port <= 65535:
        raise Invalid(f"--port {port} is not a port number (0 picks a free one)")
    token = secrets.token_urlsafe(24)
    app = build(root, token, agent=agent or "human", allow_remote=allow_remote)
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # IPPROTO_TCP named: asyncio then turns Nagle off on every accepted connection (with
    # proto 0 it does not, and each response waits out the client's 40 ms delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise EnvironmentFailure(
            f"cannot listen on {host}:{port}: {exc.strerror} — pick another --port (0: any)"
        ) from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    print(f"memkeeper dashboard: http://{shown}:{bound}/?token={token}", flush=True)
    print("memkeeper dashboard: Ctrl-C to stop", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0

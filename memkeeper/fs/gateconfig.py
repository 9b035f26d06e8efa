"""The served gate's files in the memory home (docs/reference.md §4.18, §4.20): this machine's
port and token (``gate.json``, written by ``install-hooks claude-code --served``, readable by
its owner alone) and the lock ``memkeeper watch`` holds while it serves the gate
(``gate.lock``), which the Claude Code command hook tests before starting Python.

Never committed (the home is not): the port and the token are this machine's.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass

from memkeeper.errors import Invalid

CONFIG_FILE = "gate.json"
LOCK_FILE = "gate.lock"
HOST = "127.0.0.1"  # loopback only, always
PATH = "/hook"  # the URL's path: POST /hook/AGENT


@dataclass(frozen=True, slots=True)
class GateConfig:
    """Where the served gate listens and the token every request must carry."""

    port: int
    token: str

    def url(self, agent: str) -> str:
        return f"http://{HOST}:{self.port}{PATH}/{agent}"


def new_config(port: int) -> GateConfig:
    """A config with a fresh token (256 bits, URL-safe)."""
    return GateConfig(port, secrets.token_urlsafe(32))


def load(home: str) -> GateConfig | None:
    """The home's config; None when there is none. A file that is not one is an error that
    names it (the gate is not served from a half-written or hand-broken file)."""
    path = os.path.join(home, CONFIG_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    try:
        found = json.loads(text)
        port, token = found["port"], found["token"]
    except (ValueError, TypeError, KeyError):
        found = port = token = None
    if not (isinstance(port, int) and 0 < port < 65536 and isinstance(token, str) and token):
        raise Invalid(
            f"{path}: not the served gate's config (a JSON object with port and token) — "
            "run memkeeper install-hooks claude-code --served again",
            path=path,
        )
    return GateConfig(port, token)


def save(home: str, config: GateConfig) -> None:
    """Write the config (mode 0600) by an atomic replace."""
    os.makedirs(home, exist_ok=True)
    path = os.path.join(home, CONFIG_FILE)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"port": config.port, "token": config.token}, handle)
            handle.write("\n")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def remove(home: str) -> bool:
    """Delete the config; whether there was one."""
    try:
        os.unlink(os.path.join(home, CONFIG_FILE))
    except FileNotFoundError:
        return False
    return True


def free_port() -> int:
    """A TCP port on the loopback address that nothing listens on now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port

"""The etcd user's token, kept across processes (reference §12, **A guarded etcd**).

etcd checks a password with bcrypt: a login costs the server ~90 ms, more than half of a
whole ``read``. Each CLI call being a new process, the gateway alone would log in on every
call. This file in the memory home keeps the last token, under a digest of the user, the
password and the cluster it was issued for — a changed password, user or cluster logs in
again, and the file never holds the password. The next process sends that token and logs in
only when etcd no longer knows it (unused past the members' ``--auth-token-ttl``, a member
restarted, the user's password changed). The file is its owner's alone (the token is a
credential while it lives). Best effort: a home that cannot be written only logs in more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from memkeeper.store.etcd.wire import EtcdError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from memkeeper.store.etcd.access import Access

    Endpoint = tuple[str, int]

FILE = "etcd-token.json"


def token_key(user: str, password: str, endpoints: Sequence[Endpoint], tls: bool = True) -> str:
    """What a token was issued for: a digest of the user, its password and the cluster (as
    reached over TLS or not: a token got over TLS is never sent in the clear)."""
    cluster = ",".join(f"{host}:{port}" for host, port in endpoints)
    scheme = "etcds" if tls else "etcd"
    return hashlib.sha256("\0".join((user, password, scheme, cluster)).encode()).hexdigest()


class Tokens:
    """The token the home's file keeps (one: the last issued to any of its processes)."""

    def __init__(self, home: str) -> None:
        self.path = os.path.join(home, FILE)

    def load(self, key: str) -> str | None:
        """The kept token, if it was issued for ``key``."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                found = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(found, dict) or found.get("for") != key:
            return None
        token = found.get("token")
        return token if isinstance(token, str) and token else None

    def save(self, key: str, token: str) -> None:
        """Keep ``token``, issued for ``key`` (made readable by its owner alone)."""
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"for": key, "token": token}, handle)
            os.replace(temp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    def forget(self, key: str, token: str) -> None:
        """Drop the kept token if it is ``token``, issued for ``key`` (etcd no longer knows
        it; a newer one another process kept stays)."""
        if self.load(key) == token:
            with contextlib.suppress(OSError):
                os.unlink(self.path)


class Login:
    """The token one gateway's requests carry as the store's user: the one the home keeps
    (``tokens``), else a new one, asked for with the password."""

    def __init__(
        self, access: Access, endpoints: Sequence[Endpoint], tokens: Tokens | None = None
    ) -> None:
        self.access, self.tokens = access, tokens
        tls = access.context is not None
        self.key = token_key(access.user or "", access.password or "", endpoints, tls)
        self.token: str | None = None  # None: not known yet; "": the cluster wants none

    def headers(self, authenticate: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, str]:
        """The headers a request carries: ``Authorization`` with the user's token, got (when
        none is known) by ``authenticate``, a request to ``/v3/auth/authenticate``."""
        if self.access.user is not None and self.token is None:
            kept = None if self.tokens is None else self.tokens.load(self.key)
            self.token = kept or self._new(self.access.user, authenticate)
        return {"Authorization": self.token} if self.token else {}

    def _new(self, user: str, authenticate: Callable[[dict[str, Any]], dict[str, Any]]) -> str:
        try:
            token = str(
                authenticate({"name": user, "password": self.access.password or ""})["token"]
            )
        except EtcdError as exc:
            if "authentication is not enabled" not in str(exc):
                raise
            return ""  # a cluster without authentication: requests go as they are
        if self.tokens is not None:
            self.tokens.save(self.key, token)
        return token

    def expired(self) -> None:
        """etcd no longer knows the token: the next request gets a new one."""
        if self.tokens is not None and self.token:
            self.tokens.forget(self.key, self.token)
        self.token = None

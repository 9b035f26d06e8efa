"""Which store a root's state lives in (reference §12): ``MEMKEEPER_STORE`` or the policy's
``store:``, spelled ``etcd://HOST:PORT[,HOST:PORT…]/PREFIX`` (``etcds://`` for members that
serve TLS); neither means the local SQLite store. Pure: the text in, a ``StoreUrl`` or a
``ValueError`` saying what is wrong out.

A name never carries credentials (``USER:PASSWORD@``): the policy file that may hold it is
committed. The user, the password and the client certificate come from the environment
(``store.etcd.access``); a name that holds some is refused without being repeated.

The policy's key is found by ``policy_store`` with one regular expression rather than by the
YAML parser: every command looks for it before it touches the store, and the parser costs more
than a whole ``read``. The parser (``policy.parse``) holds the key to the same one-line form, so
the two never disagree.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SCHEME = "etcd://"
TLS_SCHEME = "etcds://"
SPELLING = "etcd[s]://HOST:PORT[,HOST:PORT…]/PREFIX"
CREDENTIALS_TODO = (
    "set MEMKEEPER_ETCD_USER and MEMKEEPER_ETCD_PASSWORD_FILE in the environment instead"
)
# The patterns are compiled on first use (``re`` keeps them): every command loads this module
# for ``policy_store``, and compiling the three costs ~0.3 ms, most commands using none.
# Keys that would hold credentials: the policy is committed, so they are refused by name.
CREDENTIAL_KEY = (
    r"(?:^|[_.-])(?:pass(?:word|wd)?|secrets?|token|user(?:name)?|ca_?cert|cert|key|auth|"
    r"credentials?)(?:$|[_.-])"
)
STORE_TODO = (
    "write e.g. store: etcd://127.0.0.1:2379/myrepo, or remove the key to keep the state in "
    "the local SQLite store (.memkeeper/state.db)"
)
_PREFIX = r"[A-Za-z0-9._~/-]+"  # what a prefix may hold: no spaces, no NUL
STORE_LINE = (
    rb"^store:[ \t]*(?P<value>[^\s#'\"][^\s#]*|'[^'\r\n]*'|\"[^\"\r\n]*\")?[ \t]*(#[^\r\n]*)?\r?$"
)


class StoreUrl:
    """An etcd store: its members' client endpoints, the key prefix the state lives under
    (``/PREFIX/``: roots that name the same cluster and prefix share one state), and whether
    the members are spoken to over TLS (``etcds://``)."""

    __slots__ = ("endpoints", "prefix", "text", "tls")

    def __init__(
        self, endpoints: Sequence[tuple[str, int]], prefix: str, text: str, tls: bool = False
    ) -> None:
        self.endpoints, self.prefix, self.text, self.tls = tuple(endpoints), prefix, text, tls

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreUrl) and (self.endpoints, self.prefix, self.tls) == (
            other.endpoints,
            other.prefix,
            other.tls,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoreUrl({self.text!r})"

    def endpoints_text(self) -> str:
        return ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.endpoints)


def names_credentials(key: str) -> bool:
    """Whether a policy key's name says it would hold credentials (``CREDENTIAL_KEY``)."""
    return re.search(CREDENTIAL_KEY, key, re.I) is not None


def parse_store_url(text: str) -> StoreUrl:
    """``etcd[s]://HOST:PORT[,HOST:PORT…]/PREFIX`` as a ``StoreUrl`` (``ValueError`` saying
    what is wrong with it). The prefix is kept with a leading and a trailing ``/``."""
    tls = text.startswith(TLS_SCHEME)
    if not tls and not text.startswith(SCHEME):
        raise ValueError(f"{_hidden(text)!r} is not {SPELLING} (the only shared store is etcd)")
    rest = text[len(TLS_SCHEME if tls else SCHEME) :]
    if "@" in rest:
        raise ValueError(
            f"{_hidden(text)!r} names credentials (USER[:PASSWORD]@): a store's name never "
            f"holds them, the policy file is committed — {CREDENTIALS_TODO}"
        )
    hosts, slash, prefix = rest.partition("/")
    if not slash or not prefix.strip("/"):
        raise ValueError(
            f"{text!r} names no PREFIX: write {SPELLING}, e.g. etcd://127.0.0.1:2379/myrepo "
            "(the roots that name one prefix share one state)"
        )
    if not re.fullmatch(_PREFIX, prefix):
        raise ValueError(f"{text!r}: the PREFIX may hold letters, digits and . _ ~ / - only")
    endpoints = []
    for part in hosts.split(","):
        host, sep, port = part.strip().rpartition(":")
        host = host.strip("[]")
        if (
            not sep
            or not host
            or not (port.isascii() and port.isdigit())
            or not 0 < int(port) < 65536
        ):
            raise ValueError(f"{text!r}: {part.strip()!r} is not HOST:PORT")
        endpoints.append((host, int(port)))
    return StoreUrl(endpoints, "/" + prefix.strip("/") + "/", text, tls)


def _hidden(text: str) -> str:
    """``text`` with whatever stands before its last ``@`` masked (a password is never
    repeated in a message; a PREFIX holds no ``@``)."""
    scheme, sep, rest = text.partition("://")
    if not sep or "@" not in rest:
        return text
    return f"{scheme}://***@{rest.rpartition('@')[2]}"


def policy_store(policy: bytes | None) -> str | None:
    """The policy's top-level ``store:`` value as written (``None``: no such key, or empty)."""
    if policy is None or b"store:" not in policy:
        return None
    found = re.search(STORE_LINE, policy, re.M)
    if found is None or found.group("value") is None:
        return None
    value = found.group("value").decode("utf-8", "replace")
    return value[1:-1] if value[:1] in ("'", '"') else value

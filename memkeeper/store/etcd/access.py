"""How memkeeper reaches a guarded etcd (reference §12): TLS — the CA that signed the members'
certificates, and a client certificate and key for mutual TLS — and etcd's own
authentication: a user and its password, exchanged for a token (``/v3/auth/authenticate``)
that every request then carries in its ``Authorization`` header.

All of it comes from the environment (``names.ETCD_*_ENV``, as etcdctl's ``ETCDCTL_*``), the
password from a file (or the variable itself): never from the policy file, which is
committed, nor from the store's name. ``Access.from_environ`` reads and checks them once,
before anything is sent: a setting that cannot work is a ``ValueError`` naming the variable
and what to do. No message ever holds the password. ``tls_refusal`` and ``refusal`` say which
setting to fix when a member refuses memkeeper.
"""

from __future__ import annotations

import ssl

from memkeeper import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CACERT, CERT, KEY = names.ETCD_CACERT_ENV, names.ETCD_CERT_ENV, names.ETCD_KEY_ENV
USER, PASSWORD_FILE = names.ETCD_USER_ENV, names.ETCD_PASSWORD_FILE_ENV
PASSWORD = names.ETCD_PASSWORD_ENV
CREDENTIALS = f"{USER} and {PASSWORD_FILE}"
CLIENT_CERT = f"{CERT} and {KEY}"
# What etcd's JSON gateway answers (HTTP 400, not JSON) to a client certificate with a CN
# while authentication is on: it would not authenticate by it, so it refuses the request.
GATEWAY_CN = b"CommonName of client sending a request against gateway"
# The TLS errors that are a connection cut short, not a refusal: the member is asked again.
_CUT = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)


class Access:
    """How to reach the members: over TLS with ``context`` (None: plain HTTP); as ``user``
    with ``password`` (None: without authentication). ``cert``: the client certificate's
    file, to name in a refusal. (A plain class: ``dataclasses`` would cost every command on
    an etcd store its import.)"""

    __slots__ = ("context", "user", "password", "cert")

    def __init__(
        self,
        context: ssl.SSLContext | None = None,
        user: str | None = None,
        password: str | None = None,
        cert: str | None = None,
    ) -> None:
        self.context, self.user, self.password, self.cert = context, user, password, cert

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Access) and (
            self.context,
            self.user,
            self.password,
            self.cert,
        ) == (other.context, other.user, other.password, other.cert)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:  # never the password
        return f"Access(tls={self.context is not None}, user={self.user!r}, cert={self.cert!r})"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *, tls: bool) -> Access:
        """The settings ``environ`` holds, for a store named ``etcds://`` (``tls``) or
        ``etcd://``; ``ValueError`` saying what to fix when they cannot work."""
        cacert, cert, key = (environ.get(name) or None for name in (CACERT, CERT, KEY))
        if not tls:
            for name in (CACERT, CERT, KEY):
                if environ.get(name):
                    raise ValueError(
                        f"{name} is set, but the store is named etcd://… (no TLS) — name it "
                        f"etcds://HOST:PORT/PREFIX to reach the members over TLS, or unset {name}"
                    )
        if (cert is None) != (key is None):
            missing = KEY if key is None else CERT
            raise ValueError(
                f"{CLIENT_CERT} go together and {missing} is not set — set both (mutual TLS), "
                "or neither"
            )
        context = _context(cacert, cert, key) if tls else None
        user, password = _credentials(environ)
        return cls(context, user, password, cert)


def _context(cacert: str | None, cert: str | None, key: str | None) -> ssl.SSLContext:
    """A client context that checks the members' certificates (against ``cacert``, else the
    system's CAs) and their names, and presents ``cert`` when given."""
    try:
        context = ssl.create_default_context(cafile=cacert)
    except OSError as err:  # ssl.SSLError is one
        raise ValueError(
            f"{CACERT}={cacert}: {_why(err)} — name a PEM file holding the CA that signed the "
            "members' certificates"
        ) from None
    if cert is not None:
        try:
            # An encrypted key fails here rather than prompting on the terminal.
            context.load_cert_chain(cert, key, password=b"")
        except OSError as err:
            raise ValueError(
                f"{CERT}={cert}, {KEY}={key}: {_why(err)} — name the client certificate and "
                "its private key (PEM, the key unencrypted and readable by you alone)"
            ) from None
    return context


def _credentials(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    user = environ.get(USER) or None
    path, direct = environ.get(PASSWORD_FILE) or None, environ.get(PASSWORD) or None
    if path is not None and direct is not None:
        raise ValueError(f"both {PASSWORD_FILE} and {PASSWORD} are set — keep one (the file)")
    if user is None:
        if path is not None or direct is not None:
            given = PASSWORD_FILE if path is not None else PASSWORD
            raise ValueError(f"{given} is set but {USER} is not — set the user it is for")
        return None, None
    if ":" in user:
        raise ValueError(
            f"{USER} holds a ':' — it names the user alone; put the password in a file "
            f"readable by you alone and name it in {PASSWORD_FILE}"
        )
    if path is None and direct is None:
        raise ValueError(
            f"{USER} is set but no password — set {PASSWORD_FILE} to a file holding it"
        )
    return user, direct if direct is not None else _read_password(path or "")


def _read_password(path: str) -> str:
    """The password the file at ``path`` holds (its line end dropped)."""
    try:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8").rstrip("\r\n")
    except OSError as err:
        raise ValueError(f"{PASSWORD_FILE}={path}: {_why(err)}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{PASSWORD_FILE}={path}: the file is not UTF-8 text") from None
    if not text:
        raise ValueError(f"{PASSWORD_FILE}={path}: the file is empty — write the password in it")
    return text


def _why(err: OSError) -> str:
    if isinstance(err, ssl.SSLError):
        return f"not usable ({err.reason or err})"
    return (err.strerror or str(err)).lower()


def tls_refusal(where: str, err: ssl.SSLError, access: Access) -> str | None:
    """What to fix when the TLS exchange with the member at ``where`` failed with ``err``;
    None when it is a connection cut short (as a member that went away), no refusal."""
    if isinstance(err, _CUT):
        return None
    if isinstance(err, ssl.SSLCertVerificationError):
        return (
            f"etcd at {where}: its certificate is not trusted ({err.verify_message}) — set "
            f"{CACERT} to the CA that signed the members' certificates"
        )
    reason = str(err.reason or err)
    if reason == "WRONG_VERSION_NUMBER":
        return f"etcd at {where} does not speak TLS — name the store etcd://…, not etcds://…"
    if "CERTIFICATE" in reason:
        shown = f"the client certificate {access.cert}" if access.cert else "no client certificate"
        return (
            f"etcd at {where} refused memkeeper's TLS handshake ({reason}, with {shown}) — set "
            f"{CLIENT_CERT} to a certificate and key signed by a CA the members trust"
        )
    return f"etcd at {where}: TLS failed ({reason}) — check {CACERT} and {CLIENT_CERT}"


def refusal(message: str, code: int, access: Access) -> str | None:
    """What to fix when etcd answered ``message`` (gRPC ``code``) because of who memkeeper
    is (None: another kind of error)."""
    if code == 7 or "permission denied" in message:
        if access.user is None:
            return f"{message} — the cluster has authentication on: set {CREDENTIALS}"
        return (
            f"{message} for etcd user {access.user!r} — grant one of its roles readwrite on the "
            "store's prefix (etcdctl role grant-permission ROLE --prefix=true readwrite /PREFIX/)"
        )
    if "authentication failed" in message:
        return (
            f"etcd refused user {access.user!r}: wrong user name or password — check {USER} "
            f"and the password in {PASSWORD_FILE}"
        )
    if "user name is empty" in message:
        return f"{message} — the cluster has authentication on: set {CREDENTIALS}"
    return None


def gateway_refusal(data: bytes) -> str | None:
    """What to fix when the gateway answered ``data`` (not JSON) because of the client
    certificate (None: another answer)."""
    if GATEWAY_CN not in data:
        return None
    return (
        "etcd's JSON gateway refuses a client certificate with a Common Name while "
        f"authentication is on — give memkeeper ({CERT}) a certificate without one "
        "(e.g. subject O=memkeeper), or leave authentication to the user and password"
    )

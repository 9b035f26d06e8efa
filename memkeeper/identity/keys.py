"""Ed25519 keys and signatures (``cryptography``), on bytes: what signs every event and what
checks it. Pure; ``cryptography`` is imported on first use (~10 ms), so that commands which
write nothing never pay for it.

A public key is spelled ``ed25519:`` and its 32 bytes in unpadded base64; a signature is the
64 bytes' unpadded base64. An event's signature is over its chain hash, which covers every
field of the event and the hash before it (``events``): it cannot be moved to another event.
A private key file is three lines of text, read only by its owner::

    memkeeper ed25519 private key
    name: alice
    key: <32 bytes, base64>
"""

from __future__ import annotations

import base64
import binascii

from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PREFIX = "ed25519:"
HEADER = "memkeeper ed25519 private key"


class BadKey(ValueError):
    """Text that is not a key of memkeeper's (the message says what is wrong)."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def new_private() -> bytes:
    """32 random bytes: a new private key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes_raw()


def public_key(text: str) -> bytes:
    """The 32 bytes of a public key spelled ``ed25519:BASE64`` (``BadKey`` otherwise)."""
    if not text.startswith(PREFIX):
        raise BadKey(f"{text[:40]!r} is not a public key: it must start with {PREFIX!r}")
    try:
        raw = _unb64(text[len(PREFIX) :])
    except (binascii.Error, ValueError):
        raise BadKey(f"{text[:40]!r} is not a public key: not base64") from None
    if len(raw) != 32:
        raise BadKey(f"{text[:40]!r} is not a public key: {len(raw)} bytes, not 32")
    return raw


def short(public: str) -> str:
    """A public key as people compare them: its first 12 characters after the prefix."""
    return public[: len(PREFIX) + 12]


class Signer(Record):
    """A private key, ready to sign: ``name`` (as its file says), ``public`` (``ed25519:…``)."""

    __slots__ = ("name", "public", "_key")
    name: str
    public: str
    _key: Ed25519PrivateKey

    def __init__(self, name: str, private: bytes) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.from_private_bytes(private)
        self._fill(name, PREFIX + _b64(key.public_key().public_bytes_raw()), key)

    def __eq__(self, other: object) -> bool:  # the same key: the same name and public key
        return isinstance(other, Signer) and (self.name, self.public) == (other.name, other.public)

    def sign(self, message: str) -> tuple[str, str]:
        """``(public key, signature)`` of ``message`` (an event's chain hash)."""
        return self.public, _b64(self._key.sign(message.encode()))


def valid(public: str, message: str, signature: str) -> bool:
    """Whether ``signature`` is ``public``'s over ``message`` (False for any malformed part)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(public_key(public))
        key.verify(_unb64(signature), message.encode())
    except (BadKey, binascii.Error, ValueError, InvalidSignature):
        return False
    return True


def private_file(name: str, private: bytes) -> bytes:
    """The text of a private key file."""
    return f"{HEADER}\nname: {name}\nkey: {_b64(private)}\n".encode()


def read_private_file(data: bytes, where: str) -> tuple[str, bytes]:
    """``(name, private bytes)`` of a private key file's text (``BadKey`` naming ``where``)."""
    lines = data.decode("utf-8", "replace").splitlines()
    fields = dict(line.partition(": ")[::2] for line in lines[1:] if ": " in line)
    if not lines or lines[0] != HEADER or "name" not in fields or "key" not in fields:
        raise BadKey(f"{where} is not a memkeeper private key (it must start {HEADER!r})")
    try:
        private = _unb64(fields["key"].strip())
    except (binascii.Error, ValueError):
        private = b""
    if len(private) != 32:
        raise BadKey(f"{where}: its key is not 32 bytes of base64")
    return fields["name"].strip(), private

"""The repository's trusted signers: the tracked file ``.memkeeper-signers`` (as git's
allowed-signers file, so trust travels with clones and is reviewed like code). Pure: bytes in,
bytes out, every edit keeping the other lines byte for byte.

One signer per line, ``NAME IDENTITIES KEY``: the name people know the key by, the identities
its events may be written as (comma-separated; ``*`` matches any run of characters, so
``*:*`` is every agent session and ``claude-code:*`` Claude Code's), and the public key
(``ed25519:…``). A revoked signer keeps its line behind ``@revoked``, so that events it
signed are named as such rather than as unknown. ``#`` starts a comment::

    # NAME IDENTITIES KEY
    alice human ed25519:Xq4…
    build-box *:* ed25519:9fA…
    @revoked old-laptop human,*:* ed25519:Lm2…
"""

from __future__ import annotations

from memkeeper.errors import Invalid
from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Literal

    Standing = Literal["trusted", "unknown", "revoked", "not-allowed"]

REVOKED = "@revoked"
HEADER = b"# memkeeper signers: NAME IDENTITIES KEY (memkeeper keys trust / revoke)\n"


class Signer(Record):
    __slots__ = ("name", "identities", "key", "revoked", "line")
    name: str
    identities: tuple[str, ...]
    key: str
    revoked: bool
    line: int

    def __init__(
        self, name: str, identities: tuple[str, ...], key: str, revoked: bool, line: int
    ) -> None:
        self._fill(name, identities, key, revoked, line)

    def may_sign_as(self, identity: str) -> bool:
        import fnmatch

        return any(fnmatch.fnmatchcase(identity, pattern) for pattern in self.identities)


def valid_name(name: str) -> bool:
    return (
        bool(name)
        and name.isprintable()
        and not any(c.isspace() for c in name)
        and (name[0] not in "#@")
    )


def parse(data: bytes, where: str) -> tuple[Signer, ...]:
    """The signers a file's bytes list; ``Invalid`` naming ``where:LINE`` for a bad line."""
    # Loaded with a signers file: a write in a repository with none checks ``required_by``.
    from memkeeper.identity.keys import BadKey, public_key

    found: list[Signer] = []
    names: dict[str, int] = {}
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        revoked = words[0] == REVOKED
        if revoked:
            words = words[1:]
        if len(words) != 3 or not valid_name(words[0]):
            raise Invalid(
                f"{where}:{number}: expected NAME IDENTITIES KEY, got {raw.strip()[:80]!r} — "
                "fix the line (signers are added with: memkeeper keys trust NAME KEY)"
            )
        name, identities, key = words
        try:
            public_key(key)
        except BadKey as err:
            raise Invalid(
                f"{where}:{number}: {err} — paste the key `memkeeper keys list` prints"
            ) from None
        if name in names:
            raise Invalid(
                f"{where}:{number}: signer {name!r} is listed twice (first on line "
                f"{names[name]}) — keep one line per signer"
            )
        names[name] = number
        patterns = tuple(p for p in identities.split(",") if p)
        found.append(Signer(name, patterns, key, revoked, number))
    return tuple(found)


def standing(signers: Iterable[Signer], key: str, identity: str) -> tuple[Standing, str]:
    """What the signers say of an event ``key`` signed as ``identity``: ``(standing, name)``
    (``name``: the signer's, "" when the key is unknown)."""
    for signer in signers:
        if signer.key == key:
            if signer.revoked:
                return "revoked", signer.name
            if identity in OBSERVERS or signer.may_sign_as(identity):
                return "trusted", signer.name
            return "not-allowed", signer.name
    return "unknown", ""


# Events written as these record what a process noticed others do (an editor's save, git's
# checkout): any trusted signer may attest them.
OBSERVERS = frozenset({"external", "git"})


def required_by(policy: bytes) -> bool:
    """Whether the policy's top-level ``signatures:`` says ``required`` (one line of its own,
    as the policy parser insists): read without the YAML parser, on every write's path."""
    if b"signatures:" not in policy:
        return False
    for line in policy.splitlines():
        key, _, value = line.partition(b":")
        if key == b"signatures":
            return value.split(b"#", 1)[0].strip().strip(b"'\"") == b"required"
    return False


def protected(signers: Iterable[Signer]) -> frozenset[str]:
    """The identities a live signer names exactly (no pattern): acting as one from inside an
    agent's session needs its key."""
    return frozenset(
        p for s in signers if not s.revoked for p in s.identities if "*" not in p and "?" not in p
    )


def with_signer(data: bytes, name: str, identities: tuple[str, ...], key: str) -> bytes:
    """``data`` with a line for a new signer at the end (the file starts with ``HEADER`` when
    it was empty). ``Invalid`` if the name or the key is listed already."""
    for signer in parse(data, "the signers file"):
        if signer.name == name:
            raise Invalid(
                f"signer {name!r} is already listed (line {signer.line}) — pick another "
                f"name, or revoke it first: memkeeper keys revoke {name}"
            )
        if signer.key == key and not signer.revoked:
            raise Invalid(
                f"this key is already trusted as {signer.name!r} (line {signer.line}) — one "
                "line per key: edit that line's identities instead"
            )
    if not valid_name(name):
        raise Invalid(f"{name!r} is not a signer name — use a word without spaces, # or @")
    base = data or HEADER
    if not base.endswith(b"\n"):
        base += b"\n"
    return base + f"{name} {','.join(identities)} {key}\n".encode()


def revoked(data: bytes, name: str) -> bytes:
    """``data`` with signer ``name``'s line marked ``@revoked`` (``Invalid`` if not listed)."""
    for signer in parse(data, "the signers file"):
        if signer.name == name and not signer.revoked:
            lines = data.splitlines(keepends=True)
            lines[signer.line - 1] = REVOKED.encode() + b" " + lines[signer.line - 1].lstrip()
            return b"".join(lines)
    raise Invalid(f"no trusted signer named {name!r} — memkeeper keys list names them")

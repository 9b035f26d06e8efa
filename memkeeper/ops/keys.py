"""``memkeeper keys init | list | trust NAME KEY | revoke NAME`` (docs/reference.md, "Who is
acting"): this user's keys on this machine (``fs.keyring``) and the repository's trusted
signers (``.memkeeper-signers``, tracked: trust travels with clones and is reviewed like code).

Trust is a human's to grant: ``trust`` and ``revoke`` are refused inside an agent's session.
Each change of the signers file is an event (``keys.trusted``, ``keys.revoked``).
"""

from __future__ import annotations

import os
import socket

from memkeeper import names
from memkeeper.errors import Invalid, Refused
from memkeeper.fs import atomic
from memkeeper.fs.files import Raced
from memkeeper.identity import keys, signers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace


def _default_name(role: str) -> str:
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or "user"
    host = socket.gethostname().split(".")[0] or "host"
    return user if role == "human" else host


def init(ws: Workspace, human: str | None = None, machine: str | None = None) -> dict[str, Any]:
    """Make this user's human and machine keys where they are missing (never replacing one),
    and say how to trust them here."""
    from memkeeper.fs import keyring

    made = []
    trusted = ws.signing.trusted_signers()
    for role, name, identities in (("human", human, "human"), ("machine", machine, "*:*")):
        chosen = name or _default_name(role)
        if not signers.valid_name(chosen):
            raise Invalid(f"{chosen!r} is not a key name — use a word without spaces, # or @")
        key, new = keyring.create(os.environ, role, chosen)
        listed = next((s.name for s in trusted if s.key == key.public), None)
        made.append(
            {
                "role": role,
                "name": key.name,
                "key": key.public,
                "path": keyring.key_path(os.environ, role),
                "created": new,
                "trusted_as": listed,
                "trust": None
                if listed
                else f"memkeeper keys trust {key.name} {key.public} --as '{identities}'",
            }
        )
    ws.signing.forget_key()  # a key made now signs this workspace's next events
    return {"keys": made}


def listing(ws: Workspace) -> dict[str, Any]:
    """This user's keys and the repository's signers."""
    from memkeeper.fs import keyring

    mine = {}
    for role in keyring.ROLES:
        key = keyring.load(keyring.key_path(os.environ, role))
        if key is not None:
            mine[key.public] = role
    in_use = ws.signing.signing_key()
    return {
        "keys": [
            {"role": role, "key": public, "signing": in_use is not None and in_use.public == public}
            for public, role in mine.items()
        ],
        "signers": [
            {
                "name": s.name,
                "identities": list(s.identities),
                "key": s.key,
                "revoked": s.revoked,
                "mine": mine.get(s.key),
            }
            for s in ws.signing.trusted_signers()
        ],
        "file": names.SIGNERS_FILE,
    }


def trust(ws: Workspace, name: str, key: str, identities: tuple[str, ...]) -> dict[str, Any]:
    """Add signer ``name`` with public ``key`` (or ``human`` / ``machine``: this user's key
    of that role) for ``identities`` to the signers file."""
    _refuse_in_session(ws, "trust")
    public = _public(key)
    if not identities or any(not p or any(c.isspace() or c == "," for c in p) for p in identities):
        raise Invalid("--as takes identities like human, *:* or claude-code:* — none was given")
    data = _signers_bytes(ws)
    new = signers.with_signer(data or b"", name, identities, public)
    _write(ws, data, new, "keys.trusted", {"name": name, "key": public, "as": list(identities)})
    return {"name": name, "key": public, "identities": list(identities)}


def revoke(ws: Workspace, name: str) -> dict[str, Any]:
    """Mark signer ``name`` revoked: its events are named as such by ``verify``."""
    _refuse_in_session(ws, "revoke")
    data = _signers_bytes(ws)
    new = signers.revoked(data or b"", name)
    _write(ws, data, new, "keys.revoked", {"name": name})
    return {"name": name, "revoked": True}


def _public(key: str) -> str:
    if key in ("human", "machine"):
        from memkeeper.fs import keyring

        found = keyring.load(keyring.key_path(os.environ, key))
        if found is None:
            raise Invalid(f"you have no {key} key here — make one with: memkeeper keys init")
        return found.public
    try:
        keys.public_key(key)
    except keys.BadKey as err:
        raise Invalid(f"{err} — `memkeeper keys list` prints keys as ed25519:…") from None
    return key


def _refuse_in_session(ws: Workspace, verb: str) -> None:
    if ws.session is not None:
        raise Refused(
            f"keys {verb} runs inside {ws.session.agent} session {ws.session.id}: trust is a "
            f"human's to grant — nothing was changed. Run it yourself, outside the agent",
            reason="identity",
        )


def _signers_bytes(ws: Workspace) -> bytes | None:
    """The signers file's bytes (None: there is none)."""
    try:
        with open(os.path.join(ws.top, names.SIGNERS_FILE), "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write(ws: Workspace, old: bytes | None, new: bytes, event: str, data: dict[str, Any]) -> None:
    """Replace the signers file, if it still holds ``old`` (None: creates it, if it is still
    absent) — checked at the rename itself, so an editor's or git's save meanwhile (they take
    no lock) is never overwritten."""
    ws.signing.sign_as(ws.agent)  # refused here, before the file changes, if this process may not
    with ws.locked(names.SIGNERS_FILE):
        try:
            if old is None:
                atomic.stage(ws.top, names.SIGNERS_FILE, new, sync=True, create=True).finish()
            else:
                atomic.atomic_write(ws.top, names.SIGNERS_FILE, new, expected=old)
        except Raced:
            raise Invalid(
                f"{names.SIGNERS_FILE} changed while it was read — nothing was changed; run the "
                "command again"
            ) from None
        with ws.store.writing():
            ws.record(event, names.SIGNERS_FILE, None, data)

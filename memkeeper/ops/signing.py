"""Who signs this workspace's events, and whether this process may write as its agent at all:
a part of ``Workspace``, ``Workspace.signing``, made when the first event is written — a read
that writes none never loads it (docs/reference.md, "Who is acting").

Every event is signed with the process's key (``fs.keyring``: ``$MEMKEEPER_KEY``, else the
machine's key inside an agent's session, else the human's), over its chain hash. Two rules
refuse a write before anything changes (the event is recorded inside the write's transaction,
before any file is replaced): acting as ``human`` — or as a name a trusted key signs as — from
inside an agent's session needs a key trusted for it; and with ``signatures: required`` in the
policy, every write needs a key the signers file trusts for the agent. Events that record
what others did (``external``, ``git``) are signed but never refused: a read must not fail.
"""

from __future__ import annotations

import os

from memkeeper import names
from memkeeper.errors import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.events import Sign
    from memkeeper.identity import signers
    from memkeeper.identity.keys import Signer
    from memkeeper.identity.sessions import Session

_UNKNOWN = object()


class Signing:
    """Who signs the events ``agent`` writes under the root ``top``, in the agent session
    ``session`` (None: none detected)."""

    def __init__(self, top: str, agent: str, session: Session | None) -> None:
        self.top, self.agent, self.session = top, agent, session
        self._key: object = _UNKNOWN
        self._allowed: bool | None = None

    def signing_key(self) -> Signer | None:
        """The key this process signs with (None: it has none)."""
        if self._key is _UNKNOWN:
            from memkeeper.fs import keyring

            self._key = keyring.signing_key(os.environ, self.session is not None)
        found: Signer | None = self._key  # type: ignore[assignment]
        return found

    def forget_key(self) -> None:
        """Look the key up again at the next event (``keys init`` just made one)."""
        self._key, self._allowed = _UNKNOWN, None

    def sign_as(self, actor: str) -> Sign | None:
        """What signs an event written as ``actor``, after checking this process may write as
        its agent (``Refused`` otherwise)."""
        if actor == self.agent and not self._allowed:
            self._check_allowed()
        key = self.signing_key()
        return None if key is None else key.sign

    def trusted_signers(self) -> tuple[signers.Signer, ...]:
        """The repository's signers file, parsed (empty when there is none)."""
        from memkeeper.identity import signers

        try:
            with open(os.path.join(self.top, names.SIGNERS_FILE), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return ()
        return signers.parse(data, names.SIGNERS_FILE)

    def _check_allowed(self) -> None:
        from memkeeper.identity import sessions, signers

        trusted = self.trusted_signers()
        acting_as = sessions.impersonates(self.agent, self.session, signers.protected(trusted))
        required = signers.required_by(self._policy_bytes())
        if acting_as or required:
            key = self.signing_key()
            standing, name = (
                ("unknown", "")
                if key is None
                else signers.standing(trusted, key.public, self.agent)
            )
            if standing != "trusted":
                raise Refused(self._refusal(key, standing, name, acting_as), reason="identity")
        self._allowed = True

    def _refusal(self, key: Signer | None, standing: str, name: str, acting_as: bool) -> str:
        from memkeeper.identity.keys import short

        session = self.session
        if acting_as and session is not None:
            why = (
                f"this process runs in {session.agent} session {session.id} (${session.variable})"
                f", so it acts as {session.identity}; acting as {self.agent} needs a key "
                f"{names.SIGNERS_FILE} trusts for {self.agent}"
            )
        else:
            why = f"the policy requires signatures, and writing as {self.agent} needs a key "
            why += f"{names.SIGNERS_FILE} trusts for {self.agent}"
        if key is None:
            have = "this process has no key (memkeeper keys init makes one)"
        elif standing == "unknown":
            have = f"its key {short(key.public)} is not listed there"
        elif standing == "revoked":
            have = f"its key {short(key.public)} ({name}) was revoked"
        else:
            have = f"its key {short(key.public)} ({name}) may not sign as {self.agent}"
        return (
            f"{why}: {have} — nothing was changed. Leave the change to {self.agent}, or "
            f"sign with a trusted key ($MEMKEEPER_KEY; memkeeper keys list shows who is trusted)"
        )

    def _policy_bytes(self) -> bytes:
        try:
            with open(os.path.join(self.top, names.POLICY_FILE), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return b""

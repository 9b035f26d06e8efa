"""The private keys of this user on this machine: ``$XDG_CONFIG_HOME/memkeeper/keys/`` (else
``~/.config/memkeeper/keys/``), a directory only its owner may enter (0700) holding one file
per key, readable only by its owner (0600), as ssh keeps its keys: ``human.key`` signs what
the user does by hand, ``machine.key`` attests the agent sessions this machine runs.
``$MEMKEEPER_KEY`` names another key file, for one process.

A key file that others may read is refused, not used (anyone could have copied it).
"""

from __future__ import annotations

import os
import stat

from memkeeper.errors import EnvironmentFailure, Invalid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memkeeper.identity import keys

KEY_ENV = "MEMKEEPER_KEY"  # a key file to sign with, over the keyring's
ROLES = ("human", "machine")


def directory(env: Mapping[str, str]) -> str:
    """Where this user's keys live."""
    config = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "memkeeper", "keys")


def key_path(env: Mapping[str, str], role: str) -> str:
    return os.path.join(directory(env), f"{role}.key")


def load(path: str) -> keys.Signer | None:
    """The key in ``path`` (None: no such file). ``Invalid`` for a file that is not a key,
    ``EnvironmentFailure`` for one that group or others may read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise EnvironmentFailure(f"cannot read the key {path}: {err.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise EnvironmentFailure(
                f"the key {path} may be read by others (mode {stat.S_IMODE(mode):o}): it is "
                f"not used — run: chmod 600 {path}, or make a new key if others may have "
                "copied it"
            )
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    # Loaded once a key is found: a write by a process with none never needs it.
    from memkeeper.identity import keys

    try:
        name, private = keys.read_private_file(data, path)
    except keys.BadKey as err:
        raise Invalid(f"{err} — make one with: memkeeper keys init") from None
    return keys.Signer(name, private)


def signing_key(env: Mapping[str, str], in_session: bool) -> keys.Signer | None:
    """The key this process signs with: ``$MEMKEEPER_KEY``'s, else the machine's inside an
    agent's session and the human's outside it; None when there is none."""
    chosen = env.get(KEY_ENV)
    if chosen:
        found = load(chosen)
        if found is None:
            raise Invalid(f"${KEY_ENV} names {chosen}, which does not exist — unset it or fix it")
        return found
    return load(key_path(env, "machine" if in_session else "human"))


def create(env: Mapping[str, str], role: str, name: str) -> tuple[keys.Signer, bool]:
    """The key of ``role``, made (named ``name``) if there is none yet: ``(key, made)``. An
    existing key is never replaced."""
    from memkeeper.identity import keys

    path = key_path(env, role)
    found = load(path)
    if found is not None:
        return found, False
    folder = directory(env)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    private = keys.new_private()
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, keys.private_file(name, private))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)  # never over a key another process made meanwhile
    except FileExistsError:
        os.unlink(temp)
        return create(env, role, name)
    os.unlink(temp)
    return keys.Signer(name, private), True

"""The one way to get a root's policy, from the working tree or from git's index.

One meaning everywhere. No `.memkeeper.yaml` at all is the empty policy: nothing is managed,
so `patch` and `append` refuse (reason `unmanaged`), `status` lists no files and `check`
passes with a warning. A `.memkeeper.yaml` that exists must be a valid policy — an empty one
too (it lacks `version: 1`) — or every command that consults it is `Invalid` (exit 2) naming
FILE:LINE:COL, and `check` reports it as a `policy` violation (exit 6).
ruamel.yaml and pathspec are imported only when there is a file to parse.
"""

from __future__ import annotations

import os

from memkeeper.names import POLICY_FILE
from memkeeper.policy.model import Policy, empty_policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


# The policies this process parsed, by their bytes' hash and the source their errors name:
# a ``Policy`` is frozen, so a daemon, a server or a test that asks again parses no YAML.
_PARSED: dict[tuple[bytes, str], Policy] = {}
_KEEP = 8  # distinct policies remembered (a policy edited while a daemon runs)


def parse_policy(data: bytes | None, source: str = POLICY_FILE) -> Policy:
    """A policy file's bytes as a ``Policy`` (``None``: there is no file, nothing is managed);
    ``PolicyInvalid`` naming ``source``:LINE:COL for anything but a valid policy. Parsed once
    per process for the same bytes (ruamel.yaml and pathspec are loaded only then)."""
    if data is None:
        return empty_policy()
    from hashlib import sha256

    key = (sha256(data).digest(), source)
    found = _PARSED.get(key)
    if found is not None:
        return found
    from memkeeper.policy.parse import parse

    policy = parse(data, source)
    if len(_PARSED) >= _KEEP:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = policy
    return policy


def read_policy_bytes(root: str | os.PathLike[str]) -> bytes | None:
    """The working tree's policy file, or ``None`` when there is none."""
    try:
        with open(os.path.join(root, POLICY_FILE), "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def policy_bytes(
    root: str | os.PathLike[str], *, staged: Callable[[str], bytes | None] | None = None
) -> bytes | None:
    """The bytes of a root's ``.memkeeper.yaml`` (``None``: there is none). With ``staged`` (a
    reader of git's index, ``Git.staged_blob``), the version about to be committed — the
    working tree's when the policy is not in the index."""
    data = staged(POLICY_FILE) if staged is not None else None
    return read_policy_bytes(root) if data is None else data


def load_policy(
    root: str | os.PathLike[str], *, staged: Callable[[str], bytes | None] | None = None
) -> Policy:
    """The policy of a memory root (see ``policy_bytes``), parsed."""
    return parse_policy(policy_bytes(root, staged=staged))

"""Every name memkeeper gives a thing on disk or in the environment (docs/reference.md §1).

One module, so that ``.memkeeper.yaml`` or ``state.db`` is spelled once. Plain constants and
one join: cheap enough for the ``read`` path.
"""

from __future__ import annotations

import os

POLICY_FILE = ".memkeeper.yaml"  # the policy, at the root, committed
SIGNERS_FILE = ".memkeeper-signers"  # the trusted signers' public keys, at the root, committed
HOME_DIR = ".memkeeper"  # the memory home, at the root, never committed
STATE_DB = "state.db"  # the SQLite store, in the home
# Beside it, the id of the store state.db holds: a store lost or replaced is told from a new one.
STORE_MARK = "store-id"
LOCKS_DIR = "locks"  # one lock file per managed file, in the home
LOCK_SUFFIX = ".lock"  # a lock file's: after 24 hex digits of the file's path's hash
WRITE_TURN = "write.lock"  # in locks/: the local store's writers take turns on it
WAIT_DIR = "wait"  # one FIFO per queued claim, in the home
KEPT_DIR = "kept"  # hard links to files memkeeper replaced, in the home, until settled
ERROR_LOG = "error.log"  # tracebacks of unexpected errors, in the home (cli.boundary)
SYNCED_DIR = "synced"  # with a shared store: what each file held when it last agreed with it
ROOT_ID = "root-id"  # with a shared store: this root's name among the roots sharing it
POLICY_CACHE = "policy-cache.json"  # with a shared store: the policy's verdicts, in the home
STAMP_FILE = "stamps.json"  # with a shared store: this checkout's files' stat stamps
BASE_SUFFIX = ".base"  # beside a kept link: the file's path, NUL, the bytes it held
SHARED_REGION = "store:"  # the region of a root's reconciliation with a shared store: + root id

AGENT_ENV = "MEMKEEPER_AGENT"  # who is acting, when --agent is not given
ROOT_ENV = "MEMKEEPER_ROOT"  # the root, when --root is not given
STORE_ENV = "MEMKEEPER_STORE"  # a shared store for a fleet (etcd://…), over the policy's store:
# How to reach a guarded etcd (reference §12; never in the policy file, which is committed):
ETCD_CACERT_ENV = "MEMKEEPER_ETCD_CACERT"  # the CA that signed the members' certificates
ETCD_CERT_ENV = "MEMKEEPER_ETCD_CERT"  # memkeeper's client certificate (mutual TLS)
ETCD_KEY_ENV = "MEMKEEPER_ETCD_KEY"  # and its private key
ETCD_USER_ENV = "MEMKEEPER_ETCD_USER"  # etcd's own authentication: the user
ETCD_PASSWORD_FILE_ENV = "MEMKEEPER_ETCD_PASSWORD_FILE"  # a file holding its password
ETCD_PASSWORD_ENV = "MEMKEEPER_ETCD_PASSWORD"  # or the password itself
CRASH_ENV = "MEMKEEPER_CRASH_AT"  # tests only: the named crash point a process dies at
DEFAULT_AGENT = "human"

TEMP_TAG = ".memkeeper-"  # an atomic write's temp file: .NAME.memkeeper-PID.tmp, beside NAME


def temp_name(name: str, pid: int) -> str:
    """The temp file a writer with ``pid`` fills before renaming it over ``name``."""
    return f".{name}{TEMP_TAG}{pid}.tmp"


def temp_pid(name: str) -> int | None:
    """The writer's pid when ``name`` is a temp file of an atomic write: never a memory
    file, whatever the policy's globs say."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    _, tag, pid = name[:-4].rpartition(TEMP_TAG)
    ok = tag and pid.isascii() and pid.isdigit() and len(pid) <= 10  # a pid, not "²"
    return int(pid) if ok else None


def home_temp(path: str, pid: int) -> str:
    """The temp file a writer with ``pid`` fills before renaming it over ``path``, a file of
    the home (``root-id``, ``policy-cache.json``, a mark in ``synced/``)."""
    return f"{path}.{pid}.tmp"


def kept_name(rel: str, stamp_ns: int, content_hash: str) -> str:
    """The name of the hard link that keeps the file ``rel`` memkeeper replaced at
    ``stamp_ns``, which held bytes hashing to ``content_hash`` (``sha256:…``)."""
    return f"{kept_tag(rel)}-{stamp_ns}-{content_hash.removeprefix('sha256:')[:16]}"


def parse_kept(name: str) -> tuple[str, int, str] | None:
    """``(tag, stamp_ns, hash prefix)`` of a ``kept_name``; ``None`` for any other name."""
    parts = name.split("-")
    if len(parts) != 3 or not (parts[1].isascii() and parts[1].isdigit()):
        return None
    return parts[0], int(parts[1]), parts[2]


_TAGS: dict[str, str] = {}


def kept_tag(rel: str) -> str:
    """The part of a ``kept_name`` that names the file (remembered: every write asks)."""
    tag = _TAGS.get(rel)
    if tag is None:
        import hashlib

        tag = _TAGS[rel] = hashlib.sha256(rel.encode()).hexdigest()[:16]
    return tag


def home_of(root: str) -> str:
    """The memory home of a root."""
    return os.path.join(root, HOME_DIR)

"""Every name memkeeper gives a thing on disk or in the environment (docs/reference.md §1).

One module, so that ``.memkeeper.yaml`` or ``state.db`` is spelled once. Plain constants and
one join: cheap enough for the ``read`` path.
"""

from __future__ import annotations

import os

POLICY_FILE = ".memkeeper.yaml"  # the policy, at the root, committed
HOME_DIR = ".memkeeper"  # the memory home, at the root, never committed
STATE_DB = "state.db"  # the SQLite store, in the home
LOCKS_DIR = "locks"  # one lock file per managed file, in the home
WAIT_DIR = "wait"  # one FIFO per queued claim, in the home
ERROR_LOG = "error.log"  # tracebacks of unexpected errors, in the home (cli.boundary)

AGENT_ENV = "MEMKEEPER_AGENT"  # who is acting, when --agent is not given
ROOT_ENV = "MEMKEEPER_ROOT"  # the root, when --root is not given
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


def home_of(root: str) -> str:
    """The memory home of a root."""
    return os.path.join(root, HOME_DIR)

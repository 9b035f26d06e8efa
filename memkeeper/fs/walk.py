"""The walk that finds a root's managed files (which directories it enters is the policy's
``walks_into``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from memkeeper.names import temp_pid

if TYPE_CHECKING:
    from memkeeper.policy.model import FileRule, Policy


def managed_files(
    policy: Policy,
    root: str | os.PathLike[str],
    classify: Callable[[str], FileRule | None] | None = None,
) -> list[tuple[str, FileRule]]:
    """Every regular file (not symlink) under `root` that a rule matches, sorted by path
    (``classify``: the policy's, or one that remembers its answers)."""
    found = []
    judge = classify or policy.classify
    for relpath in _walk(os.fspath(root), "", policy):
        rule = judge(relpath)
        if rule is not None:
            found.append((relpath, rule))
    return sorted(found, key=lambda pair: pair[0])


def _walk(root: str, prefix: str, policy: Policy) -> Iterator[str]:
    try:
        with os.scandir(os.path.join(root, prefix)) as scan:
            entries = list(scan)
    except OSError:  # a directory removed or unreadable mid-walk holds nothing to manage
        return
    for entry in entries:
        relpath = f"{prefix}{entry.name}"
        if entry.is_file(follow_symlinks=False):
            if temp_pid(entry.name) is None:  # a killed writer's temp is not a memory file
                yield relpath
        elif entry.is_dir(follow_symlinks=False) and policy.walks_into(entry.name):
            yield from _walk(root, relpath + "/", policy)

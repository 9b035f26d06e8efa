"""The policy: which memory files memkeeper manages and how (contract §2), as frozen data.

`.memkeeper.yaml` is parsed by `policyfile` (ruamel.yaml, pathspec), imported only when a
policy must be (re)parsed; this module holds what the rest of memkeeper uses: the typed
`Policy`, first-match classification of paths, and the walk that finds managed files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, get_args

from memkeeper.fs import files as fsio

FileClass = Literal["section-owned", "append-only", "generated", "private"]
FILE_CLASSES: tuple[str, ...] = get_args(FileClass)
DEFAULT_TTL = 120
MAX_TTL = 3600
ENTRY_FIELDS = ("date", "time", "agent", "text")
# Never descended into by `managed_files`, whatever the globs say.
SKIP_DIRS = frozenset({".git", ".memkeeper", ".venv", "node_modules", "__pycache__"})
# Dot-directories walked by default because the ecosystem keeps instructions there; any other
# dot-directory is walked only when a rule's glob names it (`.clinerules/**`).
DOT_DIRS = frozenset({".github", ".cursor", ".claude"})


@dataclass(frozen=True, slots=True)
class SectionRule:
    owners: tuple[str, ...] | None  # None: anyone may patch
    strict: bool


@dataclass(frozen=True, slots=True)
class FileRule:
    index: int
    path: str
    file_class: FileClass
    strict: bool
    sections: Mapping[str, SectionRule]
    entry_template: str | None
    regex: re.Pattern[str] = field(repr=False, compare=False)

    def matches(self, relpath: str) -> bool:
        return self.regex.search(relpath) is not None

    def section_rule(self, key: str) -> SectionRule | None:
        """The rule for section `key`: the exact key first, else one named by its last segment."""
        exact = self.sections.get(key)
        return exact if exact is not None else self.sections.get(key.rsplit("/", 1)[-1])


@dataclass(frozen=True, slots=True)
class Policy:
    rules: tuple[FileRule, ...]
    default_ttl: int = DEFAULT_TTL
    max_ttl: int = MAX_TTL
    templates: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def classify(self, relpath: str) -> FileRule | None:
        """The first rule matching a root-relative POSIX path; None means unmanaged.

        memkeeper's own state and git's are never managed, whatever a glob like `**` says.
        """
        path = relpath.removeprefix("./")
        if path.split("/", 1)[0] in (".git", ".memkeeper"):
            return None
        return next((rule for rule in self.rules if rule.matches(path)), None)

    def managed_globs(self) -> tuple[str, ...]:
        """The rules' globs in rule order, as written."""
        return tuple(rule.path for rule in self.rules)

    def named_dirs(self) -> frozenset[str]:
        """Every literal directory name the globs mention (lets a walk enter `.clinerules/`)."""
        return frozenset(seg for rule in self.rules for seg in rule.path.split("/") if seg)


def empty_policy() -> Policy:
    """The policy when no `.memkeeper.yaml` exists: nothing is managed."""
    return Policy(rules=())


def load_policy(data: bytes, source: str = ".memkeeper.yaml") -> Policy:
    """Parse and validate a policy file's bytes; raises `Invalid` naming FILE:LINE:COL."""
    from memkeeper.policy.parse import parse

    return parse(data, source)


def root_policy(root: str | os.PathLike[str]) -> Policy:
    """The policy of a memory root: its `.memkeeper.yaml`, or the empty policy without one."""
    try:
        data = Path(root, ".memkeeper.yaml").read_bytes()
    except FileNotFoundError:
        return empty_policy()
    return load_policy(data)


def managed_files(policy: Policy, root: Path) -> list[tuple[str, FileRule]]:
    """Every regular file (not symlink) under `root` that a rule matches, sorted by path."""
    found = []
    for relpath in _walk(root, "", policy.named_dirs()):
        rule = policy.classify(relpath)
        if rule is not None:
            found.append((relpath, rule))
    return sorted(found, key=lambda pair: pair[0])


def _walk(root: Path, prefix: str, named: frozenset[str]) -> Iterator[str]:
    try:
        with os.scandir(root / prefix) as scan:
            entries = list(scan)
    except OSError:  # a directory removed or unreadable mid-walk holds nothing to manage
        return
    for entry in entries:
        relpath = f"{prefix}{entry.name}"
        if entry.is_file(follow_symlinks=False):
            if fsio.temp_pid(entry.name) is None:  # a killed writer's temp is not a memory file
                yield relpath
        elif entry.is_dir(follow_symlinks=False) and _walkable(entry.name, named):
            yield from _walk(root, relpath + "/", named)


def _walkable(name: str, named: frozenset[str]) -> bool:
    if name in SKIP_DIRS:
        return False
    return not name.startswith(".") or name in DOT_DIRS or name in named

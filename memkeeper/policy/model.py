"""The policy: which memory files memkeeper manages and how (docs/reference.md §2), as
frozen data.

`.memkeeper.yaml` is parsed by `policy.parse` (ruamel.yaml, pathspec), reached only through
`policy.loader` and only when a policy must be (re)parsed; this module holds what the rest of
memkeeper uses: the typed `Policy`, first-match classification of paths, the verdicts, and
which directories a walk for managed files enters (`fs.walk` does the walking).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, get_args

from memkeeper.names import HOME_DIR
from memkeeper.records import Verdict

FileClass = Literal["section-owned", "append-only", "generated", "private"]
FILE_CLASSES: tuple[str, ...] = get_args(FileClass)
# What git stores of a generated page's live regions (``regions.gitform``): a placeholder
# line (the default: live regions are invisible to git), or the text as rendered.
GitForm = Literal["placeholder", "snapshot"]
GIT_FORMS: tuple[str, ...] = get_args(GitForm)
DEFAULT_TTL = 120
MAX_TTL = 3600
MEETING_DEADLINE = 900
MEETING_KEEP_DAYS, MEETING_KEEP = 30, 1000  # resolved meetings kept: days, and how many at most
WORK_KEEP_DAYS, WORK_KEEP = 30, 1000  # ended work items kept: days, and how many at most
# ``semantic.threshold``: the score from which two claims' objectives are called similar
# (chosen on tests/data/objective_pairs.csv; docs/reference.md §4 "Similar objectives")
SEMANTIC_THRESHOLD = 0.2
TAKEOVER_GRACE = 60  # seconds after an abandon or expiry before a takeover
VERIFY_TIMEOUT = 600  # seconds a --verify command of complete may run
IDLE_AFTER = 1200  # seconds without movement before the watchdog marks a claim idle (0: off)
LEASE_DEFAULTS = {
    "default_ttl": DEFAULT_TTL,
    "max_ttl": MAX_TTL,
    "takeover_grace": TAKEOVER_GRACE,
    "verify_timeout": VERIFY_TIMEOUT,
}
ENTRY_FIELDS = ("date", "time", "agent", "text")
# Never descended into by `managed_files`, whatever the globs say.
SKIP_DIRS = frozenset({".git", HOME_DIR, ".venv", "node_modules", "__pycache__"})
# Directories of agents' hook scripts, never memory files whatever a rule's glob reaches.
HOOK_SCRIPT_DIRS = (".clinerules/hooks/",)
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
    git: GitForm = "placeholder"  # generated files only: what git stores of live regions

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
    store: str | None = (
        None  # reference §12: etcd://… for a fleet's shared store (None: local SQLite)
    )
    semantic_threshold: float = SEMANTIC_THRESHOLD
    takeover_grace: int = TAKEOVER_GRACE
    verify_timeout: int = VERIFY_TIMEOUT
    # reference §4.32: a blocked strict claim opens a meeting with each holder in its way
    meet_on_overlap: bool = False
    meeting_deadline: int = MEETING_DEADLINE  # seconds a meeting has before it escalates
    # reference §4.18: the watchdog marks a claim idle, then releases it (0: never)
    idle_after: int = IDLE_AFTER
    idle_release_after: int = 0
    meeting_keep_days: int = MEETING_KEEP_DAYS  # a resolved meeting is dropped after (§4.32)
    meeting_keep: int = MEETING_KEEP  # and beyond the newest this many resolved ones
    work_keep_days: int = WORK_KEEP_DAYS  # an ended work item is dropped after (§4.33)
    work_keep: int = WORK_KEEP  # and beyond the newest this many ended ones
    # reference §8 "Compaction": the log's events are compacted once older than this many
    # days, or beyond the newest this many (None: not bounded that way; both: never compacted)
    event_keep_days: int | None = None
    event_keep: int | None = None

    def classify(self, relpath: str) -> FileRule | None:
        """The first rule matching a root-relative POSIX path; None means unmanaged.

        memkeeper's own state and git's are never managed, whatever a glob like `**` says,
        nor are agents' hook scripts (Cline runs every file of ``.clinerules/hooks/``,
        memkeeper's own gate among them: they are programs, not memory).
        """
        path = relpath.removeprefix("./")
        if path.split("/", 1)[0] in (".git", HOME_DIR) or path.startswith(HOOK_SCRIPT_DIRS):
            return None
        return next((rule for rule in self.rules if rule.matches(path)), None)

    def managed_globs(self) -> tuple[str, ...]:
        """The rules' globs in rule order, as written."""
        return tuple(rule.path for rule in self.rules)

    def named_dirs(self) -> frozenset[str]:
        """Every literal directory name the globs mention (lets a walk enter `.clinerules/`)."""
        return frozenset(seg for rule in self.rules for seg in rule.path.split("/") if seg)

    def verdict(self, relpath: str, key: str | None = None) -> Verdict:
        """What the policy says of a file (and of one of its sections)."""
        rule = self.classify(relpath)
        if rule is None:
            return Verdict(None, False, None)
        section = rule.section_rule(key) if key is not None else None
        strict = rule.strict or (section is not None and section.strict)
        return Verdict(rule.file_class, strict, None if section is None else section.owners)

    def walks_into(self, name: str) -> bool:
        """Whether a walk for managed files enters a directory called ``name``: never
        memkeeper's or git's own, nor a tool's cache; a dot-directory only when the
        ecosystem keeps instructions there or a rule's glob names it."""
        if name in SKIP_DIRS:
            return False
        return not name.startswith(".") or name in DOT_DIRS or name in self.named_dirs()


def empty_policy() -> Policy:
    """The policy when `.memkeeper.yaml` is missing or holds no document: nothing is managed."""
    return Policy(rules=())

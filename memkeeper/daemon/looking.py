"""The daemon's look at its files, a part of ``Daemon``: the managed files listed again, and
what is at a path now.

A rescan of an unchanged tree is an ``lstat`` walk: each file's class is remembered from one
listing to the next (for the paths the last walk found, until the policy is reloaded), and a
file is read only when its stat stamp moved since memkeeper last read it (``ops.stamping``;
the stamps stay in memory between scans, the ones found are recorded in the store too).
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from typing import TYPE_CHECKING

from memkeeper.daemon.plan import Look, watch_dirs
from memkeeper.errors import Invalid
from memkeeper.fs.walk import managed_files
from memkeeper.ops.stamping import Stamping

if TYPE_CHECKING:
    from collections.abc import Callable

    from memkeeper.daemon.plan import Known
    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import FileRule, Policy
    from memkeeper.stamps import Stamped


class Looking:
    """The part of the ``Daemon`` that lists and looks at files."""

    if TYPE_CHECKING:
        ws: Workspace
        root: str
        policy: Policy
        known: Known
        rescan_s: float

    _rules: tuple[Policy, dict[str, FileRule | None]] | None = None  # the last walk's
    _stamps: dict[str, Stamped] | None = None  # every stamp known, once a scan read them

    def _list(self) -> frozenset[str]:
        """The managed files (private ones left out) now; watch their directories."""
        found = managed_files(self.policy, self.root, classify=self._memo())
        listed = frozenset(rel for rel, rule in found if rule.file_class != "private")
        rescan = self.ws.now() + self.rescan_s
        self.known = replace(self.known, dirs=watch_dirs(listed), files=listed, next_rescan=rescan)
        return listed

    def _memo(self) -> Callable[[str], FileRule | None]:
        """The policy's ``classify``, answered from the last walk's where it has the path; what
        this walk classifies is the next one's (so paths gone are forgotten)."""
        policy = self.policy
        last = self._rules[1] if self._rules is not None and self._rules[0] is policy else {}
        rules: dict[str, FileRule | None] = {}
        self._rules = (policy, rules)

        def classify(rel: str) -> FileRule | None:
            rule = last[rel] if rel in last else policy.classify(rel)
            rules[rel] = rule
            return rule

        return classify

    def _class(self, rel: str) -> str | None:
        known = self._rules
        if known is not None and known[0] is self.policy and rel in known[1]:
            rule = known[1][rel]
        else:
            rule = self.policy.classify(rel)
        return None if rule is None else rule.file_class

    def _stamping(self) -> Stamping:
        """A look at every file, with the stamps the last one knew (read from the store by
        the first), which keeps the ones it finds there too."""
        seen = Stamping(self.ws, known=self._stamps)
        self._stamps = seen.known
        return seen

    def _looks(self, paths: list[str]) -> list[Look]:
        """What is at each of ``paths`` (a scan): the files whose stamp shows what the index
        holds are taken as such from one pass of ``lstat``s; the others are looked at."""
        seen = self._stamping()
        same = seen.unchanged_among(paths)
        looks = []
        for rel in paths:
            indexed, file_class = same.get(rel), self._class(rel)
            if indexed is not None and file_class not in (None, "private"):
                looks.append(Look(rel, "file", file_class, indexed, indexed))
            else:
                looks.append(self._look(rel, seen))
        seen.save()
        return looks

    def _look(self, rel: str, seen: Stamping | None = None) -> Look:
        """What is at ``rel`` now: a managed file's hash and the index's, or its kind (with
        ``seen``, a file whose stamp shows what the index holds is not read)."""
        try:
            info = os.lstat(os.path.join(self.root, rel)) if seen is None else seen.lstat(rel)
        except (FileNotFoundError, NotADirectoryError):
            info = None
        if info is None:
            return Look(rel, "missing", self._class(rel))
        if stat.S_ISDIR(info.st_mode):
            return Look(rel, "dir" if self._walkable(rel) else "other")
        file_class = self._class(rel)
        if not stat.S_ISREG(info.st_mode) or file_class in (None, "private"):
            return Look(rel, "file" if stat.S_ISREG(info.st_mode) else "other", file_class)
        try:
            disk, indexed = (seen or Stamping(self.ws, full=True)).compare(rel)
        except Invalid:
            return Look(rel, "missing", file_class)
        return Look(rel, "file", file_class, disk, indexed)

    def _walkable(self, rel: str) -> bool:
        """A directory ``managed_files`` would walk into (not ``.git``, ``node_modules``…)."""
        return all(self.policy.walks_into(part) for part in rel.split("/"))

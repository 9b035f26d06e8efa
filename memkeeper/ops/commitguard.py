"""Claims guarding a commit (``check --staged``) and a push (``check --push``): the changed
paths git reports, the live claims the store holds, and ``claims.guard``'s verdicts as
``check`` violations (a strict claim: rule ``claimed``) and warnings (an advisory one).

The changes: with ``--staged``, the index against ``HEAD`` (``git diff --cached
--no-renames``: added, modified, deleted and both names of a rename; every indexed file
before the first commit). With ``--push``, git's pre-push input (``<local ref> <local sha>
<remote ref> <remote sha>`` lines): the commits each ref brings that the remote does not
have — ``git log LOCAL --not REMOTE_SHA --remotes=REMOTE`` (a new branch: every commit on no
ref of that remote), each commit against its parent; a deleted ref brings none; merge
commits are judged through the commits they merge. A section is compared (``markdown.touched``)
only for a path some other identity's ``FILE#KEY`` claim names.

The store: where this root has none, nothing is claimed (``check`` never creates one). A
shared store that does not answer leaves the commit unguarded with a warning: the gate's
rule (it decides without the claims nobody can read), so an etcd outage never stops work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memkeeper.claims import guard
from memkeeper.claims.targets import covers
from memkeeper.errors import EnvironmentFailure, Invalid, PolicyInvalid
from memkeeper.fs.git import Runner, _names
from memkeeper.markdown.touched import touched_sections
from memkeeper.ops.verify import violation
from memkeeper.store.errors import StoreUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path
    from typing import Any

    from memkeeper.claims.decisions import Claim
    from memkeeper.ops.workspace import Workspace
    from memkeeper.records import Violation

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_PUSH_FORMAT = "<local ref> <local sha> <remote ref> <remote sha>"


@dataclass(frozen=True, slots=True)
class Pushed:
    """One line of git's pre-push input."""

    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str


@dataclass(frozen=True, slots=True)
class Verdicts:
    """What the guard found: ``violations`` (strict claims), ``warnings``, ``hits``."""

    violations: list[Violation]
    warnings: list[str]
    hits: list[dict[str, Any]]


def parse_pushed(text: str) -> list[Pushed]:
    """git's pre-push input, one ``Pushed`` a line (blank lines skipped); ``Invalid`` naming
    the line that is not four fields with two object names."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 4 or not all(_SHA.fullmatch(f) for f in fields[1::2]):
            raise Invalid(
                f"stdin:{number}: {line[:80]!r} is not a pre-push line — check --push reads "
                f"what git gives a pre-push hook: {_PUSH_FORMAT}, one ref a line"
            )
        found.append(Pushed(*fields))
    return found


def _zero(sha: str) -> bool:
    return not sha.strip("0")


# -- the changes --------------------------------------------------------------------------


class _Repo:
    """The git questions the guard asks, through an injectable runner."""

    def __init__(self, root: Path, run: Runner) -> None:
        self.root, self.run = root, run

    def blob(self, spec: str) -> bytes | None:
        code, out = self.run(["show", spec], self.root)
        return out if code == 0 else None

    def ok(self, *args: str) -> bool:
        return self.run(list(args), self.root)[0] == 0

    def staged(self) -> dict[str, list[tuple[str | None, str | None]]]:
        """Path -> [(old spec, new spec)] of the commit being made."""
        args = ["diff", "--cached", "--name-only", "-z", "--no-renames", "--relative", "HEAD"]
        code, out = self.run([*args, "--"], self.root)
        old: str | None = "HEAD"
        if code != 0:  # no HEAD yet: every indexed file is new
            code, out = self.run(["ls-files", "--cached", "-z"], self.root)
            old = None
        if code != 0:
            raise EnvironmentFailure(f"{self.root}: git cannot list the staged files")
        return {p: [(old and f"{old}:./{p}", f":./{p}")] for p in _names(out)}

    def pushed(self, lines: Iterable[Pushed], remote: str | None) -> dict[str, list[Any]]:
        """Path -> [(old spec, new spec)], one pair per pushed commit that changes it."""
        remotes = f"--remotes={remote}" if remote and self._is_remote(remote) else "--remotes"
        found: dict[str, list[Any]] = {}
        for line in lines:
            if _zero(line.local_sha):
                continue  # a deleted ref carries no commit
            known = not _zero(line.remote_sha) and self.ok("cat-file", "-e", line.remote_sha)
            args = ["log", "-z", "--format=%x01%H", "--name-only", "--no-renames", "--relative"]
            args += [line.local_sha, "--not", *([line.remote_sha] if known else []), remotes]
            code, out = self.run([*args, "--"], self.root)
            if code != 0:
                raise EnvironmentFailure(
                    f"{self.root}: git cannot list the commits of {line.local_ref} "
                    f"({line.local_sha}) — is it a commit of this repository?"
                )
            for commit, paths in _commits(out):
                for p in paths:
                    found.setdefault(p, []).append((f"{commit}^:./{p}", f"{commit}:./{p}"))
        return found

    def _is_remote(self, name: str) -> bool:
        return self.ok("config", "--get", f"remote.{name}.url")


def _commits(out: bytes) -> list[tuple[str, list[str]]]:
    """``git log -z --format=%x01%H --name-only`` as (commit, paths)."""
    found = []
    for chunk in out.split(b"\x01")[1:]:
        head, _, rest = chunk.partition(b"\0")
        found.append((head.decode(), _names(rest.lstrip(b"\n"))))
    return found


def _changes(
    repo: _Repo, specs: dict[str, list[Any]], others: Sequence[Claim], strict: Any
) -> list[guard.Change]:
    """Each changed path, with its touched sections where another's section claim names it."""
    sectioned = [t.partition("#")[0] for c in others for t in c.targets if "#" in t]
    changes = []
    for path, pairs in specs.items():
        keys: frozenset[str] | None = None
        if any(covers(target, path) for target in sectioned):
            keys = frozenset()
            for old, new in pairs:
                more = touched_sections(old and repo.blob(old), new and repo.blob(new))
                keys = None if more is None or keys is None else keys | more
        changes.append(guard.Change(path, keys, strict(path)))
    return changes


# -- the verdicts -------------------------------------------------------------------------


def judge(
    ws: Workspace,
    root: Path,
    run: Runner,
    *,
    pushed: Sequence[Pushed] | None = None,
    remote: str | None = None,
) -> Verdicts:
    """The claims the commit being made (``pushed`` None) or the push falls under."""
    claims, now, down = _live_claims(ws)
    if down is not None:
        return Verdicts([], [down], [])
    others = [c for c in claims if not guard.own(c.agent, ws.agent) and c.is_live(now)]
    if not others:
        return Verdicts([], [], [])
    repo = _Repo(root, run)
    specs = repo.staged() if pushed is None else repo.pushed(pushed, remote)
    hits = guard.judge(_changes(repo, specs, others, _strictness(ws)), others, ws.agent, now)
    doing = "this commit changes" if pushed is None else "the push carries changes to"
    found = [
        violation(h.paths[0], None, "claimed", guard.what(h, now, doing), guard.todo(h, now))
        for h in hits
        if h.blocks
    ]
    warnings = [guard.warning(h, now, doing) for h in hits if not h.blocks]
    return Verdicts(found, warnings, [guard.as_json(h, now) for h in hits])


def _live_claims(ws: Workspace) -> tuple[list[Claim], float, str | None]:
    """The live claims (a joint one this identity shares, as its own), the claims' clock,
    and what to warn of when the shared store does not answer."""
    if not ws.has_store:
        return [], 0.0, None
    try:
        now = ws.claim_now()
        if not ws.store.any_live_claim(lambda: now):
            return [], now, None
        from memkeeper.ops.jointclaims import shared

        return shared(ws, ws.store.claim_rows()), now, None
    except StoreUnavailable as exc:
        return (
            [],
            0.0,
            (
                f"claims not checked: the shared store does not answer ({exc.message}); "
                "this goes ahead as the gate's calls do — check the claims once it is back "
                "(memkeeper claims)"
            ),
        )


def _strictness(ws: Workspace) -> Any:
    def strict(path: str) -> bool:
        try:
            return ws.rule(path).strict
        except PolicyInvalid:  # check names the policy's mistake itself
            return False

    return strict

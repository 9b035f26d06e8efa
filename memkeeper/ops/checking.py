"""``Memory.check``: ``check`` (``ops.check``) in the worktree it runs in, with the claims
guard (``ops.commitguard``) for ``--staged`` and ``--push``.

In a linked worktree of the root's repository, its own files, index and ``HEAD`` are judged
(the memory home, and so the claims, are shared by all worktrees; a commit is made in one
of them). With ``--staged`` the guard's violations join ``check``'s (one ``Failed``) and its
warnings are the payload's ``claim_warnings``; ``--push`` judges the claims alone: each
commit was checked when it was made.
"""

from __future__ import annotations

import os
from pathlib import Path

from memkeeper.errors import Failed
from memkeeper.fs import root as roots
from memkeeper.fs.git import run_git
from memkeeper.ops.check import check

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from memkeeper.fs.git import Runner
    from memkeeper.ops.commitguard import Pushed, Verdicts
    from memkeeper.ops.workspace import Workspace


def check_here(
    ws: Workspace,
    paths: Iterable[str] = (),
    *,
    staged: bool = False,
    push: Sequence[Pushed] | None = None,
    remote: str | None = None,
    run: Runner = run_git,
    full: bool = False,
) -> dict[str, Any]:
    """Every violation of the files (and, committing or pushing, of the claims); ``full``:
    every working-tree file read, trusting no stat stamp."""
    root, named = _where(ws, paths)
    if not staged and push is None:  # (the claims guard, and the Markdown parser it loads, unused)
        return check(root, named, full=full)
    from memkeeper.ops.commitguard import judge

    if push is not None:
        return _pushed(judge(ws, root, run, pushed=push, remote=remote))
    verdicts = judge(ws, root, run)
    try:
        result = check(root, named, staged=True)
    except Failed as exc:
        if verdicts.violations or verdicts.hits:
            raise _joined(exc, verdicts) from None
        raise
    if verdicts.violations:
        raise _failed(verdicts, checked=result["checked"], staged=True)
    return {**result, "claims": verdicts.hits, "claim_warnings": verdicts.warnings}


def _where(ws: Workspace, paths: Iterable[str]) -> tuple[Path, list[str]]:
    here = roots.working_tree(os.path.realpath(os.getcwd()))
    if here is not None and here != str(ws.root) and roots.main_worktree(here) == str(ws.root):
        return Path(here), [roots.relative_path(here, p) for p in paths]
    return ws.root, [ws.relpath(p) for p in paths]


def _pushed(verdicts: Verdicts) -> dict[str, Any]:
    if verdicts.violations:
        raise _failed(verdicts, checked=[], staged=False, push=True)
    payload = {"checked": [], "staged": False, "push": True, "violations": [], "warnings": []}
    return {**payload, "claims": verdicts.hits, "claim_warnings": verdicts.warnings}


def _failed(verdicts: Verdicts, **fields: Any) -> Failed:
    found = verdicts.violations
    held = len(found)
    what = "the push" if fields.get("push") else "this commit"
    return Failed(
        f"{what} touches paths under {held} strict claim(s) of another identity",
        violations=found,
        warnings=[],
        claims=verdicts.hits,
        claim_warnings=verdicts.warnings,
        **fields,
    )


def _joined(exc: Failed, verdicts: Verdicts) -> Failed:
    """``check``'s failure with the guard's violations and warnings added."""
    fields = {k: v for k, v in exc.fields.items() if k != "violations"}
    found = [*exc.violations, *verdicts.violations]
    where = len({v.path for v in found})
    return Failed(
        f"check found {len(found)} violation(s) in {where} file(s)",
        violations=found,
        **fields,
        claims=verdicts.hits,
        claim_warnings=verdicts.warnings,
    )

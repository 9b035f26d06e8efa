"""``memkeeper check [--staged] [PATH...]``: judge managed files against the policy.

For pre-commit and CI, and stateless where it can be: it reads the policy, the files (with
``--staged``, the index's versions of them) and git's ``HEAD``, and never creates
``.memkeeper/``, so it works on a fresh clone. It finds: a bad policy; broken region markers,
unknown sources and hand-edited regions (their checksums are in the files); history in an
append-only file that no longer extends its ``HEAD`` version, and an append-only file that
``HEAD`` holds but the commit (or the working tree) deletes or empties; a private file staged
for commit; merge-conflict markers, hidden text (``markdown/hiddentext.py``: bidi controls,
zero-width and other invisible characters, ANSI escapes) and text that is not UTF-8 in
managed files; and, when the state exists, open reconciliations. It warns (never fails) when
an agent's gate installed in the project cannot run on this machine (``fs/agentfiles.py``).
"""

from __future__ import annotations

import os
import re
from contextlib import nullcontext
from typing import TYPE_CHECKING

from memkeeper.errors import Failed, Invalid, PolicyInvalid
from memkeeper.fs.agentfiles import unrunnable_gates
from memkeeper.fs.git import Git
from memkeeper.fs.walk import managed_files
from memkeeper.markdown.appendonly import first_changed_line
from memkeeper.markdown.hiddentext import hidden_characters
from memkeeper.markdown.lines import LINE_END, not_text, position
from memkeeper.names import POLICY_FILE
from memkeeper.ops.stamping import CheckStamps
from memkeeper.ops.verify import violation
from memkeeper.policy.loader import parse_policy, policy_bytes
from memkeeper.regions import markers as regions
from memkeeper.regions.render import compile_region

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from memkeeper.clock import Clock
    from memkeeper.policy.model import FileRule, Policy
    from memkeeper.records import Violation

RULES = (
    "policy",
    "markers",
    "region-source",
    "region-edited",
    "append-only",
    "append-only-deleted",
    "append-only-emptied",
    "private",
    "conflict-marker",
    "hidden-text",
    "encoding",
    "reconciliation",
    "claimed",  # with --staged or --push: ops.commitguard's
)


def check(
    root: Path,
    paths: Sequence[str] = (),
    *,
    staged: bool = False,
    git: Git | None = None,
    full: bool = False,
    clock: Clock | None = None,
) -> dict[str, Any]:
    """Every violation under ``root`` (only ``paths``, if given); ``Failed`` if any. A file
    whose stat stamp shows bytes found clean before is not read again (``full``: every file
    is; with ``staged``, git's index is read, never a stamp; ``clock``: when stamps are taken)."""
    git = git or Git(root)
    if staged and not git.is_repo():
        raise Invalid(f"{root}: not a git repository — --staged judges what git would commit")
    policy, found, warnings = _policy(root, git, staged)
    warnings += unrunnable_gates(root)  # an agent's gate that cannot start here (§4.16)
    checked: list[str] = []
    if policy is not None:
        files, unmanaged = _files(root, policy, git, paths, staged)
        warnings += [f"{rel}: not managed by the policy; nothing to check" for rel in unmanaged]
        stamped = None if staged else CheckStamps(str(root), RULES, full=full, clock=clock)
        with stamped or nullcontext(None) as seen:
            checked, more = _judge_files(policy, git, files, seen)
        found += more + _deletions(root, policy, git, paths, staged)
        opened, down = _reconciliations(root, paths)
        found, warnings = found + opened, warnings + down
    if found:
        where = len({v.path for v in found})
        raise Failed(
            f"check found {len(found)} violation(s) in {where} file(s)",
            checked=checked,
            staged=staged,
            violations=found,
            warnings=warnings,
        )
    return {"checked": checked, "staged": staged, "violations": [], "warnings": warnings}


def _judge_files(
    policy: Policy, git: Git, files: list[tuple[str, FileRule]], seen: CheckStamps | None
) -> tuple[list[str], list[Violation]]:
    """The files judged and their violations: the working tree's through ``seen``, else
    (``--staged``) git's index's."""
    checked: list[str] = []
    found: list[Violation] = []
    in_git, staged = git.is_repo(), seen is None
    for rel, rule in files:
        if rule.file_class == "private":
            found += [_private(rel)] if staged and git.staged_blob(rel) is not None else []
            continue
        if seen is not None and seen.clean(rel, rule.file_class):
            checked.append(rel)  # the same bytes as a clean check before, by their stamp
            continue
        data = git.staged_blob(rel) if seen is None else seen.read(rel)
        if data is not None:
            checked.append(rel)
            head = git.head(rel) if in_git and rule.file_class == "append-only" else None
            more = judge(rel, rule.file_class, data, head, policy.templates)
            found += more
            if seen is not None:
                seen.judged(rel, rule.file_class, data, clean=not more)
    return checked, found


def _policy(root: Path, git: Git, staged: bool) -> tuple[Policy | None, list[Violation], list[str]]:

    data = policy_bytes(root, staged=git.staged_blob if staged else None)
    if data is None:
        return parse_policy(None), [], [f"no {POLICY_FILE}: nothing is managed, nothing to check"]
    try:
        return parse_policy(data), [], []
    except PolicyInvalid as exc:
        found = violation(POLICY_FILE, exc.line, "policy", exc.problem, exc.fix)
        return None, [found], []


def _files(
    root: Path, policy: Policy, git: Git, paths: Sequence[str], staged: bool
) -> tuple[list[tuple[str, FileRule]], list[str]]:
    """The managed files to judge (the staged ones, the named ones, or all of them) and the
    named paths that no rule manages."""
    if staged:  # named paths (pre-commit passes them, all of them with --all-files) are judged
        names = list(paths) if paths else git.staged()  # in their index version, changed or not
    elif paths:
        names = list(paths)
        _refuse_missing(root, policy, git, names)
    else:
        return managed_files(policy, root), []
    rules = [(name, policy.classify(name)) for name in names]
    managed = [(name, rule) for name, rule in rules if rule is not None]
    return managed, [name for name, rule in rules if rule is None and not staged]


def _refuse_missing(root: Path, policy: Policy, git: Git, names: list[str]) -> None:
    """``Invalid`` for a named path that is neither in the working tree nor in git's HEAD (a
    typo would otherwise pass as "0 files checked"); a deleted file is still judged."""
    in_git = git.is_repo()
    missing = [
        name
        for name in names
        if not os.path.lexists(root / name) and (not in_git or git.head(name) is None)
    ]
    if not missing:
        return
    import difflib

    known = [rel for rel, _ in managed_files(policy, root)]
    close = difflib.get_close_matches(missing[0], known, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise Invalid(
        f"{missing[0]}: no such file under {root}, nor in git's HEAD — {hint}check takes the "
        "paths of files (or none, for every managed file)"
    )


def _deletions(
    root: Path, policy: Policy, git: Git, paths: Sequence[str], staged: bool
) -> list[Violation]:
    """Append-only files ``HEAD`` holds that the commit (``staged``) or the working tree has
    lost. With ``--staged`` whatever paths are named: pre-commit never passes deleted ones."""
    if not git.is_repo():
        return []
    found = []
    for rel in git.deleted(staged=staged):
        rule = policy.classify(rel)
        named = staged or not paths or rel in paths
        gone = staged or not os.path.lexists(os.path.join(root, rel))  # else: untracked, kept
        if rule is not None and rule.file_class == "append-only" and named and gone:
            found.append(_deleted(rel, git.show(f"HEAD:./{rel}") or b"", staged))
    return found


# -- judging one file (pure) --------------------------------------------------------------


def judge(
    rel: str, file_class: str, data: bytes, head: bytes | None, templates: Mapping[str, str]
) -> list[Violation]:
    """Violations of one managed file's bytes (``head``: its committed version, if any)."""
    problem = not_text(data, nul_ok=True)  # a NUL is judged as hidden text
    if problem is not None:
        line = position(data, problem[1])[0]
        return [violation(rel, line, "encoding", "not UTF-8 text", "save the file as UTF-8")]
    found = _hidden(rel, data.decode("utf-8")) + _conflicts(rel, data)
    if file_class == "generated":
        found += judge_regions(rel, data, templates)
    if file_class == "append-only" and head is not None:
        found += _history(rel, data, head)
    return found


# Git's conflict markers: seven of one character at the start of a line, then whitespace or
# the line's end (``git diff --check`` tells them the same way).
_CONFLICT = re.compile(rb"([<|=>])\1{6}(?:\s.*)?")
_CONFLICT_FIX = (
    "resolve the conflict: keep the text you want and delete the marker lines (<<<<<<<, "
    "|||||||, =======, >>>>>>>); to show a marker as text, put a space before it"
)


def conflict_markers(data: bytes) -> list[tuple[int, str]]:
    """``(line, marker)`` of each merge-conflict marker line, 1-based. A ``=======`` is one
    inside a conflict, or where it cannot be a setext heading's underline (after a blank
    line, another marker or nothing); elsewhere it underlines the paragraph above it."""
    found: list[tuple[int, str]] = []
    inside, previous = False, b""
    for number, line in enumerate(LINE_END.split(data), start=1):
        match = _CONFLICT.fullmatch(line)
        marker = match[1] * 7 if match else b""
        if marker == b"=======" and not inside and previous.strip():
            marker = b""  # a setext underline
        if marker:
            found.append((number, marker.decode()))
            inside = marker != b">>>>>>>"
        previous = b"" if marker else line
    return found


def _conflicts(rel: str, data: bytes) -> list[Violation]:
    return [
        violation(
            rel,
            line,
            "conflict-marker",
            f"unresolved merge conflict: a `{marker}` marker line",
            _CONFLICT_FIX,
        )
        for line, marker in conflict_markers(data)
    ]


def _hidden(rel: str, text: str) -> list[Violation]:
    found = []
    for line, column, what, count in hidden_characters(text):
        more = f" and {count - 1} more" if count > 1 else ""
        message = f"column {column}: {what}{more} — invisible in review, read by agents"
        fix = "delete it, or write it as an HTML entity if it is meant to be there"
        found.append(violation(rel, line, "hidden-text", message, fix))
    return found


def judge_regions(rel: str, data: bytes, templates: Mapping[str, str]) -> list[Violation]:
    """Marker mistakes, unknown sources and hand-edited regions of a generated file."""

    try:
        found = regions.parse(data, rel)
    except Invalid as exc:
        what, _, fix = exc.message.partition(" — ")
        return [violation(rel, exc.fields.get("line"), "markers", _bare(what), fix)]
    out = []
    for region in found:
        try:
            compile_region(region, templates, rel)
        except Invalid as exc:
            what, _, fix = exc.message.partition(" — ")
            out.append(violation(rel, region.start_line, "region-source", _bare(what), fix))
        if region.edited(data):
            lines = f"lines {region.start_line}-{region.end_line}"
            out.append(
                violation(
                    rel,
                    region.start_line + 1,
                    "region-edited",
                    f"generated region {region.id!r} ({lines}) was edited by hand: its text "
                    "does not match the checksum on its end marker",
                    "move your text outside the markers and run `memkeeper regen`; or run "
                    "`memkeeper regen` and then `memkeeper reconcile resolve ID "
                    "--keep-human` (or --take-generated)",
                )
            )
    return out


def _bare(message: str) -> str:
    """A message without its leading ``path:line: ``, which the violation carries itself."""
    return re.sub(r"^\S*?:\d+: ", "", message, count=1)


def _history(rel: str, data: bytes, head: bytes) -> list[Violation]:
    if head.strip() and not data.strip():
        return [
            violation(
                rel,
                None,
                "append-only-emptied",
                f"this append-only file was emptied: its {_lines(head)} line(s) of committed "
                "history (HEAD) are gone",
                f"restore it (git checkout HEAD -- {rel}) and add to it with `memkeeper append`",
            )
        ]
    line = first_changed_line(_lf(head), _lf(data))
    if line is None:
        return []
    return [
        violation(
            rel,
            line,
            "append-only",
            f"history was rewritten: line {line} differs from the committed version (HEAD) "
            "of this append-only file",
            f"restore it (git checkout HEAD -- {rel}) and add to it with `memkeeper append`",
        )
    ]


def _deleted(rel: str, head: bytes, staged: bool) -> Violation:
    by = "this commit deletes it" if staged else "it is gone from the working tree"
    return violation(
        rel,
        None,
        "append-only-deleted",
        f"an append-only file with {_lines(head)} line(s) of committed history (HEAD): {by}",
        f"restore it (git checkout HEAD -- {rel}); to retire it on purpose, take it out of "
        f"the append-only rules of {POLICY_FILE} in the same commit",
    )


def _lines(data: bytes) -> int:
    """How many lines ``data`` holds (a last one without its line ending counts)."""
    ends = len(LINE_END.findall(data))
    return ends + (1 if data and not data.endswith((b"\n", b"\r")) else 0)


def _lf(data: bytes) -> bytes:
    """Line endings as ``\\n``: git may convert them between HEAD and the working tree."""
    return LINE_END.sub(b"\n", data)


def _private(rel: str) -> Violation:
    return violation(
        rel,
        None,
        "private",
        "a private file is staged for commit",
        f"unstage it (git restore --staged {rel}) and add it to .gitignore",
    )


def _reconciliations(root: Path, paths: Sequence[str]) -> tuple[list[Violation], list[str]]:
    """Open reconciliations, when there is a state (check never creates one): of generated
    regions, and of this root's files with a shared store (not other roots'); a shared store
    that does not answer is a warning, as it is to the gate (a commit goes ahead)."""
    from memkeeper.names import SHARED_REGION
    from memkeeper.ops.workspace import Workspace
    from memkeeper.store.errors import StoreUnavailable

    ws = Workspace(str(root), "check")
    try:
        if not ws.has_store:
            return [], []
        rows = ws.store.reconciliations.reconciliations()
        mine = ws.shared_region() if ws.shared else None
    except StoreUnavailable as exc:
        return [], [f"reconciliations not checked: the shared store does not answer ({exc})"]
    finally:
        ws.close()
    found = []
    for row in rows:
        if paths and row.path not in paths:
            continue
        if row.region.startswith(SHARED_REGION):
            if row.region != mine:
                continue  # another root's copy: its own check says so
            what = "this root's copy and the shared store's both changed a section"
            todo = "--keep-local (push this root's file) or --take-store"
        else:
            what = f"region {row.region!r} was edited by hand"
            todo = "--keep-human or --take-generated"
        found.append(
            violation(
                row.path,
                None,
                "reconciliation",
                f"reconciliation {row.id} is open: {what}",
                f"memkeeper reconcile show {row.id}, then resolve it with {todo}",
            )
        )
    return found, []

"""What the Claude Code gate says. Every refusal names the memkeeper command to run instead,
with paths as the session names them (relative to its directory) and, when the agent's id
does not come from ``$MEMKEEPER_AGENT``, the ``--agent`` that keeps the attribution right
(and ``--root`` when the session's directory is outside the memory root).
"""

from __future__ import annotations

import json
import os
import shlex

from memkeeper.events import iso_utc

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.gate.facts import Facts, PathFacts, SectionFacts
    from memkeeper.shell.effects import Sweep

APPENDS = frozenset({">>", "tee -a", "sponge -a"})
RESTORES = frozenset({"git checkout", "git restore"})
MOVES = frozenset({"mv", "git mv"})
LISTED = 6  # files a refusal names; past that, how many more


def shown(facts: Facts, rel: str) -> str:
    """``rel`` as the session names it: relative to its directory when that is in the root."""
    if facts.cwd == facts.root or facts.cwd.startswith(facts.root + os.sep):
        return os.path.relpath(os.path.join(facts.root, rel), facts.cwd)
    return rel


def command(facts: Facts, *args: str) -> str:
    return f"`{facts.program} " + " ".join(args) + facts.root_option + facts.agent_option + "`"


# Where a login shell finds programs whatever its profile does (Debian's /etc/profile sets PATH
# to these, dropping an activated virtual environment).
LOGIN_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


def program_for(script: str, python: str, cwd: str, top: str) -> str:
    """How a login shell in ``cwd`` runs the memkeeper this process is (``script``: its argv[0];
    ``python``: its interpreter), shell-quoted: ``memkeeper`` when it lives where every login
    shell looks; the script relative to ``cwd`` when it is inside the memory root ``top``
    (``.venv/bin/memkeeper``), else its absolute path; ``PYTHON -m memkeeper`` when it was
    started that way."""
    if os.path.basename(script) != "memkeeper":
        return f"{shlex.quote(python)} -m memkeeper"
    if os.path.dirname(script) in LOGIN_PATH:
        return "memkeeper"
    inside = cwd == top or cwd.startswith(top + os.sep)
    if inside and (script == top or script.startswith(top + os.sep)):
        rel = os.path.relpath(script, cwd)
        return shlex.quote(rel if os.sep in rel else os.path.join(os.curdir, rel))
    return shlex.quote(script)


def subject(facts: Facts, f: PathFacts) -> str:
    """The file as the tool named it: ``AGENTS.md (a symlink to CLAUDE.md)`` for a link."""
    path = shown(facts, f.rel)
    return f"{f.via} (a symlink to {path})" if f.via and f.via != path else path


def patch_steps(
    facts: Facts, path: str, section: SectionFacts | None, rel: str | None = None
) -> str:
    """How to change one section through memkeeper (``F`` holds the new body); with the MCP
    server, its tools too (``rel``: the file relative to the root, as the tools take it)."""
    if section is None:
        ref = shlex.quote(f"{path}#KEY")
        return (
            f"list its sections with {command(facts, 'sections', shlex.quote(path))}, read one "
            f"with {command(facts, 'read', ref, '--json')} (its body and rev N), then replace "
            f"its body with {command(facts, 'patch', ref, '--expect-rev N', '--body-file F')}"
            f"{_patch_tools(facts, f'{rel or path}#KEY', 'N')}"
        )
    ref = shlex.quote(f"{path}#{section.key}")
    expect = f"--expect-rev {section.rev}"
    return (
        f"read {section.key} with {command(facts, 'read', ref, '--json')}, then replace its body "
        f"with {command(facts, 'patch', ref, expect, '--body-file F')} (F holds the new body)"
        f"{_patch_tools(facts, f'{rel or path}#{section.key}', str(section.rev))}"
    )


def _patch_tools(facts: Facts, ref: str, rev: str) -> str:
    if not facts.mcp:
        return ""
    return (
        f" — or with memkeeper's MCP tools: `memory_read(ref={json.dumps(ref)})`, then "
        f"`memory_patch(ref={json.dumps(ref)}, body=..., expect_rev={rev})`"
    )


def write_refusal(facts: Facts, f: PathFacts, changed: Sequence[SectionFacts]) -> str:
    path, named = shown(facts, f.rel), subject(facts, f)
    if f.file_class == "append-only":
        rewrite = "a whole-file write would replace it"
        return f"{named} is append-only history: {rewrite}. {_append(facts, path, rel=f.rel)}"
    few = 0 < len(changed) <= 3  # name them; past that, say how to find them
    steps = [patch_steps(facts, path, s, f.rel) for s in changed] if few else []
    how = "; ".join(steps) or patch_steps(facts, path, None, f.rel)
    return (
        f"{named} is {f.file_class}: a whole-file write replaces the file and would undo other "
        f"agents' changes made since you read it. Change one section at a time: {how}. An edit "
        f"of just the lines you change is allowed too.{_regen(facts, f, path)}"
    )


def history_refusal(facts: Facts, f: PathFacts, line: int) -> str:
    path = shown(facts, f.rel)
    return (
        f"{subject(facts, f)} is append-only: this edit changes line {line} of its history, "
        f"which stays as written. {_append(facts, path, rel=f.rel)}"
    )


def region_refusal(facts: Facts, f: PathFacts, problem: str) -> str:
    path = shown(facts, f.rel)
    return (
        f"{subject(facts, f)}: {problem.replace('the patch', 'this edit')}. memkeeper renders "
        f"the text between the markers: change the text outside them, and run "
        f"{command(facts, 'regen', shlex.quote(path))} to re-render the regions (a hand edit "
        f"inside is not kept: it opens a reconciliation and fails `{facts.program} check`)."
    )


def owner_question(facts: Facts, f: PathFacts, section: SectionFacts) -> str:
    owners = ", ".join(section.owners or ())
    return (
        f"{shown(facts, f.rel)}#{section.key} belongs to {owners} (policy .memkeeper.yaml); "
        f"{facts.agent} is not an owner, so `{facts.program} patch` would refuse this change. "
        f"Approve it only if you are, or speak for, {owners}."
    )


def bash_refusal(facts: Facts, f: PathFacts, how: str) -> str:
    path, named = shown(facts, f.rel), subject(facts, f)
    if f.file_class == "append-only":
        why = (
            f"`{how}` adds text by hand, without the entry template, the event log or claim checks"
            if how in APPENDS
            else f"`{how}` would rewrite its history"
        )
        return f"{named} is append-only: {why}. {_append(facts, path, text=True, rel=f.rel)}"
    last = f.sections[-1] if f.sections and how in APPENDS else None
    if last is not None:
        lead = f"`{how}` would add to its last section, {last.key}, without a revision check"
    elif how in RESTORES:
        lead = (
            f"`{how}` would put back the committed file and discard every change since, other "
            f"agents' included. To restore one section, take its text from "
            f"`git show HEAD:{f.rel}`, then"
        )
    else:
        lead = f"`{how}` would rewrite it without a revision check, losing other agents' changes"
    steps = patch_steps(facts, path, last, f.rel)
    joiner = " " if how in RESTORES and last is None else ". Instead, "
    return f"{named} is {f.file_class}: {lead}{joiner}{steps}.{_regen(facts, f, path)}"


def discard_refusal(facts: Facts, f: PathFacts, how: str) -> str:
    """``rm``, ``unlink``, ``git rm`` or ``mv`` of one managed file."""
    path, named = shown(facts, f.rel), subject(facts, f)
    held = "every entry in it" if f.file_class == "append-only" else "the sections agents keep"
    gone = (
        f"move it, and {held}, away from the path memkeeper manages"
        if how in MOVES
        else f"delete it and {held}"
    )
    if f.file_class == "append-only":
        return (
            f"{named} is append-only history: `{how}` would {gone}. History is only ever "
            f"extended: to correct or retire an entry, add one. "
            f"{_append(facts, path, text=True, rel=f.rel)}"
        )
    return (
        f"{named} is {f.file_class}: `{how}` would {gone}, other agents' included. Leave the "
        f"file in place; to change or empty one section, {patch_steps(facts, path, None)}. "
        f"Whether a shared memory file goes is for a human to decide (in .memkeeper.yaml "
        f"too).{_regen(facts, f, path)}"
    )


def sweep_refusal(facts: Facts, sweep: Sweep, files: Sequence[PathFacts]) -> str:
    """A command reaching many files (``rm -r``, ``find -exec``, ``git stash``…) that would
    delete, rewrite or lose the changes of the managed ones in ``files``."""
    listed = _listing(facts, files)
    if sweep.git is not None:
        untracked = not sweep.git & {"staged", "unstaged"}
        what = (
            "delete managed memory files that git does not track"
            if untracked
            else "discard the uncommitted changes to managed memory files"
        )
        added = " ".join(shlex.quote(shown(facts, f.rel)) for f in files)
        steps = f"Commit them first (`git add {added} && git commit`)"
        if sweep.instead:
            left_out = " ".join(
                shlex.quote(":!" + os.path.relpath(os.path.join(facts.root, f.rel), sweep.where))
                for f in files
            )
            steps += f", or leave them out: `{sweep.instead.replace('{}', left_out)}`"
        return (
            f"`{sweep.how}` would {what}: {listed}. Other agents' recorded changes may be among "
            f"them, and memkeeper cannot bring them back. {steps}."
        )
    others = (
        "add `-not -name NAME` to the find for each"
        if sweep.how.startswith("find")
        else "name only the other files"
    )
    if sweep.discards:
        return (
            f"`{sweep.how}` would delete or move away managed memory files: {listed}, and "
            f"with them other agents' notes and history. Leave them in place ({others}); "
            f"whether shared memory goes is for a human to decide."
        )
    return (
        f"`{sweep.how}` would rewrite managed memory files without a revision check, losing "
        f"other agents' changes: {listed}. Leave them out ({others}) and change them "
        f"through memkeeper: {command(facts, 'sections PATH')}, "
        f"{command(facts, 'read PATH#KEY --json')}, then "
        f"{command(facts, 'patch PATH#KEY --expect-rev N --body-file F')} (append-only "
        f"history: {command(facts, 'append PATH', shlex.quote('ENTRY'))})."
    )


def _listing(facts: Facts, files: Sequence[PathFacts]) -> str:
    def one(f: PathFacts) -> str:
        what = "append-only history" if f.file_class == "append-only" else f.file_class
        return f"{shown(facts, f.rel)} ({what})"

    more = len(files) - LISTED
    return ", ".join(one(f) for f in files[:LISTED]) + (f" and {more} more" if more > 0 else "")


def claim_reason(facts: Facts, target: str, claim: Claim) -> str:
    """Deny (strict) or ``WAIT:`` (advisory) for another agent's claim over ``target``."""
    rel, _, key = target.partition("#")
    where = shown(facts, rel) + (f"#{key}" if key else "")
    left = claim.seconds_left(facts.now)
    who = (
        f"{claim.agent} holds a{' strict' if claim.strict else 'n advisory'} {claim.mode} claim "
        f"{claim.id} on {', '.join(claim.targets)} (expires in {left}s, at "
        f"{iso_utc(claim.expires_at)})"
    )
    queue = command(facts, "claim", shlex.quote(where), f"--wait {left + 5}")
    if claim.strict:
        return (
            f"{where} is claimed: {who}. Wait for its release or expiry: {queue} queues you "
            f"until then; re-read {where} before changing it."
        )
    return (
        f"WAIT: {who}. Your change to {where} may go ahead, but they may be changing it too: "
        f"coordinate first, or queue with {queue}."
    )


def _append(facts: Facts, path: str, *, text: bool = False, rel: str | None = None) -> str:
    how = "--text 'ENTRY'" if text else "--entry-file F"
    other = "--entry-file F" if text else "--text 'ENTRY'"
    tool = (
        f"; with memkeeper's MCP tools: `memory_append(path={json.dumps(rel or path)}, text=...)`"
        if facts.mcp
        else ""
    )
    return (
        f"Add a new entry at the end instead: "
        f"{command(facts, 'append', shlex.quote(path), how)} (or {other}{tool})."
    )


def _regen(facts: Facts, f: PathFacts, path: str) -> str:
    if f.file_class != "generated":
        return ""
    regen = command(facts, "regen", shlex.quote(path))
    return f" The generated regions between memkeeper's markers are rendered by {regen}."

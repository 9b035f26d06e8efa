"""``memkeeper hook claude-code``: Claude Code's PreToolUse gate and PostToolUse indexer.

Reads the hook's JSON on stdin. PreToolUse: gathers the facts ``gate.decide`` needs through
a ``Workspace`` and prints its answer (nothing for a silent allow). PostToolUse: re-indexes the
managed files the tool just changed, attributing the new revisions to the agent. The root
comes from ``--root``, else ``$MEMKEEPER_ROOT``, else the session's ``cwd`` as the CLI finds
it; a root without a policy or state is left alone (nothing is created). Always exit 0: on a
failure of its own the gate allows the call and says why on stderr (exit 2 would block it).
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid, MemkeeperError
from memkeeper.fs import files as fsio
from memkeeper.fs import root as repo
from memkeeper.gate import decide as gate
from memkeeper.gate import facts as gatefacts
from memkeeper.gate.facts import Facts, PathFacts, SectionFacts
from memkeeper.gate.payload import BadPayload, ToolCall, parse_call
from memkeeper.names import AGENT_ENV, HOME_DIR, POLICY_FILE, STATE_DB
from memkeeper.ops import read
from memkeeper.ops.workspace import Workspace

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO


def run(
    kind: str,
    root: str | None,
    agent: str | None,
    stdin: BinaryIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Answer one hook call; always 0."""
    try:
        call = parse_call(stdin.read(), os.getcwd())
        if call.event == "PreToolUse":
            answer = _answer(call, root, agent)
            if answer is not None:
                stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        elif call.event == "PostToolUse":
            _index(call, root, agent)
    except BadPayload as exc:
        stderr.write(f"memkeeper hook {kind}: cannot read the hook input ({exc}); allowed\n")
    except Exception as exc:  # the boundary: never block a tool call by crashing
        what = exc.message if isinstance(exc, MemkeeperError) else f"{type(exc).__name__}: {exc}"
        stderr.write(f"memkeeper hook {kind}: the gate failed ({what}); allowed\n")
    return 0


def _answer(call: ToolCall, root: str | None, agent: str | None) -> dict[str, object] | None:
    paths = gate.targets(call)
    opened = _open(call, root, agent) if paths else None
    if opened is None:
        return None
    ws, agent_option = opened
    try:
        facts = gather(ws, call, paths, agent_option)
    finally:
        ws.close()
    return gate.hook_output(gate.decide(call, facts))


def _index(call: ToolCall, root: str | None, agent: str | None) -> None:
    paths = gate.targets(call)
    opened = _open(call, root, agent) if paths else None
    if opened is None:
        return
    ws = opened[0]
    detail = {"tool": call.tool, "tool_use_id": call.tool_use_id}
    try:
        for path in paths:
            rel = locate(str(ws.root), path)
            if rel is not None and _indexable(ws, rel):
                ws.refresh(rel, actor=ws.agent, detail=detail)
    finally:
        ws.close()


def _indexable(ws: Workspace, rel: str) -> bool:
    is_file = _kind(os.path.join(ws.root, rel)) == "file"
    return is_file and ws.rule(rel).file_class in gatefacts.MANAGED


def _open(call: ToolCall, root: str | None, agent: str | None) -> tuple[Workspace, str] | None:
    """The memory of the session's root and the ``--agent`` option for suggested commands;
    None when the root has neither a policy nor memkeeper state."""
    top = repo.find_root(root, cwd=call.cwd)
    if not os.path.exists(os.path.join(top, POLICY_FILE)) and not os.path.exists(
        os.path.join(top, HOME_DIR, STATE_DB)
    ):
        return None
    from_env = agent is None and bool(os.environ.get(AGENT_ENV))
    who = agent or os.environ.get(AGENT_ENV) or f"claude-code:{call.session_id}".rstrip(":")
    return Workspace(top, who), "" if from_env else f" --agent {shlex.quote(who)}"


def gather(ws: Workspace, call: ToolCall, paths: tuple[str, ...], agent_option: str) -> Facts:
    """The facts about ``paths`` (those inside the root) and the live claims."""
    root = str(ws.root)
    found = {}
    for path in paths:
        rel = locate(root, path)
        if rel is not None:
            found[path] = path_facts(ws, rel)
    now = ws.now()
    live = bool(found) and ws.store.any_live_claim(now)
    claims = tuple(ws.store.claim_rows()) if live else ()
    cwd = os.path.realpath(call.cwd)
    return Facts(root, cwd, ws.agent, agent_option, now, claims, found)


def locate(root: str, path: str) -> str | None:
    """``path`` (absolute) relative to ``root``, through symlinked directories; None when
    it lies outside."""
    parent, name = os.path.split(path)
    full = os.path.join(os.path.realpath(parent), name)
    if not full.startswith(root + os.sep):
        return None
    try:
        return fsio.confine(root, full[len(root) + 1 :].replace(os.sep, "/"))
    except Invalid:
        return None


def path_facts(ws: Workspace, rel: str) -> PathFacts:
    full = os.path.join(ws.root, rel)
    kind = _kind(full)
    parent_is_dir = os.path.isdir(os.path.dirname(full))
    rule = ws.rule(rel)
    file_class, strict = rule.file_class, rule.strict
    if file_class not in gatefacts.MANAGED or kind != "file":
        return PathFacts(rel, kind, parent_is_dir, file_class, strict)
    sections = _sections(ws, rel) if file_class != "append-only" else ()
    data = fsio.read_bytes(ws.root, rel)
    return PathFacts(rel, kind, parent_is_dir, file_class, strict, data, sections)


def _sections(ws: Workspace, rel: str) -> tuple[SectionFacts, ...]:
    try:
        found = read.sections(ws, rel)
    except MemkeeperError:
        return ()  # not readable as Markdown (not UTF-8…): judged without its sections
    out = []
    for s in found:
        verdict = ws.rule(rel, s.key)
        out.append(
            SectionFacts(s.key, s.start_line, s.end_line, s.rev, verdict.owners, verdict.strict)
        )
    return tuple(out)


def _kind(full: str) -> gatefacts.Kind:
    try:
        mode = os.lstat(full).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"

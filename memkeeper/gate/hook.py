"""``memkeeper hook AGENT``: every agent's pre-tool gate and post-tool indexer (§7, §10).

Reads the hook's JSON on stdin; the agent's adapter (``gate.agents``, told from the payload's
shape as well as from argv) turns it into the core's tool calls. Before a tool runs: gathers
the facts ``gate.decide`` needs through a ``Workspace`` and answers in the agent's format.
After: re-indexes the managed files the tool changed, attributing the new revisions to the
agent. Each path is judged as the file it reaches (``gate.reach``: symlinks followed, the
memory root found from that file, or ``--root``/``$MEMKEEPER_ROOT``); a call reaching into
several roots is decided in each and the answers combined; a root without a policy or state
is left alone (nothing is created). On a failure of its own the gate answers the agent's
*allow* on its non-blocking path and says why on stderr — also for agents whose hooks fail
closed (Copilot denies on a crash or a non-zero exit).
"""

from __future__ import annotations

import os
import shlex
import stat
import sys

from memkeeper.errors import Invalid, MemkeeperError
from memkeeper.fs import files as fsio
from memkeeper.gate import agents, reach
from memkeeper.gate import decide as gate
from memkeeper.gate import facts as gatefacts
from memkeeper.gate.facts import Decision, Facts, PathFacts, SectionFacts
from memkeeper.gate.payload import BadPayload, ToolCall, load_payload
from memkeeper.names import AGENT_ENV
from memkeeper.ops import read
from memkeeper.ops.workspace import Workspace
from memkeeper.shell.effects import Sweep, Target
from memkeeper.store.errors import StoreUnavailable

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping
    from typing import BinaryIO, TextIO

    from memkeeper.claims.decisions import Claim
    from memkeeper.gate.agents.base import Answer, HookInput, Phase
    from memkeeper.shell.effects import Effect


def run(
    kind: str,
    root: str | None,
    agent: str | None,
    stdin: BinaryIO,
    stdout: TextIO,
    stderr: TextIO,
    event: str | None = None,
    cwd: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Answer one hook call of agent ``kind`` (``event``: the hook's event, for agents that
    name it on argv); the exit code that agent reads. ``cwd`` (default: this process's) is
    the directory a payload without one is read in, and ``environ`` the agent's environment
    (the served gate passes what the request says of it)."""
    phase: Phase = "other"
    try:
        adapter = agents.adapter(kind)
    except Exception as exc:  # cannot even load the adapter: say so, exit 0, print nothing
        stderr.write(f"memkeeper hook {kind}: the gate failed ({type(exc).__name__}: {exc})\n")
        return 0
    try:
        payload = load_payload(stdin.read())
        adapter = agents.detect(payload, adapter)
        got = adapter.parse(payload, event, os.getcwd() if cwd is None else cwd)
        phase = got.phase
        who = agent or environ.get(AGENT_ENV) or f"{adapter.name}:{got.session}".rstrip(":")
        named = agent is not None or not environ.get(AGENT_ENV)
        if phase == "pre":
            decisions = [_decision(call, root, who, named, adapter.name) for call in got.calls]
            answer = adapter.render(gate.combine(decisions))
        else:
            for call in got.calls if phase in ("post", "failed", "indexed") else ():
                if call.tool == "Read":
                    _read(call, root, who)
                else:
                    _index(call, root, who)
            answer = adapter.allow(phase)
            if adapter.tell is not None and phase in ("start", "prompt", "post", "failed"):
                answer = _told(adapter.tell, phase, got, root, who, adapter.name) or answer
    except BadPayload as exc:
        stderr.write(
            f"memkeeper hook {adapter.name}: cannot read the hook input ({exc}); allowed\n"
        )
        answer = _allowed(adapter.allow, phase)
    except Exception as exc:  # the boundary: never block a tool call by crashing
        what = exc.message if isinstance(exc, MemkeeperError) else f"{type(exc).__name__}: {exc}"
        stderr.write(f"memkeeper hook {adapter.name}: the gate failed ({what}); allowed\n")
        answer = _allowed(adapter.allow, phase)
    stdout.write(answer.stdout)
    return answer.code


def _told(
    tell: Callable[[Phase, str], Answer],
    phase: Phase,
    got: HookInput,
    root: str | None,
    who: str,
    kind: str,
) -> Answer | None:
    """The channel's answer at ``phase`` (None: nothing to say)."""
    from memkeeper.gate import channel

    cwd = got.calls[0].cwd if got.calls else got.cwd
    text = channel.said(phase, cwd, root, who, kind)
    return tell(phase, text) if text else None


def _allowed(allow: Callable[[Phase], Answer], phase: Phase) -> Answer:
    from memkeeper.gate.agents.base import Answer

    try:
        return allow(phase)
    except Exception:  # an adapter's own allow cannot fail the call either
        return Answer()


def _decision(call: ToolCall, root: str | None, who: str, named: bool, kind: str) -> Decision:
    effects = gate.targets(call)
    decisions = []
    login_shell = agents.setup(kind).login_shell
    for ws, agent_option in _memories(effects, root, who, named):
        try:
            facts = gather(ws, call, effects, agent_option, kind, login_shell)
        finally:
            ws.close()
        decisions.append(gate.decide(call, facts))
    return gate.combine(decisions)


def _index(call: ToolCall, root: str | None, who: str) -> None:
    effects = gate.targets(call)
    detail = {"tool": call.tool, "tool_use_id": call.tool_use_id}
    for ws, _ in _memories(effects, root, who, False):
        try:
            for rel in _changed(ws, effects):
                if _indexable(ws, rel):
                    ws.refresh(rel, actor=ws.agent, detail=detail)
        finally:
            ws.close()


def _read(call: ToolCall, root: str | None, who: str) -> None:
    """A Read of a section-owned file, seen after it ran: written down as a read of each of
    its sections (``ops.read``), for the channel's "changed since you read it"."""
    path = os.path.realpath(call.file_path or "")
    top = reach.memory_root(path, root) if call.file_path else None
    if top is None or _kind(path) != "file":
        return
    ws = Workspace(top, who)
    try:
        rel = os.path.relpath(path, top)
        if ws.has_store and ws.rule(rel).file_class == "section-owned":
            read.read(ws, rel)
    finally:
        ws.close()


def _changed(ws: Workspace, effects: tuple[Effect, ...]) -> list[str]:
    """The root-relative files in ``ws`` that ``effects`` may have changed."""
    rels = [rel for t in effects if isinstance(t, Target) and (rel := _rel(ws, t)) is not None]
    sweeps = _sweeps(ws, effects)
    tree = _tree(ws, sweeps.values())
    rels += [f.rel for path, f in tree if any(s.covers(path) for s in sweeps.values())]
    return list(dict.fromkeys(rels))


def _indexable(ws: Workspace, rel: str) -> bool:
    is_file = _kind(os.path.join(ws.top, rel)) == "file"
    return is_file and ws.rule(rel).file_class in gatefacts.MANAGED


def _memories(
    effects: tuple[Effect, ...], root: str | None, who: str, named: bool
) -> Iterator[tuple[Workspace, str]]:
    """A ``Workspace`` (closed by the caller) for each memory root the effects reach, with
    the ``--agent`` option for suggested commands (none when the environment names it)."""
    tops = []
    for effect in effects:
        top = reach.root_of(effect, root)
        if top is not None and top not in tops:
            tops.append(top)
    for top in tops:
        yield Workspace(top, who), f" --agent {shlex.quote(who)}" if named else ""


def gather(
    ws: Workspace,
    call: ToolCall,
    effects: tuple[Effect, ...],
    agent_option: str,
    kind: str | None = None,
    login_shell: bool = False,
) -> Facts:
    """The facts about what ``effects`` reach inside ``ws``'s root, and the live claims; with
    ``kind`` (the agent), whether it has memkeeper's MCP server here — looked up only when a
    managed file is reached, since only a refusal names the tools; with ``login_shell`` (the
    agent's commands run in one), memkeeper named by a path that works there."""
    cwd, top = os.path.realpath(call.cwd), ws.top
    inside = cwd == top or cwd.startswith(top + os.sep)
    paths: dict[str, PathFacts] = {}
    entries: dict[str, PathFacts] = {}
    for target in (e for e in effects if isinstance(e, Target)):
        rel = _rel(ws, target)
        if rel is not None:
            found = path_facts(ws, rel, _via(target, top, cwd if inside else top))
            (paths if target.follow else entries)[target.path] = found
    sweeps = _sweeps(ws, effects)
    tree = _tree(ws, sweeps.values())
    paths.update(_tree_facts(tree, sweeps.values(), paths))
    now = 0.0
    claims: tuple[Claim, ...] = ()
    try:
        if paths or entries:
            now = ws.claim_now()
            if ws.store.any_live_claim(lambda: now):
                from memkeeper.ops.jointclaims import shared  # a join's claim is each one's

                claims = tuple(shared(ws, ws.store.claim_rows()))
    # A shared store down: the policy still decides, without the claims nobody can read now.
    except StoreUnavailable:
        pass
    root_option = "" if inside else f" --root {shlex.quote(top)}"
    files = tuple(path for path, _ in tree)
    reached = (*paths.values(), *entries.values())
    mcp = kind is not None and any(f.file_class in gatefacts.MANAGED for f in reached)
    program = "memkeeper"
    if login_shell:
        from memkeeper.gate.messages import program_for

        program = program_for(sys.argv[0], sys.executable, cwd, top)
    return Facts(
        *(top, cwd, ws.agent, agent_option, now, claims, paths, entries, sweeps, files),
        *(root_option, mcp and _has_mcp(top, kind or ""), program),
    )


def _has_mcp(top: str, kind: str) -> bool:
    from memkeeper.gate.mcp import registered

    return registered(top, kind)


def _rel(ws: Workspace, target: Target) -> str | None:
    """The target as a path relative to ``ws``'s root, or None when it is not inside."""
    return locate(ws.top, reach.reached(target.path, target.follow))


def _via(target: Target, top: str, base: str) -> str:
    """The symlink a followed target names ("" for none), relative to ``base`` (the
    session's directory, or the root) when it lies in the root ``top``."""
    if not target.follow or not os.path.islink(target.path):
        return ""
    link = reach.reached(target.path, False)
    return os.path.relpath(link, base) if link.startswith(top + os.sep) else link


def _sweeps(ws: Workspace, effects: tuple[Effect, ...]) -> dict[Sweep, Sweep]:
    """The sweeps that reach into ``ws``'s root, resolved, when they can reach a file."""
    out = {}
    for sweep in (e for e in effects if isinstance(e, Sweep)):
        done = reach.resolved(sweep)
        if done is None or locate(ws.top, os.path.join(done.top, "x")) is None:
            continue  # not in this root (a sweep of the root itself is in it)
        try:
            mode = os.lstat(done.top).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and done.mindepth == 0):
            out[sweep] = done
    return out


def _tree(ws: Workspace, sweeps: Collection[Sweep]) -> list[tuple[str, PathFacts]]:
    """The root's managed files (absolute path, facts by the policy) when a sweep needs
    them; the policy is parsed and the root walked only then."""
    if not sweeps:
        return []
    from memkeeper.fs.walk import managed_files
    from memkeeper.policy.loader import load_policy

    found = managed_files(load_policy(ws.top), ws.top)
    return [
        (os.path.join(ws.top, rel), PathFacts(rel, "file", True, rule.file_class, rule.strict))
        for rel, rule in found
    ]


def _tree_facts(
    tree: list[tuple[str, PathFacts]], sweeps: Collection[Sweep], known: dict[str, PathFacts]
) -> dict[str, PathFacts]:
    """The facts of the managed files the sweeps pick from, with git's view of them when a
    sweep asks git (a file a target names keeps its full facts)."""
    asking = [s for s in sweeps if s.git is not None]
    ignored = any("ignored" in (s.git or ()) for s in asking)
    tops = {top for top in (reach.worktree(s.where) for s in asking) if top is not None}
    states = {top: reach.git_states(top, ignored=ignored) for top in tops}
    out = {}
    for path, found in tree:
        seen = [reach.state_of(os.path.relpath(path, top), states[top]) for top in states]
        out[path] = known.get(path, found)._replace(git=frozenset().union(*seen))
    return out


def locate(root: str, path: str) -> str | None:
    """The resolved absolute ``path`` relative to ``root``; None when it lies outside."""
    if not path.startswith(root + os.sep):
        return None
    try:
        return fsio.confine(root, path[len(root) + 1 :].replace(os.sep, "/"))
    except Invalid:
        return None


def path_facts(ws: Workspace, rel: str, via: str = "") -> PathFacts:
    full = os.path.join(ws.top, rel)
    kind = _kind(full)
    parent_is_dir = os.path.isdir(os.path.dirname(full))
    rule = ws.rule(rel)
    file_class, strict = rule.file_class, rule.strict
    if file_class not in gatefacts.MANAGED or kind != "file":
        return PathFacts(rel, kind, parent_is_dir, file_class, strict, via=via)
    sections = _sections(ws, rel) if file_class != "append-only" else ()
    data = fsio.read_bytes(ws.top, rel)
    return PathFacts(rel, kind, parent_is_dir, file_class, strict, data, sections, via)


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

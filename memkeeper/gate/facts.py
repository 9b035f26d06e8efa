"""What the gate decides from: the facts about one tool call's paths, and its decision.

Frozen data, shared by ``decide`` (the rules) and ``messages`` (the words), gathered by
``hook`` from the store and the disk.
"""

from __future__ import annotations

from memkeeper.records import Record

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    from memkeeper.claims.decisions import Claim
    from memkeeper.shell.effects import GitState, Sweep

    Verdict = Literal["allow", "deny", "ask"]
    Kind = Literal["file", "dir", "missing", "other"]

MANAGED = frozenset({"section-owned", "generated", "append-only"})  # private: the agent's own


class SectionFacts(Record):
    __slots__ = ("key", "start_line", "end_line", "rev", "owners", "strict")
    key: str
    start_line: int
    end_line: int
    rev: int
    owners: tuple[str, ...] | None  # None: anyone may change it
    strict: bool  # a policy rule makes claims on it strict

    def __init__(
        self,
        key: str,
        start_line: int,
        end_line: int,
        rev: int,
        owners: tuple[str, ...] | None,
        strict: bool,
    ) -> None:
        self._fill(key, start_line, end_line, rev, owners, strict)


class PathFacts(Record):
    """One path inside the root, as the policy and the disk see it now."""

    __slots__ = (
        "rel",
        "kind",
        "parent_is_dir",
        "file_class",
        "strict",
        "data",
        "sections",
        "via",
        "git",
    )
    rel: str  # the file the path reaches (through symlinks, when it is followed)
    kind: Kind
    parent_is_dir: bool
    file_class: str | None  # None: unmanaged
    strict: bool
    data: bytes  # a managed file's bytes
    sections: tuple[SectionFacts, ...]  # a section-owned or generated file's sections
    via: str  # the symlink the tool named, as the session names it ("": no symlink)
    git: frozenset[GitState]  # what git sees changed (asked for sweeps only)

    def __init__(
        self,
        rel: str,
        kind: Kind,
        parent_is_dir: bool,
        file_class: str | None,
        strict: bool = False,
        data: bytes = b"",
        sections: tuple[SectionFacts, ...] = (),
        via: str = "",
        git: frozenset[GitState] = frozenset(),
    ) -> None:
        self._fill(rel, kind, parent_is_dir, file_class, strict, data, sections, via, git)


class Facts(Record):
    """What is known in one memory root about the paths a tool call names. ``paths``: each
    path as the file it reaches; ``entries``: a path whose symlink is not followed (``rm``,
    ``mv`` away); a path in another root, or in none, is absent from both. ``sweeps``: each
    sweep of a Bash command that reaches into this root, with its paths resolved (a git
    one's ``top`` is the working tree), and ``tree``: the root's managed files (keys of
    ``paths``) for them to pick from."""

    __slots__ = (
        "root",
        "cwd",
        "agent",
        "agent_option",
        "now",
        "claims",
        "paths",
        "entries",
        "sweeps",
        "tree",
        "root_option",
        "mcp",
        "program",
    )
    root: str
    cwd: str  # the session's directory, resolved: commands name paths relative to it
    agent: str
    agent_option: str  # `` --agent ID`` for the commands suggested, unless the env names it
    now: float
    claims: tuple[Claim, ...]
    paths: Mapping[str, PathFacts]
    entries: Mapping[str, PathFacts]
    sweeps: Mapping[Sweep, Sweep]
    tree: tuple[str, ...]
    root_option: str  # `` --root DIR`` when the session's directory is outside the root
    mcp: bool  # the agent has memkeeper's MCP server here: refusals spell its tools too
    program: str  # how the commands suggested name memkeeper, shell-quoted ("memkeeper")

    def __init__(
        self,
        root: str,
        cwd: str,
        agent: str,
        agent_option: str,
        now: float,
        claims: tuple[Claim, ...] = (),
        paths: Mapping[str, PathFacts] | None = None,
        entries: Mapping[str, PathFacts] | None = None,
        sweeps: Mapping[Sweep, Sweep] | None = None,
        tree: tuple[str, ...] = (),
        root_option: str = "",
        mcp: bool = False,
        program: str = "memkeeper",
    ) -> None:
        self._fill(
            *(root, cwd, agent, agent_option, now, claims),
            *({} if paths is None else paths, {} if entries is None else entries),
            *({} if sweeps is None else sweeps, tree, root_option, mcp, program),
        )


class Decision(Record):
    __slots__ = ("verdict", "reason", "context")
    verdict: Verdict
    reason: str  # empty with "allow": say nothing
    context: str  # for Claude's context (Claude Code shows an allow's reason to nobody)

    def __init__(self, verdict: Verdict = "allow", reason: str = "", context: str = "") -> None:
        self._fill(verdict, reason, context)

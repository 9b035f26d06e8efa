"""What the gate decides from: the facts about one tool call's paths, and its decision.

Frozen data, shared by ``decide`` (the rules) and ``messages`` (the words), gathered by
``hook`` from the store and the disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from memkeeper.gate.effects import GitState, Sweep
    from memkeeper.leases.decisions import Claim

Verdict = Literal["allow", "deny", "ask"]
Kind = Literal["file", "dir", "missing", "other"]
MANAGED = frozenset({"section-owned", "generated", "append-only"})  # private: the agent's own


@dataclass(frozen=True, slots=True)
class SectionFacts:
    key: str
    start_line: int
    end_line: int
    rev: int
    owners: tuple[str, ...] | None  # None: anyone may change it
    strict: bool  # a policy rule makes claims on it strict


@dataclass(frozen=True, slots=True)
class PathFacts:
    """One path inside the root, as the policy and the disk see it now."""

    rel: str  # the file the path reaches (through symlinks, when it is followed)
    kind: Kind
    parent_is_dir: bool
    file_class: str | None  # None: unmanaged
    strict: bool = False
    data: bytes = b""  # a managed file's bytes
    sections: tuple[SectionFacts, ...] = ()  # a section-owned or generated file's sections
    via: str = ""  # the symlink the tool named, as the session names it ("": no symlink)
    git: frozenset[GitState] = frozenset()  # what git sees changed (asked for sweeps only)


@dataclass(frozen=True, slots=True)
class Facts:
    """What is known in one memory root about the paths a tool call names. ``paths``: each
    path as the file it reaches; ``entries``: a path whose symlink is not followed (``rm``,
    ``mv`` away); a path in another root, or in none, is absent from both. ``sweeps``: each
    sweep of a Bash command that reaches into this root, with its paths resolved (a git
    one's ``top`` is the working tree), and ``tree``: the root's managed files (keys of
    ``paths``) for them to pick from."""

    root: str
    cwd: str  # the session's directory, resolved: commands name paths relative to it
    agent: str
    agent_option: str  # `` --agent ID`` for the commands suggested, unless the env names it
    now: float
    claims: tuple[Claim, ...] = ()
    paths: Mapping[str, PathFacts] = field(default_factory=dict)
    entries: Mapping[str, PathFacts] = field(default_factory=dict)
    sweeps: Mapping[Sweep, Sweep] = field(default_factory=dict)
    tree: tuple[str, ...] = ()
    root_option: str = ""  # `` --root DIR`` when the session's directory is outside the root


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict = "allow"
    reason: str = ""  # empty with "allow": say nothing
    context: str = ""  # for Claude's context (Claude Code shows an allow's reason to nobody)

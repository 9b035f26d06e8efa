"""What the per-agent hook tests (``test_hooks_*.py``) share, so that each agent's file holds
only what is its agent's own: the payload shapes and where they come from, the answer its
agent reads around each reason, and the table of calls.

Shared here: a copy of sample-repo set up as ``memkeeper init`` leaves it (``initialised``;
``module_repo`` for the rows of a table, which the pre-tool gate only reads), ``"{root}"``
filled into a payload (``fill``), the event log (``events``), the scenes several agents'
tests set (a claim on CLAUDE.md's build section, the edit a post-tool event reports), the
answer of a gate that could not judge (``assert_allowed_because``), and the reasons the
gate gives for the rows every table has, worded for one agent as ``gate/messages.py`` words
them (``Reasons``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memkeeper.api import Memory
from memkeeper.ops.setup import init
from tests.conftest import SAMPLE_REPO, Run, run_cli

DECISIONS = "memory/decisions.md"
BUILD = "CLAUDE.md#inventory-service/build"


def initialised(root: Path) -> Path:
    """A copy of sample-repo at ``root`` in its own git repository, as ``memkeeper init``
    leaves it (initialised in this process: the CLI's start-up is not what is tested)."""
    shutil.copytree(SAMPLE_REPO, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    memory = Memory.open(root)
    try:
        init(memory.workspace, None)
    finally:
        memory.close()
    return root


def module_repo(name: str) -> object:
    """A module-scoped fixture, ``repo = module_repo(NAME)``: one initialised repository for
    a table's rows (the pre-tool gate only reads, so the rows need no copy each)."""

    @pytest.fixture(scope="module")
    def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return initialised(tmp_path_factory.mktemp(name) / "repo")

    return repo


def fill(value: Any, root: Path) -> Any:
    """``value`` with every ``"{root}"`` in its strings replaced by the repository's path."""
    if isinstance(value, str):
        return value.replace("{root}", str(root))
    if isinstance(value, list):
        return [fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, root) for k, v in value.items()}
    return value


def events(root: Path) -> list[dict[str, Any]]:
    """The event log, oldest first, as ``memkeeper events --json`` prints it."""
    lines = run_cli(root, "events", "--json").stdout.splitlines()
    return [json.loads(line) for line in lines]


def last_event(root: Path) -> dict[str, Any]:
    return events(root)[-1]


def hold_build(root: Path, holder: str, *options: str) -> None:
    """A write claim of ``holder`` on CLAUDE.md's build section (advisory: the section is
    not strict), taken with ``memkeeper claim`` and its ``options``."""
    held = run_cli(root, "claim", BUILD, "--agent", holder, *options)
    assert held.code == 0, held.stderr


def rename_build_step(root: Path) -> Path:
    """CLAUDE.md with ``make build`` made ``make wheel``: what the tool a post-tool event
    reports did to it. Returns the file."""
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))
    return claude


def assert_allowed_because(done: Run, agent: str, allow: str, why: str) -> None:
    """The answer of a gate that could not judge: the agent's ``allow`` and exit 0, and on
    stderr ``memkeeper hook AGENT: WHY…; allowed``."""
    assert (done.code, done.stdout) == (0, allow), done
    assert done.stderr.startswith(f"memkeeper hook {agent}: {why}"), done.stderr
    assert done.stderr.endswith("; allowed\n"), done.stderr


@dataclass(frozen=True)
class Reasons:
    """The gate's reasons for the rows the tables share, worded for ``agent`` (give
    ``"{agent}"`` for templates, in a table that runs as more than one agent)."""

    agent: str
    program: str = "memkeeper"  # how the reasons name memkeeper (Codex: a login shell's path)

    def cmd(self, *words: str) -> str:
        """A memkeeper command as a reason names it: in backticks, with ``--agent``."""
        return f"`{self.program} " + " ".join(words) + f" --agent {self.agent}`"

    def section_steps(self, path: str) -> str:
        """How a reason says to change one section of ``path``."""
        ref = repr(path + "#KEY")
        return (
            f"list its sections with {self.cmd('sections', path)}, read one with "
            f"{self.cmd('read', ref, '--json')} (its body and rev N), then replace its body "
            f"with {self.cmd('patch', ref, '--expect-rev N', '--body-file F')}"
        )

    def append_instead(self, path: str = DECISIONS) -> str:
        """Where a reason sends a change of the log: ``memkeeper append``."""
        append = self.cmd("append", path, "--text", "'ENTRY'")
        return f"Add a new entry at the end instead: {append} (or --entry-file F)."

    def write_claude(self) -> str:
        """A whole-file write of the section-owned CLAUDE.md."""
        return (
            "CLAUDE.md is section-owned: a whole-file write replaces the file and would undo "
            "other agents' changes made since you read it. Change one section at a time: "
            f"{self.section_steps('CLAUDE.md')}. An edit of just the lines you change is "
            "allowed too."
        )

    def history(self) -> str:
        """An edit that rewrites line 7 of the append-only memory/decisions.md."""
        return (
            f"{DECISIONS} is append-only: this edit changes line 7 of its history, which stays "
            "as written. Add a new entry at the end instead: "
            f"{self.cmd('append', DECISIONS, '--entry-file F')} (or --text 'ENTRY')."
        )

    def region(self) -> str:
        """An edit inside the generated region 'claims' of memory/status.md."""
        return (
            "memory/status.md: this edit would change generated region 'claims' (lines 8-9). "
            "memkeeper renders the text between the markers: change the text outside them, and "
            f"run {self.cmd('regen', 'memory/status.md')} to re-render the regions (a hand edit "
            f"inside is not kept: it opens a reconciliation and fails `{self.program} check`)."
        )

    def shell_append(self, path: str = DECISIONS) -> str:
        """A shell ``>>`` onto the log, named ``path`` as seen from the command's directory."""
        return (
            f"{path} is append-only: `>>` adds text by hand, without the entry template, the "
            f"event log or claim checks. {self.append_instead(path)}"
        )

    def delete_history(self) -> str:
        """Deleting the append-only memory/decisions.md."""
        return (
            f"{DECISIONS} is append-only history: `rm` would delete it and every entry in it. "
            "History is only ever extended: to correct or retire an entry, add one. "
            f"{self.append_instead()}"
        )

    def owned(self, hook: str) -> str:
        """A change of the section only humans own, from an agent whose ``hook`` (its name in
        the reason) cannot ask a human."""
        return (
            f"A human has to approve this change, and a {hook} hook cannot ask one, so "
            "memkeeper denied it: ask the user to make it. "
            "CLAUDE.md#inventory-service/release-process belongs to human (policy "
            f".memkeeper.yaml); {self.agent} is not an owner, so `{self.program} patch` would "
            "refuse "
            "this change. Approve it only if you are, or speak for, human."
        )

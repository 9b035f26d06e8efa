"""The records the gate decides from, on their own: each constructor puts every argument in
the field of its name (by keyword and by position alike), what is left out defaults to
nothing known — no sections, no symlink, no git state, no claims, no paths — and a
``Decision`` defaults to the silent allow. ``MANAGED`` is every shared class, not private."""

from __future__ import annotations

from typing import Any

import pytest

from memkeeper.claims.decisions import Claim
from memkeeper.gate.facts import MANAGED, Decision, Facts, PathFacts, SectionFacts
from memkeeper.policy.model import FILE_CLASSES
from memkeeper.shell.effects import Sweep

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.records import Record

SECTION = SectionFacts("build", 3, 9, 4, ("human",), True)
CLAIM = Claim("c1", 7, "agent-b", "write", ("CLAUDE.md",), 0, True, 10.0, 610.0, "docs")
SWEEP = Sweep("/r/memory", "rm -r", "/r")
PATH = PathFacts("CLAUDE.md", "file", True, "section-owned", data=b"# P\n", sections=(SECTION,))

# Every field given a value no other field of its record has, in slot order.
EVERY_FIELD: list[tuple[type[Record], dict[str, Any]]] = [
    (
        SectionFacts,
        dict(key="inventory/storage", start_line=12, end_line=14, rev=3, owners=None, strict=False),
    ),
    (
        PathFacts,
        dict(
            rel="CLAUDE.md",
            kind="file",
            parent_is_dir=False,
            file_class="generated",
            strict=True,
            data=b"# Status\n",
            sections=(SECTION,),
            via="AGENTS.md",
            git=frozenset({"unstaged"}),
        ),
    ),
    (
        Facts,
        dict(
            root="/r",
            cwd="/r/src",
            agent="claude-code:s1",
            agent_option=" --agent claude-code:s1",
            now=1234.5,
            claims=(CLAIM,),
            paths={"/r/CLAUDE.md": PATH},
            entries={"/r/AGENTS.md": PATH._replace(rel="AGENTS.md")},
            sweeps={SWEEP: SWEEP._replace(top="/r/memory/")},
            tree=("CLAUDE.md", "memory/decisions.md"),
            root_option=" --root /r",
            mcp=True,
            program=".venv/bin/memkeeper",
        ),
    ),
    (Decision, dict(verdict="ask", reason="only human may change it", context="ask first")),
]


@pytest.mark.parametrize(("kind", "fields"), EVERY_FIELD, ids=[k.__name__ for k, _ in EVERY_FIELD])
def test_every_argument_lands_in_the_field_of_its_name(
    kind: type[Record], fields: dict[str, Any]
) -> None:
    assert list(fields) == list(kind.__slots__)  # the table names every field, in order
    by_name = kind(**fields)
    assert by_name._asdict() == fields
    assert kind(*fields.values()) == by_name  # positionally, in slot order


def test_path_facts_default_to_an_unstrict_path_with_nothing_read() -> None:
    missing = PathFacts("memory/new.md", "missing", True, None)
    assert (missing.strict, missing.data, missing.sections) == (False, b"", ())
    assert (missing.via, missing.git) == ("", frozenset())


def test_facts_default_to_no_claims_paths_sweeps_or_options() -> None:
    facts = Facts("/r", "/r", "me", "", 100.0)
    assert (facts.claims, facts.tree, facts.root_option, facts.mcp) == ((), (), "", False)
    assert facts.program == "memkeeper"
    assert (facts.paths, facts.entries, facts.sweeps) == ({}, {}, {})


def test_facts_made_without_mappings_share_none_of_theirs() -> None:
    one, other = Facts("/r", "/r", "me", "", 1.0), Facts("/r", "/r", "me", "", 1.0)
    assert one.paths is not other.paths
    assert one.entries is not other.entries
    assert one.sweeps is not other.sweeps


def test_a_decision_defaults_to_the_silent_allow() -> None:
    assert Decision() == Decision("allow", "", "")
    assert Decision("deny", "no") == Decision("deny", "no", "")


def test_managed_is_every_file_class_but_private() -> None:
    assert set(FILE_CLASSES) - {"private"} == MANAGED

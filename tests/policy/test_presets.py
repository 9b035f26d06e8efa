"""The shipped policy presets: listed by name, copied verbatim, and valid as they ship."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from memkeeper.errors import Invalid
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.parse import round_trip_yaml
from memkeeper.policy.presets import preset_bytes, preset_names

POLICIES = Path(__file__).resolve().parents[2] / "policies"


def test_the_shipped_presets_are_listed() -> None:
    assert {"default", "cline-memory-bank"} <= set(preset_names())


def test_an_unknown_preset_is_invalid_and_lists_the_presets() -> None:
    with pytest.raises(Invalid, match="cline-memory-bank, default") as caught:
        preset_bytes("nope")
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("name", ["default", "cline-memory-bank"])
def test_a_preset_loads_and_round_trips_byte_identical(name: str) -> None:
    data = preset_bytes(name)
    policy = parse_policy(data, source=f"{name}.yaml")
    assert (policy.default_ttl, policy.max_ttl) == (120, 3600)
    yaml = round_trip_yaml()
    out = io.BytesIO()
    yaml.dump(yaml.load(data.decode()), out)
    assert out.getvalue() == data
    assert data.startswith(b"#")


DEFAULT_CLASSES = {
    "CLAUDE.md": "section-owned",
    "src/api/CLAUDE.md": "section-owned",
    ".claude/CLAUDE.md": "section-owned",
    "CLAUDE.local.md": "private",
    "src/CLAUDE.local.md": "private",
    "memory/CLAUDE.local.md": "private",
    "AGENTS.md": "section-owned",
    "services/web/AGENTS.md": "section-owned",
    "GEMINI.md": "section-owned",
    ".github/copilot-instructions.md": "section-owned",
    ".github/instructions/python.instructions.md": "section-owned",
    ".cursor/rules/style.mdc": "section-owned",
    "web/.cursor/rules/react.mdc": "section-owned",
    "memory-bank/progress.md": "section-owned",
    "memory/decisions.md": "append-only",
    "memory/risks.md": "append-only",
    "memory/observations.md": "append-only",
    "memory/log/2026-11.md": "append-only",
    "memory/log/2026/11/29.md": "append-only",
    "memory/status.md": "generated",
    "memory/scratch/try.md": "private",
    "memory/scratch/CLAUDE.md": "private",
    "memory/private/me.md": "private",
    "memory/architecture.md": "section-owned",
    "memory/teams/api.md": "section-owned",
}


@pytest.mark.parametrize(("relpath", "file_class"), sorted(DEFAULT_CLASSES.items()))
def test_the_default_preset_classifies_the_ecosystem_files(relpath: str, file_class: str) -> None:
    policy = parse_policy(preset_bytes("default"))
    rule = policy.classify(relpath)
    assert rule is not None
    assert rule.file_class == file_class


@pytest.mark.parametrize(
    "relpath",
    ["README.md", "src/main.py", ".github/workflows/ci.yml", "memory/diagram.png", "x/status.md"],
)
def test_the_default_preset_leaves_other_files_unmanaged(relpath: str) -> None:
    assert parse_policy(preset_bytes("default")).classify(relpath) is None


def test_the_default_preset_separates_the_root_claude_md_from_nested_ones() -> None:
    policy = parse_policy(preset_bytes("default"))
    root, nested = policy.classify("CLAUDE.md"), policy.classify("a/CLAUDE.md")
    assert root is not None
    assert nested is not None
    assert (root.path, nested.path) == ("/CLAUDE.md", "CLAUDE.md")


def test_the_default_preset_templates_log_entries() -> None:
    rule = parse_policy(preset_bytes("default")).classify("memory/log/today.md")
    assert rule is not None
    assert rule.entry_template is not None
    assert "{text}" in rule.entry_template


CLINE_CLASSES = {
    "memory-bank/projectbrief.md": "section-owned",
    "memory-bank/productContext.md": "section-owned",
    "memory-bank/systemPatterns.md": "section-owned",
    "memory-bank/techContext.md": "section-owned",
    "memory-bank/activeContext.md": "section-owned",
    "memory-bank/progress.md": "section-owned",
    "memory-bank/features/auth.md": "section-owned",
    "memory-bank/log/2026-11-29.md": "append-only",
    "memory-bank/scratch/idea.md": "private",
    "memory-bank/private/me.md": "private",
    "memory/scratch/x.md": "private",
    ".clinerules": "section-owned",
    ".clinerules/01-style.md": "section-owned",
}


@pytest.mark.parametrize(("relpath", "file_class"), sorted(CLINE_CLASSES.items()))
def test_the_cline_preset_classifies_the_memory_bank(relpath: str, file_class: str) -> None:
    rule = parse_policy(preset_bytes("cline-memory-bank")).classify(relpath)
    assert rule is not None
    assert rule.file_class == file_class


def test_the_cline_preset_leaves_other_files_unmanaged() -> None:
    policy = parse_policy(preset_bytes("cline-memory-bank"))
    assert policy.classify("README.md") is None
    assert policy.classify("docs/.clinerules") is None


def test_preset_names_are_the_shipped_files_sorted() -> None:
    names = preset_names()
    assert names == sorted(names)
    assert names == sorted(path.stem for path in POLICIES.glob("*.yaml"))


@pytest.mark.parametrize("name", preset_names())
def test_a_preset_is_its_shipped_file_byte_for_byte(name: str) -> None:
    assert preset_bytes(name) == (POLICIES / f"{name}.yaml").read_bytes()


@pytest.mark.parametrize("name", preset_names())
def test_every_shipped_preset_is_a_valid_policy_that_manages_something(name: str) -> None:
    policy = parse_policy(preset_bytes(name), source=f"{name}.yaml")
    assert policy.rules
    assert preset_bytes(name).endswith(b"\n")
    assert len(set(policy.managed_globs())) == len(policy.rules), "a glob is given twice"


def test_an_unknown_preset_says_which_ones_exist() -> None:
    with pytest.raises(Invalid) as caught:
        preset_bytes("nope")
    error = caught.value
    assert error.message == f"unknown preset 'nope' — choose one of: {', '.join(preset_names())}"
    assert error.fields == {"preset": "nope", "presets": preset_names()}


@pytest.mark.parametrize(
    "name", ["../pyproject", "default.yaml", "Default", "", "policies/default", "/etc/passwd"]
)
def test_a_preset_name_is_never_read_as_a_path(name: str) -> None:
    with pytest.raises(Invalid, match="unknown preset"):
        preset_bytes(name)


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "TaskStart"])
def test_the_cline_preset_never_manages_the_hook_scripts_in_clinerules(event: str) -> None:
    policy = parse_policy(preset_bytes("cline-memory-bank"))
    assert policy.classify(f".clinerules/hooks/{event}") is None
    assert policy.classify(".clinerules/01-style.md") is not None

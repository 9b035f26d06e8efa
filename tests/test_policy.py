from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.fs.walk import managed_files
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import (
    FileRule,
    Policy,
    SectionRule,
    empty_policy,
)
from memkeeper.policy.parse import round_trip_yaml
from memkeeper.policy.presets import preset_bytes, preset_names

RULE = "version: 1\nfiles:\n  - path: CLAUDE.md\n"


def policy_of(text: str) -> Policy:
    return parse_policy(text.encode(), source="p.yaml")


def rule_for(policy: Policy, relpath: str) -> tuple[str, str] | None:
    rule = policy.classify(relpath)
    return None if rule is None else (rule.path, rule.file_class)


# (policy text, line, column, what the message must name)
BAD_POLICIES = [
    pytest.param("version: 1\nfiles: [\n", 3, 1, "bad YAML", id="bad-yaml-syntax"),
    pytest.param("version: 1\nversion: 1\n", 2, 1, "duplicate key", id="duplicate-key"),
    pytest.param("a:\n\t- b\n", 2, 1, "bad YAML", id="tab-indent"),
    pytest.param("", 1, 1, "an empty file", id="empty-file"),
    pytest.param("- version: 1\n", 1, 1, "a list", id="top-level-list"),
    pytest.param("just text\n", 1, 1, "'just text'", id="top-level-scalar"),
    pytest.param("files: []\n", 1, 1, "`version` is missing", id="version-missing"),
    pytest.param("version: 2\nfiles: []\n", 1, 10, "unsupported version 2", id="version-2"),
    pytest.param("version: '1'\n", 1, 10, "unsupported version '1'", id="version-text"),
    pytest.param("version: true\n", 1, 10, "unsupported version true", id="version-bool"),
    pytest.param("version: 1\nfile: []\n", 2, 1, "'file'", id="unknown-top-key"),
    pytest.param("version: 1\nfiles:\n  path: x\n", 3, 3, "a mapping", id="files-mapping"),
    pytest.param("version: 1\nfiles: CLAUDE.md\n", 2, 8, "'CLAUDE.md'", id="files-scalar"),
    pytest.param(RULE + "    clas: private\n", 4, 5, "'clas'", id="rule-key-typo"),
    pytest.param("version: 1\nfiles:\n  - class: private\n", 3, 5, "no `path`", id="no-path"),
    pytest.param(RULE, 3, 5, "no `class`", id="no-class"),
    pytest.param("version: 1\nfiles:\n  - CLAUDE.md\n", 3, 5, "'CLAUDE.md'", id="rule-scalar"),
    pytest.param(RULE + "    class: section-ownd\n", 4, 12, "'section-ownd'", id="bad-class"),
    pytest.param(RULE + "    class: [private]\n", 4, 12, "a list", id="class-list"),
    pytest.param(
        "version: 1\nfiles:\n  - path: ''\n    class: private\n", 3, 11, "''", id="empty-glob"
    ),
    pytest.param(
        "version: 1\nfiles:\n  - path: '!x.md'\n    class: private\n",
        3,
        11,
        "'!x.md'",
        id="negated-glob",
    ),
    pytest.param(
        "version: 1\nfiles:\n  - path: 'a\\'\n    class: private\n",
        3,
        11,
        "bad glob 'a\\'",
        id="glob-rejected-by-pathspec",
    ),
    pytest.param(
        "version: 1\nfiles:\n  - path: '[z-a]'\n    class: private\n",
        3,
        11,
        "'[z-a]'",
        id="glob-bad-range",
    ),
    pytest.param(
        "version: 1\nfiles:\n  - path: '#x'\n    class: private\n",
        3,
        11,
        "'#x' matches nothing",
        id="glob-comment",
    ),
    pytest.param(
        "version: 1\nfiles:\n  - path: 7\n    class: private\n", 3, 11, "glob 7", id="glob-number"
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections: [a]\n",
        5,
        15,
        "a list",
        id="sections-list",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      a: yes\n",
        6,
        10,
        "'yes'",
        id="section-rule-scalar",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      a: {owner: [h]}\n",
        6,
        11,
        "'owner'",
        id="section-key-typo",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      a: {owners: human}\n",
        6,
        19,
        "'human'",
        id="owners-not-list",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      a: {owners: [human, 3]}\n",
        6,
        27,
        "owner 3",
        id="owner-not-text",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      2024: {strict: true}\n",
        6,
        7,
        "section key 2024",
        id="section-key-number",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    sections:\n      a: {strict: 'yes'}\n",
        6,
        19,
        "'yes'",
        id="section-strict-text",
    ),
    pytest.param(RULE + "    class: private\n    strict: 1\n", 5, 13, "not 1", id="strict-number"),
    pytest.param(
        RULE + "    class: private\n    sections: {a: {}}\n",
        5,
        15,
        "private",
        id="sections-on-private",
    ),
    pytest.param(
        RULE + "    class: section-owned\n    entry_template: '{text}'\n",
        5,
        21,
        "section-owned",
        id="entry-template-not-append-only",
    ),
    pytest.param(
        RULE + "    class: append-only\n    entry_template: '{user} {text}'\n",
        5,
        21,
        "{user}",
        id="entry-template-unknown-placeholder",
    ),
    pytest.param(
        RULE + "    class: append-only\n    entry_template: '## {date}'\n",
        5,
        21,
        "no {text}",
        id="entry-template-without-text",
    ),
    pytest.param(
        RULE + "    class: append-only\n    entry_template: '{text:>10}'\n",
        5,
        21,
        "format spec",
        id="entry-template-format-spec",
    ),
    pytest.param(
        RULE + "    class: append-only\n    entry_template: '{text'\n",
        5,
        21,
        "'{text'",
        id="entry-template-unbalanced",
    ),
    pytest.param("version: 1\nleases: 120\n", 2, 9, "not 120", id="leases-scalar"),
    pytest.param("version: 1\nleases:\n  ttl: 5\n", 3, 3, "'ttl'", id="leases-key-typo"),
    pytest.param("version: 1\nleases:\n  default_ttl: 0\n", 3, 16, "not 0", id="default-ttl-zero"),
    pytest.param(
        "version: 1\nleases:\n  default_ttl: -5\n", 3, 16, "not -5", id="default-ttl-negative"
    ),
    pytest.param("version: 1\nleases:\n  max_ttl: 1.5\n", 3, 12, "not 1.5", id="max-ttl-float"),
    pytest.param("version: 1\nleases:\n  max_ttl: true\n", 3, 12, "not true", id="max-ttl-bool"),
    pytest.param(
        "version: 1\nleases:\n  default_ttl: 7200\n  max_ttl: 3600\n",
        3,
        16,
        "7200 is greater than leases.max_ttl 3600",
        id="default-above-max",
    ),
    pytest.param(
        "version: 1\nleases:\n  default_ttl: 4000\n",
        3,
        16,
        "4000 is greater than leases.max_ttl 3600",
        id="default-above-implicit-max",
    ),
    pytest.param("version: 1\ntemplates: [a]\n", 2, 12, "a list", id="templates-list"),
    pytest.param(
        "version: 1\ntemplates:\n  owners: 3\n", 3, 11, "'owners'", id="template-not-text"
    ),
    pytest.param(
        "version: 1\ntemplates:\n  owners: {a: b}\n", 3, 11, "a mapping", id="template-mapping"
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "named"), BAD_POLICIES)
def test_a_bad_policy_is_invalid_and_names_file_line_column_and_value(
    text: str, line: int, column: int, named: str
) -> None:
    with pytest.raises(Invalid) as caught:
        policy_of(text)
    error = caught.value
    assert error.exit_code == 2
    assert str(error).startswith(f"p.yaml:{line}:{column}: ")
    assert named in str(error)
    assert " — " in str(error)
    assert error.fields == {"path": "p.yaml", "line": line, "column": column}


def test_an_unknown_key_suggests_the_close_one() -> None:
    with pytest.raises(Invalid, match="did you mean 'class'"):
        policy_of(RULE + "    clas: private\n")


def test_an_unknown_class_lists_the_four_classes() -> None:
    with pytest.raises(Invalid, match="section-owned, append-only, generated, private"):
        policy_of(RULE + "    class: owned\n")


def test_a_file_that_is_not_utf8_is_invalid_at_its_line() -> None:
    with pytest.raises(Invalid, match=r"^p\.yaml:2:1: .*UTF-8"):
        parse_policy(b"version: 1\nfiles: \xff\n", source="p.yaml")


def test_a_minimal_policy_takes_the_lease_defaults() -> None:
    policy = policy_of("version: 1\n")
    assert policy == Policy(rules=(), default_ttl=120, max_ttl=3600, templates={})


def test_a_full_rule_is_parsed_into_frozen_data() -> None:
    policy = policy_of(
        "version: 1\n"
        "files:\n"
        "  - path: CLAUDE.md\n"
        "    class: section-owned\n"
        "    strict: true\n"
        "    sections:\n"
        "      release-process: {owners: [human], strict: true}\n"
        "      build:\n"
        "  - path: memory/log/**\n"
        "    class: append-only\n"
        '    entry_template: "## {date} {agent}\\n\\n{text}\\n"\n'
        "leases: {default_ttl: 30, max_ttl: 60}\n"
        "templates:\n"
        "  team: |\n"
        "    Ask first.\n"
    )
    first, second = policy.rules
    assert (first.index, first.path, first.file_class, first.strict) == (
        0,
        "CLAUDE.md",
        "section-owned",
        True,
    )
    assert dict(first.sections) == {
        "release-process": SectionRule(owners=("human",), strict=True),
        "build": SectionRule(owners=None, strict=False),
    }
    assert (second.index, second.entry_template) == (1, "## {date} {agent}\n\n{text}\n")
    assert (policy.default_ttl, policy.max_ttl) == (30, 60)
    assert dict(policy.templates) == {"team": "Ask first.\n"}


def test_an_empty_owners_list_means_nobody_may_patch() -> None:
    policy = policy_of(RULE + "    class: section-owned\n    sections: {a: {owners: []}}\n")
    assert policy.rules[0].sections["a"].owners == ()


def test_section_rule_prefers_the_exact_key_then_the_last_segment() -> None:
    policy = policy_of(
        RULE + "    class: section-owned\n"
        "    sections:\n"
        "      build: {strict: true}\n"
        "      project/build: {owners: [human]}\n"
    )
    rule = policy.rules[0]
    assert rule.section_rule("project/build") == SectionRule(owners=("human",), strict=False)
    assert rule.section_rule("other/build") == SectionRule(owners=None, strict=True)
    assert rule.section_rule("build") == SectionRule(owners=None, strict=True)
    assert rule.section_rule("project/build/deep") is None
    assert rule.section_rule("rebuild") is None


def test_classify_returns_the_first_matching_rule() -> None:
    policy = policy_of(
        "version: 1\n"
        "files:\n"
        "  - {path: memory/scratch/**, class: private}\n"
        "  - {path: memory/**, class: section-owned}\n"
        "  - {path: memory/decisions.md, class: append-only}\n"
    )
    assert rule_for(policy, "memory/scratch/a.md") == ("memory/scratch/**", "private")
    assert rule_for(policy, "memory/decisions.md") == ("memory/**", "section-owned")
    assert rule_for(policy, "README.md") is None


def test_a_pattern_without_a_slash_matches_at_any_depth_and_a_leading_slash_anchors() -> None:
    policy = policy_of(
        "version: 1\n"
        "files:\n"
        "  - {path: /CLAUDE.md, class: generated}\n"
        "  - {path: CLAUDE.md, class: section-owned}\n"
        "  - {path: docs/*.md, class: private}\n"
    )
    assert rule_for(policy, "CLAUDE.md") == ("/CLAUDE.md", "generated")
    assert rule_for(policy, "a/b/CLAUDE.md") == ("CLAUDE.md", "section-owned")
    assert rule_for(policy, "docs/x.md") == ("docs/*.md", "private")
    assert rule_for(policy, "sub/docs/x.md") is None
    assert rule_for(policy, "docs/sub/x.md") is None


def test_double_star_crosses_directories_and_single_star_does_not() -> None:
    policy = policy_of(
        "version: 1\n"
        "files:\n"
        "  - {path: 'notes/**/*.md', class: section-owned}\n"
        "  - {path: 'logs/*', class: append-only}\n"
        "  - {path: '**/keep.md', class: private}\n"
    )
    assert rule_for(policy, "notes/a.md") == ("notes/**/*.md", "section-owned")
    assert rule_for(policy, "notes/x/y/a.md") == ("notes/**/*.md", "section-owned")
    assert rule_for(policy, "notes/a.txt") is None
    assert rule_for(policy, "logs/a.md") == ("logs/*", "append-only")
    assert rule_for(policy, "x/y/keep.md") == ("**/keep.md", "private")


def test_a_directory_pattern_covers_everything_under_it() -> None:
    policy = policy_of(
        "version: 1\n"
        "files:\n"
        "  - {path: scratch/, class: private}\n"
        "  - {path: /private, class: private}\n"
    )
    assert rule_for(policy, "scratch/a/b.md") == ("scratch/", "private")
    assert rule_for(policy, "x/scratch/b.md") == ("scratch/", "private")
    assert rule_for(policy, "private/b.md") == ("/private", "private")
    assert rule_for(policy, "x/private/b.md") is None
    assert rule_for(policy, "scratch") is None


def test_memkeeper_state_and_git_are_never_managed() -> None:
    policy = policy_of("version: 1\nfiles:\n  - {path: '**', class: private}\n")
    assert policy.classify(".memkeeper/index.sqlite") is None
    assert policy.classify(".git/HEAD") is None
    assert rule_for(policy, "./notes.md") == ("**", "private")


def test_the_empty_policy_manages_nothing() -> None:
    policy = empty_policy()
    assert policy.classify("CLAUDE.md") is None
    assert (policy.default_ttl, policy.max_ttl) == (120, 3600)
    assert policy.managed_globs() == ()


@given(st.lists(st.sampled_from(["a", "b", "CLAUDE.md", "x.md"]), min_size=1, max_size=4))
def test_an_any_depth_name_matches_under_any_directories(dirs: list[str]) -> None:
    policy = policy_of("version: 1\nfiles:\n  - {path: x.md, class: private}\n")
    assert policy.classify("/".join([*dirs, "x.md"])) is not None


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


def write(root: Path, relpath: str, text: str = "# x\n") -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_managed_files_walks_the_tree_sorted_skipping_state_and_symlinks(tmp_path: Path) -> None:
    for relpath in [
        "CLAUDE.md",
        "src/AGENTS.md",
        "README.md",
        "memory/decisions.md",
        ".github/copilot-instructions.md",
        ".cursor/rules/a.mdc",
        ".git/CLAUDE.md",
        ".memkeeper/CLAUDE.md",
        ".venv/lib/AGENTS.md",
        "node_modules/pkg/AGENTS.md",
        ".hidden/AGENTS.md",
    ]:
        write(tmp_path, relpath)
    os.symlink(tmp_path / "CLAUDE.md", tmp_path / "docs-CLAUDE.md")
    os.symlink(tmp_path / "src", tmp_path / "linked", target_is_directory=True)
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "README.md")
    found = managed_files(parse_policy(preset_bytes("default")), tmp_path)
    assert [(relpath, rule.file_class) for relpath, rule in found] == [
        (".cursor/rules/a.mdc", "section-owned"),
        (".github/copilot-instructions.md", "section-owned"),
        ("CLAUDE.md", "section-owned"),
        ("memory/decisions.md", "append-only"),
        ("src/AGENTS.md", "section-owned"),
    ]


def test_managed_files_enters_a_dot_directory_a_glob_names(tmp_path: Path) -> None:
    write(tmp_path, ".clinerules/01-style.md")
    write(tmp_path, ".windsurf/rules/a.md")
    found = managed_files(parse_policy(preset_bytes("cline-memory-bank")), tmp_path)
    assert [relpath for relpath, _ in found] == [".clinerules/01-style.md"]


def test_managed_files_returns_the_matching_rule(tmp_path: Path) -> None:
    write(tmp_path, "memory/status.md")
    policy = parse_policy(preset_bytes("default"))
    [(relpath, rule)] = managed_files(policy, tmp_path)
    assert isinstance(rule, FileRule)
    assert rule is policy.classify(relpath)


def test_managed_files_of_the_empty_policy_is_empty(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md")
    assert managed_files(empty_policy(), tmp_path) == []


def test_managed_globs_lists_the_rules_in_order() -> None:
    policy = policy_of(
        "version: 1\nfiles:\n  - {path: b/**, class: private}\n  - {path: a.md, class: private}\n"
    )
    assert policy.managed_globs() == ("b/**", "a.md")

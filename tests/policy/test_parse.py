"""Parsing `.memkeeper.yaml`: typed rules out, and FILE:LINE:COL with what to do for any mistake."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid, PolicyInvalid
from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import FILE_CLASSES, Policy, SectionRule
from memkeeper.policy.parse import parse

RULE = "version: 1\nfiles:\n  - path: CLAUDE.md\n"


def policy_of(text: str) -> Policy:
    return parse_policy(text.encode(), source="p.yaml")


def mistake(text: str | bytes, source: str = "p.yaml") -> PolicyInvalid:
    with pytest.raises(PolicyInvalid) as caught:
        parse(text.encode() if isinstance(text, str) else text, source)
    return caught.value


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
    pytest.param(
        RULE + "    class: section-owned\n    git: snapshot\n",
        5,
        10,
        "section-owned",
        id="git-not-generated",
    ),
    pytest.param(
        RULE + "    class: generated\n    git: live\n",
        5,
        10,
        "unknown git form 'live'",
        id="git-unknown",
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
        "version: 1\nleases:\n  takeover_grace: 0\n",
        3,
        19,
        "leases.takeover_grace must be",
        id="takeover-grace-zero",
    ),
    pytest.param(
        "version: 1\nleases:\n  verify_timeout: ten\n",
        3,
        19,
        "not 'ten'",
        id="verify-timeout-text",
    ),
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
    assert (policy.takeover_grace, policy.verify_timeout) == (60, 600)  # the defaults
    assert dict(policy.templates) == {"team": "Ask first.\n"}


def test_an_empty_owners_list_means_nobody_may_patch() -> None:
    policy = policy_of(RULE + "    class: section-owned\n    sections: {a: {owners: []}}\n")
    assert policy.rules[0].sections["a"].owners == ()


# --- what a mistake says ---------------------------------------------------------------------


def test_a_mistake_keeps_its_problem_and_its_fix_apart() -> None:
    error = mistake("files: []\n")
    assert (error.path, error.line, error.column) == ("p.yaml", 1, 1)
    assert error.problem == "`version` is missing"
    assert error.fix == "add `version: 1` at the top"
    assert error.message == "p.yaml:1:1: `version` is missing — add `version: 1` at the top"
    assert error.exit_code == 2


def test_a_mistake_names_the_file_it_was_read_from() -> None:
    error = mistake("version: 3\n", "sub/dir/.memkeeper.yaml")
    assert error.message.startswith("sub/dir/.memkeeper.yaml:1:10: unsupported version 3")


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        (RULE + "    class: owned\n", "use one of section-owned, append-only, generated, private"),
        (
            "version: 1\nfiles:\n  - path: '!x'\n    class: private\n",
            "give the exceptions an earlier rule (first match wins)",
        ),
        ("version: 1\nfiles:\n  - path: '#x'\n    class: private\n", "git help gitignore"),
        (RULE + "    class: private\n    strict: 'no'\n", "write true or false"),
        (
            RULE + "    class: append-only\n    sections: {a: }\n",
            "remove `sections` (only section-owned and generated files are patched)",
        ),
        (
            RULE + "    class: private\n    entry_template: '{text}'\n",
            "remove it, or make the rule `class: append-only`",
        ),
        (
            RULE + "    class: append-only\n    entry_template: 5\n",
            "use only {date} {time} {agent} {text}, include {text}, and write {{ }} for braces",
        ),
        (
            RULE + "    class: append-only\n    git: placeholder\n",
            "remove it: only generated files have live regions for git to store",
        ),
        (RULE + "    class: generated\n    git: true\n", "write `git: placeholder`"),
        ("version: 1\nleases: {default_ttl: 90, max_ttl: 60}\n", "lower default_ttl or raise"),
        ("version: 1\nleases: {max_ttl: 0}\n", "write e.g. `max_ttl: 3600`"),
        ("version: 1\nleases: {default_ttl: x}\n", "write e.g. `default_ttl: 120`"),
        ("version: 1\nleases: [1]\n", "write `leases:` with `default_ttl:` and `max_ttl:`"),
        ("version: 1\nfiles: 3\n", "write each rule as `- path: GLOB` with `class: CLASS`"),
        ("version: 1\ntemplates: x\n", "write `NAME: |` and the template below"),
    ],
)
def test_each_mistake_says_what_to_do(text: str, fix: str) -> None:
    error = mistake(text)
    assert fix in error.fix
    assert error.message.endswith(f" — {error.fix}")


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("version: 1\npassword: hunter2\n", "password", 2),
        ("version: 1\netcd_password: hunter2\n", "etcd_password", 2),
        ("version: 1\nuser: memkeeper\n", "user", 2),
        ("version: 1\nca-cert: /etc/ca.pem\n", "ca-cert", 2),
        ("version: 1\nstore:\n  url: etcds://h:2379/p\n  password: hunter2\n", "password", 4),
    ],
)
def test_a_credential_in_the_policy_is_refused_by_its_key_without_its_value(
    text: str, key: str, line: int
) -> None:
    error = mistake(text)
    assert error.problem == (
        f"'{key}': the policy file never holds etcd credentials (it is committed)"
    )
    assert error.line == line
    assert "MEMKEEPER_ETCD_USER and MEMKEEPER_ETCD_PASSWORD_FILE" in error.fix
    assert "hunter2" not in error.message


def test_a_store_name_holding_a_password_is_refused_without_it() -> None:
    error = mistake("version: 1\nstore: etcds://memkeeper:hunter2@h:2379/p\n")
    assert "names credentials" in error.problem
    assert "hunter2" not in error.message


def test_an_unknown_key_with_nothing_close_lists_the_valid_keys_only() -> None:
    error = mistake("version: 1\nzzz: 1\n")
    assert (error.line, error.column) == (2, 1)
    assert error.fix == (
        "valid keys are version, files, leases, templates, store, signatures, semantic, meetings, "
        "work, events"
    )


def test_an_unknown_key_in_a_section_rule_names_that_rule() -> None:
    error = mistake(
        RULE + "    class: section-owned\n    sections:\n      build: {strict: true, x: 1}\n"
    )
    assert error.problem == "unknown key 'x' in section rule 'build'"
    assert error.fix == "valid keys are owners, strict"


def test_a_template_with_bad_syntax_is_reported_at_its_value_with_the_templates_own_fix() -> None:
    error = mistake("version: 1\ntemplates:\n  team: '{{ nope }}'\n")
    assert (error.line, error.column) == (3, 9)
    assert error.problem == "template 'team': template line 1: unknown source 'nope'"
    assert error.fix == "use one of claims, events, reconciliations, work"


@pytest.mark.parametrize("name", ["events", "claims", "reconciliations", "a b", "-x", "_x"])
def test_a_template_may_not_take_a_built_in_or_unusable_name(name: str) -> None:
    error = mistake(f"version: 1\ntemplates:\n  '{name}': x\n")
    assert (error.line, error.column) == (3, 3)
    assert f"template name '{name}'" in error.problem


def test_a_template_name_must_be_text() -> None:
    error = mistake("version: 1\ntemplates:\n  1: x\n")
    assert error.problem == "template 1 must be named text, not 'x'"


def test_a_second_yaml_document_is_bad_yaml_where_it_starts() -> None:
    error = mistake("version: 1\n---\nversion: 1\n")
    assert (error.line, error.column) == (2, 1)
    assert error.problem.startswith("bad YAML: ")


def test_windows_line_endings_do_not_shift_the_reported_line() -> None:
    error = mistake(b"version: 1\r\nfiles:\r\n  - path: x\r\n    clas: private\r\n")
    assert (error.line, error.column) == (4, 5)


def test_a_bom_is_not_counted_as_a_column() -> None:
    assert policy_of("\ufeffversion: 1\n") == policy_of("version: 1\n")
    error = mistake("\ufeffversion: 2\n")
    assert (error.line, error.column) == (1, 10)


def test_a_bad_byte_on_the_first_line_is_reported_on_line_one() -> None:
    error = mistake(b"\xfe\xffversion: 1\n")
    assert (error.line, error.column, error.problem) == (1, 1, "the file is not UTF-8")


def test_a_policy_mistake_is_an_invalid_input() -> None:
    error = mistake("")
    assert isinstance(error, Invalid)
    assert error.to_json() == {
        "status": "invalid",
        "message": "p.yaml:1:1: the policy must be a mapping, not an empty file"
        " — start with `version: 1` and a `files:` list",
        "path": "p.yaml",
        "line": 1,
        "column": 1,
    }


# --- what a valid policy becomes -------------------------------------------------------------


def test_empty_or_missing_sections_of_the_file_take_their_defaults() -> None:
    for text in (
        "version: 1\nfiles:\nleases:\ntemplates:\n",
        "version: 1\nfiles: []\nleases: {}\n",
    ):
        policy = policy_of(text)
        assert policy == Policy(rules=())
        assert (policy.default_ttl, policy.max_ttl) == (120, 3600)


def test_a_default_ttl_may_equal_the_max_ttl() -> None:
    policy = policy_of("version: 1\nleases: {default_ttl: 60, max_ttl: 60}\n")
    assert (policy.default_ttl, policy.max_ttl) == (60, 60)


def test_a_rule_is_not_strict_unless_it_says_so() -> None:
    (rule,) = policy_of(RULE + "    class: generated\n").rules
    assert rule.strict is False
    assert dict(rule.sections) == {}
    assert rule.entry_template is None


def test_git_stores_a_placeholder_for_live_regions_unless_the_rule_says_snapshot() -> None:
    (rule,) = policy_of(RULE + "    class: generated\n").rules
    assert rule.git == "placeholder"
    (rule,) = policy_of(RULE + "    class: generated\n    git: snapshot\n").rules
    assert rule.git == "snapshot"


def test_the_parsed_policy_is_read_only() -> None:
    policy = policy_of(RULE + "    class: section-owned\n    sections: {a: }\ntemplates: {t: x}\n")
    with pytest.raises(TypeError):
        policy.templates["t"] = "y"  # type: ignore[index]
    with pytest.raises(TypeError):
        policy.rules[0].sections["b"] = SectionRule(None, False)  # type: ignore[index]


def test_an_entry_template_may_use_every_field_and_escaped_braces() -> None:
    template = "{{{date}}} {time} {agent}: {text}"
    (rule,) = policy_of(RULE + f"    class: append-only\n    entry_template: '{template}'\n").rules
    assert rule.entry_template == template


def test_parse_and_the_loader_agree() -> None:
    text = RULE + "    class: append-only\nleases: {default_ttl: 5}\n"
    assert parse(text.encode(), "p.yaml") == policy_of(text)


def test_each_rules_glob_is_compiled_gitignore_style() -> None:
    rules = policy_of(
        "version: 1\nfiles:\n  - {path: 'docs/*.md', class: private}\n"
        "  - {path: '/top.md', class: private}\n"
    ).rules
    assert rules[0].matches("docs/a.md")
    assert not rules[0].matches("docs/sub/a.md")
    assert rules[1].matches("top.md")
    assert not rules[1].matches("x/top.md")


GLOBS = ["CLAUDE.md", "/AGENTS.md", "memory/**", "docs/*.md", "notes/", "**/x.md", "a?.md"]
rules = st.lists(
    st.tuples(st.sampled_from(GLOBS), st.sampled_from(FILE_CLASSES), st.booleans()),
    max_size=5,
)


@given(rules, st.integers(min_value=1, max_value=10_000), st.integers(min_value=0, max_value=99))
def test_any_well_formed_policy_parses_to_its_rules_in_order(
    written: list[tuple[str, str, bool]], default_ttl: int, slack: int
) -> None:
    lines = ["version: 1", "files:"]
    for glob, file_class, strict in written:
        lines += [f"  - path: '{glob}'", f"    class: {file_class}"]
        lines += [f"    strict: {str(strict).lower()}"]
    lines += ["leases:", f"  default_ttl: {default_ttl}", f"  max_ttl: {default_ttl + slack}"]
    policy = policy_of("\n".join(lines) + "\n")
    assert [(r.index, r.path, r.file_class, r.strict) for r in policy.rules] == [
        (index, glob, file_class, strict)
        for index, (glob, file_class, strict) in enumerate(written)
    ]
    assert (policy.default_ttl, policy.max_ttl) == (default_ttl, default_ttl + slack)


@given(st.from_regex(r"[a-z_]{1,12}", fullmatch=True))
def test_any_unknown_top_level_key_is_refused_where_it_is_written(key: str) -> None:
    if key in ("version", "files", "leases", "templates"):
        return
    error = mistake(f"version: 1\n{key}: 1\n")
    assert (error.line, error.column) == (2, 1)
    assert error.problem == f"unknown key '{key}' at the top level"


@pytest.mark.parametrize("value", ["required", "optional"])
def test_signatures_is_required_or_optional(value: str) -> None:
    parse(f"version: 1\nsignatures: {value}\n".encode(), ".memkeeper.yaml")


@pytest.mark.parametrize("text", ["signatures: yes\n", "signatures:\n  required\n"])
def test_signatures_of_any_other_value_or_shape_says_what_to_write(text: str) -> None:
    error = mistake("version: 1\n" + text)
    assert error.problem.startswith("'signatures' must be required or optional")
    assert "signatures: required" in error.fix

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.policy.loader import parse_policy
from memkeeper.policy.model import (
    Policy,
    SectionRule,
    empty_policy,
)

RULE = "version: 1\nfiles:\n  - path: CLAUDE.md\n"


def policy_of(text: str) -> Policy:
    return parse_policy(text.encode(), source="p.yaml")


def rule_for(policy: Policy, relpath: str) -> tuple[str, str] | None:
    rule = policy.classify(relpath)
    return None if rule is None else (rule.path, rule.file_class)


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


def test_managed_globs_lists_the_rules_in_order() -> None:
    policy = policy_of(
        "version: 1\nfiles:\n  - {path: b/**, class: private}\n  - {path: a.md, class: private}\n"
    )
    assert policy.managed_globs() == ("b/**", "a.md")

"""What the gate says: every refusal names the memkeeper command to run instead, with paths
as the session names them and the ``--agent`` that keeps the attribution right."""

from __future__ import annotations

import pytest

from memkeeper.claims.decisions import Claim
from memkeeper.events import iso_utc
from memkeeper.gate import messages as words
from memkeeper.gate.facts import Facts, PathFacts, SectionFacts
from memkeeper.shell.effects import Sweep

ROOT = "/r"
NOW = 1_700_000_000.0
BUILD = SectionFacts("notes/build", 5, 8, 3, None, False)
RELEASE = SectionFacts("notes/release", 9, 11, 2, ("human", "lead"), True)


def facts(cwd: str = ROOT, agent_option: str = " --agent me") -> Facts:
    return Facts(ROOT, cwd, "me", agent_option, NOW)


def managed(rel: str, file_class: str, *sections: SectionFacts) -> PathFacts:
    return PathFacts(rel, "file", True, file_class, sections=sections)


def held(*, strict: bool, targets: tuple[str, ...] = ("docs/",)) -> Claim:
    return Claim("c9", 9, "agent-b", "write", targets, 0, strict, NOW - 10, NOW + 42.5, "")


# -- paths and commands ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        (ROOT, "memory/notes.md"),
        (f"{ROOT}/memory", "notes.md"),
        (f"{ROOT}/docs/deep", "../../memory/notes.md"),
        ("/elsewhere", "memory/notes.md"),
        ("/r2", "memory/notes.md"),  # a sibling whose name starts like the root's
    ],
)
def test_a_path_is_shown_relative_to_the_sessions_directory_when_that_is_inside_the_root(
    cwd: str, expected: str
) -> None:
    assert words.shown(facts(cwd), "memory/notes.md") == expected


def test_a_command_carries_the_agent_option_unless_the_environment_names_the_agent() -> None:
    assert words.command(facts(), "read", "X") == "`memkeeper read X --agent me`"
    assert words.command(facts(agent_option=""), "read", "X") == "`memkeeper read X`"


@pytest.mark.parametrize(
    ("script", "cwd", "expected"),
    [
        ("/usr/local/bin/memkeeper", ROOT, "memkeeper"),  # where every login shell looks
        ("/usr/bin/memkeeper", f"{ROOT}/docs", "memkeeper"),
        (f"{ROOT}/.venv/bin/memkeeper", ROOT, ".venv/bin/memkeeper"),  # the project's venv
        (f"{ROOT}/.venv/bin/memkeeper", f"{ROOT}/docs", "../.venv/bin/memkeeper"),
        (f"{ROOT}/memkeeper", ROOT, "./memkeeper"),  # a bare name would be looked up on PATH
        (f"{ROOT}/.venv/bin/memkeeper", "/elsewhere", "/r/.venv/bin/memkeeper"),
        ("/home/dev/my tools/bin/memkeeper", ROOT, "'/home/dev/my tools/bin/memkeeper'"),
        ("/home/dev/.local/bin/memkeeper", ROOT, "/home/dev/.local/bin/memkeeper"),
        ("/home/dev/src/memkeeper/__main__.py", ROOT, "/opt/py/bin/python3 -m memkeeper"),
    ],
)
def test_a_login_shell_is_told_a_memkeeper_it_can_run(script: str, cwd: str, expected: str) -> None:
    assert words.program_for(script, "/opt/py/bin/python3", cwd, ROOT) == expected


def test_commands_name_memkeeper_as_the_facts_say() -> None:
    named = Facts(ROOT, ROOT, "me", "", NOW, program=".venv/bin/memkeeper")
    assert words.command(named, "read", "X") == "`.venv/bin/memkeeper read X`"
    text = words.region_refusal(named, managed("s.md", "generated"), "the patch changes it")
    assert "fails `.venv/bin/memkeeper check`" in text
    assert "`memkeeper" not in text


def test_patch_steps_for_a_known_section_carry_its_revision() -> None:
    steps = words.patch_steps(facts(), "NOTES.md", BUILD)
    assert "`memkeeper read 'NOTES.md#notes/build' --json --agent me`" in steps
    patch = "`memkeeper patch 'NOTES.md#notes/build' --expect-rev 3 --body-file F --agent me`"
    assert patch in steps


def test_patch_steps_without_a_section_say_how_to_find_one() -> None:
    steps = words.patch_steps(facts(), "my notes.md", None)
    assert "`memkeeper sections 'my notes.md' --agent me`" in steps
    assert "`memkeeper patch 'my notes.md#KEY' --expect-rev N --body-file F --agent me`" in steps


# -- refusals ------------------------------------------------------------------------------------


def test_a_write_refusal_names_up_to_three_changed_sections() -> None:
    f = managed("NOTES.md", "section-owned", BUILD, RELEASE)
    said = words.write_refusal(facts(), f, [BUILD, RELEASE])
    assert said.startswith("NOTES.md is section-owned: a whole-file write replaces the file")
    assert "--expect-rev 3" in said
    assert "--expect-rev 2" in said
    assert "memkeeper sections" not in said
    assert said.endswith("An edit of just the lines you change is allowed too.")


def test_a_write_refusal_over_more_than_three_sections_says_how_to_list_them() -> None:
    many = [SectionFacts(f"s{n}", n, n, 1, None, False) for n in range(1, 5)]
    said = words.write_refusal(facts(), managed("NOTES.md", "section-owned", *many), many)
    assert "memkeeper sections NOTES.md" in said
    assert "#s1" not in said


def test_a_write_refusal_of_a_generated_file_also_names_regen() -> None:
    said = words.write_refusal(facts(), managed("STATUS.md", "generated"), [])
    assert said.endswith("rendered by `memkeeper regen STATUS.md --agent me`.")


def test_a_write_refusal_of_history_says_append_instead() -> None:
    said = words.write_refusal(facts(), managed("LOG.md", "append-only"), [])
    assert said == (
        "LOG.md is append-only history: a whole-file write would replace it. Add a new entry at "
        "the end instead: `memkeeper append LOG.md --entry-file F --agent me` (or --text 'ENTRY')."
    )


def test_a_history_refusal_names_the_first_line_it_changes() -> None:
    log = managed("memory/log.md", "append-only")
    said = words.history_refusal(facts(f"{ROOT}/memory"), log, 7)
    assert said.startswith("log.md is append-only: this edit changes line 7 of its history")
    assert "`memkeeper append log.md --entry-file F --agent me`" in said


def test_a_region_refusal_speaks_of_this_edit_and_says_regen() -> None:
    problem = "the patch changes the generated region 'claims' (line 8)"
    said = words.region_refusal(facts(), managed("STATUS.md", "generated"), problem)
    assert said.startswith("STATUS.md: this edit changes the generated region 'claims' (line 8).")
    assert "`memkeeper regen STATUS.md --agent me`" in said
    assert "opens a reconciliation" in said


def test_a_question_for_the_owners_names_them_and_the_agent() -> None:
    said = words.owner_question(facts(), managed("NOTES.md", "section-owned"), RELEASE)
    assert said.startswith("NOTES.md#notes/release belongs to human, lead (policy .memkeeper.yaml)")
    assert "me is not an owner" in said
    assert said.endswith("speak for, human, lead.")


@pytest.mark.parametrize(
    ("how", "says"),
    [
        (">>", "`>>` adds text by hand, without the entry template"),
        ("tee -a", "`tee -a` adds text by hand"),
        ("sed -i", "`sed -i` would rewrite its history"),
    ],
)
def test_a_command_on_history_is_told_to_append_with_text(how: str, says: str) -> None:
    said = words.bash_refusal(facts(), managed("LOG.md", "append-only"), how)
    assert said.startswith(f"LOG.md is append-only: {says}")
    assert said.endswith("`memkeeper append LOG.md --text 'ENTRY' --agent me` (or --entry-file F).")


def test_an_append_by_command_to_a_section_owned_file_is_pointed_at_its_last_section() -> None:
    said = words.bash_refusal(facts(), managed("NOTES.md", "section-owned", BUILD, RELEASE), ">>")
    assert "`>>` would add to its last section, notes/release, without a revision check" in said
    assert "--expect-rev 2" in said


def test_a_restore_by_git_is_pointed_at_the_committed_text_of_one_section() -> None:
    said = words.bash_refusal(facts(), managed("NOTES.md", "section-owned", BUILD), "git checkout")
    assert "discard every change since, other agents' included" in said
    assert "take its text from `git show HEAD:NOTES.md`, then list its sections" in said


def test_any_other_rewrite_by_command_loses_other_agents_changes() -> None:
    said = words.bash_refusal(facts(), managed("STATUS.md", "generated", BUILD), ">")
    assert "`>` would rewrite it without a revision check, losing other agents' changes" in said
    assert ". Instead, list its sections" in said
    assert said.endswith("rendered by `memkeeper regen STATUS.md --agent me`.")


# -- claims --------------------------------------------------------------------------------------


def test_a_strict_claim_is_a_refusal_that_queues_past_its_expiry() -> None:
    said = words.claim_reason(facts(), "docs/a.md#intro", held(strict=True))
    expires = iso_utc(NOW + 42.5)
    assert said.startswith(
        f"docs/a.md#intro is claimed: agent-b holds a strict write claim c9 on docs/ "
        f"(expires in 43s, at {expires})."
    )
    assert "`memkeeper claim 'docs/a.md#intro' --wait 48 --agent me`" in said
    assert said.endswith("re-read docs/a.md#intro before changing it.")


def test_an_advisory_claim_is_a_wait_that_lets_the_change_go_ahead() -> None:
    said = words.claim_reason(facts(f"{ROOT}/docs"), "docs/a.md", held(strict=False))
    assert said.startswith("WAIT: agent-b holds an advisory write claim c9 on docs/")
    assert "Your change to a.md may go ahead" in said
    assert "`memkeeper claim a.md --wait 48 --agent me`" in said


# -- symlinks, other roots, and what deletes or sweeps ------------------------------------------


def test_a_file_reached_through_a_symlink_is_named_as_the_tool_named_it() -> None:
    link = PathFacts("CLAUDE.md", "file", True, "section-owned", via="AGENTS.md")
    reason = words.bash_refusal(facts(), link, ">")
    assert reason.startswith("AGENTS.md (a symlink to CLAUDE.md) is section-owned: ")
    assert "memkeeper sections CLAUDE.md" in reason


def test_outside_the_root_paths_are_the_roots_and_commands_carry_root() -> None:
    away = Facts(ROOT, "/elsewhere", "me", " --agent me", NOW, root_option=" --root /r")
    assert words.command(away, "read", "X") == "`memkeeper read X --root /r --agent me`"
    reason = words.bash_refusal(away, managed("memory/log.md", "append-only"), ">>")
    assert "`memkeeper append memory/log.md --text 'ENTRY' --root /r --agent me`" in reason


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("rm", "`rm` would delete it and every entry in it"),
        ("mv", "`mv` would move it, and every entry in it, away from the path memkeeper manages"),
    ],
)
def test_deleting_history_says_what_goes_and_how_to_add_instead(how: str, says: str) -> None:
    reason = words.discard_refusal(facts(), managed("memory/log.md", "append-only"), how)
    assert says in reason
    assert "`memkeeper append memory/log.md --text 'ENTRY' --agent me`" in reason


def test_deleting_a_section_owned_file_points_at_patching_a_section_and_at_a_human() -> None:
    reason = words.discard_refusal(facts(), managed("NOTES.md", "generated", BUILD), "git rm")
    assert reason.startswith("NOTES.md is generated: `git rm` would delete it and the sections")
    assert "memkeeper patch 'NOTES.md#KEY'" in reason
    assert "for a human to decide" in reason
    assert "memkeeper regen NOTES.md" in reason


STASH = Sweep(
    ROOT,
    "git stash",
    f"{ROOT}/memory",
    git=frozenset({"unstaged"}),
    instead="git stash push -- . {}",
)


def test_a_git_sweep_names_the_files_and_the_same_command_leaving_them_out() -> None:
    files = [managed("CLAUDE.md", "section-owned"), managed("memory/log.md", "append-only")]
    reason = words.sweep_refusal(facts(f"{ROOT}/memory"), STASH, files)
    assert reason.startswith(
        "`git stash` would discard the uncommitted changes to managed memory files: "
        "../CLAUDE.md (section-owned), log.md (append-only history)."
    )
    assert "`git add ../CLAUDE.md log.md && git commit`" in reason
    assert "`git stash push -- . ':!../CLAUDE.md' ':!log.md'`" in reason  # from where git runs


def test_a_sweep_deleting_untracked_files_says_so() -> None:
    clean = Sweep(ROOT, "git clean", ROOT, git=frozenset({"untracked"}))
    reason = words.sweep_refusal(facts(), clean, [managed("memory/new.md", "section-owned")])
    assert "would delete managed memory files that git does not track: memory/new.md" in reason
    assert "leave them out" not in reason  # no form of the command to offer


def test_a_long_list_of_files_is_cut_short() -> None:
    files = [managed(f"memory/{n}.md", "section-owned") for n in range(9)]
    reason = words.sweep_refusal(facts(), Sweep(f"{ROOT}/memory", "rm -r", ROOT), files)
    assert "memory/5.md (section-owned) and 3 more" in reason
    assert "memory/6.md" not in reason


def test_a_sweep_that_writes_says_how_to_leave_the_files_out() -> None:
    find = Sweep(ROOT, "find -exec sed -i", ROOT, discards=False)
    reason = words.sweep_refusal(facts(), find, [managed("CLAUDE.md", "section-owned")])
    assert "would rewrite managed memory files without a revision check" in reason
    assert "add `-not -name NAME` to the find for each" in reason
    assert "`memkeeper patch PATH#KEY --expect-rev N --body-file F --agent me`" in reason

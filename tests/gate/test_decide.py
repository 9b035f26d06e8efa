"""The gate's rules (``gate.decide``) over hand-built facts: no store, no disk, no hook."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memkeeper.claims.decisions import Claim
from memkeeper.gate import decide as gate
from memkeeper.gate import facts as gatefacts
from memkeeper.gate.facts import Decision, Facts, PathFacts, SectionFacts
from memkeeper.gate.payload import ToolCall, parse_call
from memkeeper.shell.effects import Sweep, Target
from tests.gate.helpers import edit, hand_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.shell.effects import GitState

ROOT = "/r"
NOW = 1_000.0
NOTES = "# Notes\n\nintro\n\n## Build\n\nmake\n\n## Release\n\nhumans only\n"
NOTES_SECTIONS = (
    SectionFacts("notes", 1, 4, 1, None, False),
    SectionFacts("notes/build", 5, 8, 3, None, False),
    SectionFacts("notes/release", 9, 11, 2, ("human",), False),
)
REGION = "<!-- memkeeper:generated source=claims -->\n<!-- memkeeper:end -->\n"
STATUS = f"# Status\n\n{REGION}\n## Notes\n\nfree text\n"


def notes(**changes: Any) -> PathFacts:
    """A section-owned ``NOTES.md`` as the gate gathers it."""
    found = PathFacts(
        "NOTES.md", "file", True, "section-owned", False, NOTES.encode(), NOTES_SECTIONS
    )
    return found._replace(**changes)


def facts_for(*found: PathFacts, claims: tuple[Claim, ...] = (), agent: str = "me") -> Facts:
    paths = {f"{ROOT}/{f.rel}": f for f in found}
    return Facts(ROOT, ROOT, agent, f" --agent {agent}", NOW, claims, paths)


def claim(agent: str, target: str, *, strict: bool, ttl: float = 60.0) -> Claim:
    return Claim("c3", 3, agent, "write", (target,), 0, strict, NOW - 1, NOW + ttl, "")


def write(rel: str, content: str, event: str = "PreToolUse") -> ToolCall:
    return ToolCall(event, "Write", ROOT, file_path=f"{ROOT}/{rel}", content=content)


def editing(rel: str, *steps: tuple[str, str, bool]) -> ToolCall:
    return ToolCall("PreToolUse", "Edit", ROOT, file_path=f"{ROOT}/{rel}", edits=steps)


def shell(command: str) -> ToolCall:
    return ToolCall("PreToolUse", "Bash", ROOT, command=command)


EDIT_BUILD = editing("NOTES.md", ("make\n", "make all\n", False))


def test_edits_replace_the_first_match_or_all_and_fail_when_the_text_is_missing() -> None:
    assert gate.apply_edits("a a", [("a", "b", False)]) == "b a"
    assert gate.apply_edits("a a", [("a", "b", True)]) == "b b"
    assert gate.apply_edits("a a", [("a", "b", False), ("b a", "c", False)]) == "c"
    assert gate.apply_edits("a", [("x", "y", False)]) is None
    assert gate.apply_edits("", [("", "new", False)]) == "new"
    assert gate.apply_edits("old", [("", "new", False)]) is None


def test_an_insertion_counts_for_the_line_above_it() -> None:
    assert gate.changed_lines("a\nb\nc\n", "a\nb\nX\nc\n") == {2}
    assert gate.changed_lines("a\nb\n", "a\nB\n") == {2}
    assert gate.changed_lines("a\r\nb\r\n", "a\r\nb\r\nc\r\n") == {2}
    assert gate.changed_lines("a\n", "a\n") == set()


def test_a_crlf_file_is_judged_with_the_lf_strings_claude_code_sends() -> None:
    facts, path = hand_facts(data=b"# Log\r\n\r\nfirst\r\n")
    appends = parse_call(
        json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Edit",
                "cwd": "/r",
                "tool_input": edit(path, "first\n", "first\n\nsecond\n"),
            }
        ),
        "/r",
    )
    assert gate.decide(appends, facts) == gate.ALLOW
    rewrites = appends._replace(edits=(("first\n", "1st\n", False),))
    assert gate.decide(rewrites, facts).verdict == "deny"


def test_writing_the_same_bytes_again_is_allowed() -> None:
    facts, path = hand_facts(data=b"# Log\n")
    call = parse_call(
        json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "cwd": "/r",
                "tool_input": {"file_path": path, "content": "# Log\n"},
            }
        ),
        "/r",
    )
    assert gate.decide(call, facts) == gate.ALLOW
    assert gate.decide(call._replace(content="# Other\n"), facts).verdict == "deny"


def test_deny_beats_ask_beats_wait_and_each_reason_is_said_once() -> None:
    wait, ask, deny = (
        gatefacts.Decision("allow", "W"),
        gatefacts.Decision("ask", "A"),
        gatefacts.Decision("deny", "D"),
    )
    assert gate.combine([wait, ask, deny, deny]) == gatefacts.Decision("deny", "D")
    assert gate.combine([wait, ask, ask]) == gatefacts.Decision("ask", "A", "A")
    assert gate.combine([wait, wait]) == gatefacts.Decision("allow", "W", "W")
    assert gate.combine([gate.ALLOW]) == gate.ALLOW


# -- what the gate judges -----------------------------------------------------------------------


def test_only_a_pre_tool_use_call_is_judged() -> None:
    after = write("NOTES.md", "# Gone\n", event="PostToolUse")
    assert gate.decide(after, facts_for(notes())) == gate.ALLOW


def test_a_path_without_facts_lies_outside_the_root_and_is_allowed() -> None:
    assert gate.decide(write("NOTES.md", "# Gone\n"), facts_for()) == gate.ALLOW


def test_the_targets_are_the_file_of_a_tool_or_each_thing_a_command_does_once() -> None:
    assert gate.targets(write("NOTES.md", "x")) == (Target(f"{ROOT}/NOTES.md", "Write"),)
    assert gate.targets(ToolCall("PreToolUse", "Read", ROOT)) == ()
    twice = shell("echo a > NOTES.md; echo b > NOTES.md; echo c >> NOTES.md; rm /tmp/o")
    assert gate.targets(twice) == (
        Target(f"{ROOT}/NOTES.md", ">"),
        Target(f"{ROOT}/NOTES.md", ">>"),
        Target("/tmp/o", "rm", follow=False, discards=True),
    )


# -- Write --------------------------------------------------------------------------------------


def test_a_write_over_a_managed_file_is_denied_naming_only_the_sections_it_changes() -> None:
    decision = gate.decide(write("NOTES.md", NOTES.replace("make", "make all")), facts_for(notes()))
    assert decision.verdict == "deny"
    assert "memkeeper patch 'NOTES.md#notes/build' --expect-rev 3" in decision.reason
    assert "notes/release" not in decision.reason
    assert decision.context == ""  # a denial speaks through its reason alone


def test_creating_a_missing_managed_file_is_allowed_except_append_only_history() -> None:
    missing = notes(kind="missing", data=b"", sections=())
    assert gate.decide(write("NOTES.md", "# New\n"), facts_for(missing)) == gate.ALLOW
    log = PathFacts("LOG.md", "missing", True, "append-only")
    denied = gate.decide(write("LOG.md", "# Log\n"), facts_for(log))
    assert denied.verdict == "deny"
    assert "memkeeper append LOG.md --entry-file F --agent me" in denied.reason


def test_a_write_onto_a_directory_is_left_to_fail_by_itself() -> None:
    folder = PathFacts("NOTES.md", "dir", True, "section-owned")
    assert gate.decide(write("NOTES.md", "x"), facts_for(folder)) == gate.ALLOW


def test_a_write_of_a_private_file_is_judged_only_by_claims() -> None:
    mine = PathFacts("scratch/me.md", "file", True, "private", data=b"old\n")
    assert gate.decide(write("scratch/me.md", "new\n"), facts_for(mine)) == gate.ALLOW
    held = facts_for(mine, claims=(claim("agent-b", "scratch/", strict=True),))
    assert gate.decide(write("scratch/me.md", "new\n"), held).verdict == "deny"


# -- Edit and MultiEdit -------------------------------------------------------------------------


def test_an_edit_of_a_section_someone_else_owns_asks_the_human() -> None:
    call = editing("NOTES.md", ("humans only", "anyone", False))
    asked = gate.decide(call, facts_for(notes()))
    assert asked.verdict == "ask"
    assert "NOTES.md#notes/release belongs to human" in asked.reason
    assert asked.context == asked.reason
    assert gate.decide(call, facts_for(notes(), agent="human")) == gate.ALLOW


def test_an_edit_that_cannot_apply_or_changes_nothing_is_allowed() -> None:
    absent = editing("NOTES.md", ("no such text", "x", False))
    same = editing("NOTES.md", ("humans only", "humans only", False))
    for call in (absent, same):
        assert gate.decide(call, facts_for(notes())) == gate.ALLOW


def test_a_multiedit_with_one_failing_step_fails_whole_and_is_allowed() -> None:
    call = editing("NOTES.md", ("make", "make all", False), ("no such text", "x", False))
    history = PathFacts("NOTES.md", "file", True, "append-only", data=NOTES.encode())
    assert gate.decide(call, facts_for(history)) == gate.ALLOW


def test_an_edit_that_creates_a_missing_append_only_file_is_denied_like_a_write() -> None:
    log = PathFacts("LOG.md", "missing", True, "append-only")
    assert gate.decide(editing("LOG.md", ("", "# Log\n", False)), facts_for(log)).verdict == "deny"


def test_an_edit_inside_a_generated_region_is_denied_and_one_outside_it_is_not() -> None:
    status = PathFacts("STATUS.md", "file", True, "generated", data=STATUS.encode())
    inside = editing("STATUS.md", (REGION, REGION.replace("\n", "\nmine\n", 1), False))
    denied = gate.decide(inside, facts_for(status))
    assert denied.verdict == "deny"
    assert "generated region 'claims'" in denied.reason
    assert "memkeeper regen STATUS.md --agent me" in denied.reason
    outside = editing("STATUS.md", ("free text", "my text", False))
    assert gate.decide(outside, facts_for(status)) == gate.ALLOW


@pytest.mark.parametrize(
    ("held", "verdict", "says"),
    [
        (claim("agent-b", "NOTES.md#notes/build", strict=True), "deny", "is claimed: agent-b"),
        (claim("agent-b", "NOTES.md", strict=False), "allow", "WAIT: agent-b holds an advisory"),
        (claim("agent-b", "NOTES.md#notes/release", strict=True), "allow", ""),
        (claim("me", "NOTES.md", strict=True), "allow", ""),
        (claim("agent-b", "NOTES.md", strict=True, ttl=-1), "allow", ""),
    ],
    ids=["strict", "advisory", "another section", "own", "expired"],
)
def test_another_agents_live_claim_on_the_section_denies_when_strict_and_waits_when_not(
    held: Claim, verdict: str, says: str
) -> None:
    decision = gate.decide(EDIT_BUILD, facts_for(notes(), claims=(held,)))
    assert (decision.verdict, says in decision.reason) == (verdict, True)
    assert bool(decision.reason) == bool(says)


def test_a_section_strict_by_policy_turns_an_advisory_claim_into_a_denial() -> None:
    strict = tuple(s._replace(strict=s.key == "notes/build") for s in NOTES_SECTIONS)
    held = (claim("agent-b", "NOTES.md", strict=False),)
    assert gate.decide(EDIT_BUILD, facts_for(notes(sections=strict), claims=held)).verdict == "deny"
    assert gate.decide(EDIT_BUILD, facts_for(notes(strict=True), claims=held)).verdict == "deny"


def test_a_question_for_the_owner_outranks_a_wait_for_a_claim() -> None:
    call = editing("NOTES.md", ("humans only", "anyone", False))
    held = (claim("agent-b", "NOTES.md", strict=False),)
    decision = gate.decide(call, facts_for(notes(), claims=held))
    assert decision.verdict == "ask"
    assert "WAIT:" not in decision.reason


# -- Bash ---------------------------------------------------------------------------------------


def test_a_command_that_writes_managed_history_is_denied() -> None:
    log = PathFacts("LOG.md", "file", True, "append-only", data=b"# Log\n")
    denied = gate.decide(shell("echo more >> LOG.md"), facts_for(log))
    assert denied.verdict == "deny"
    assert "memkeeper append LOG.md --text 'ENTRY' --agent me" in denied.reason


def test_a_command_whose_write_cannot_happen_is_allowed() -> None:
    missing = notes(kind="missing", data=b"", sections=())
    assert gate.decide(shell("sed -i s/a/b/ NOTES.md"), facts_for(missing)) == gate.ALLOW
    no_parent = PathFacts("gone/NOTES.md", "missing", False, "section-owned")
    assert gate.decide(shell("cp x.md gone/"), facts_for(no_parent)) == gate.ALLOW


def test_a_command_writing_an_unmanaged_file_under_an_advisory_claim_waits() -> None:
    code = PathFacts("src/app.py", "file", True, None)
    held = (claim("agent-b", "src/", strict=False),)
    decision = gate.decide(shell("echo x > src/app.py"), facts_for(code, claims=held))
    assert decision.verdict == "allow"
    assert decision.reason.startswith("WAIT: agent-b holds")


def test_a_command_the_gate_cannot_read_is_allowed() -> None:
    assert gate.decide(shell("echo 'unclosed > NOTES.md"), facts_for(notes())) == gate.ALLOW


def test_a_here_document_without_a_delimiter_is_unreadable_and_allowed() -> None:
    assert gate.decide(shell("cat <<\n\necho x > NOTES.md"), facts_for(notes())) == gate.ALLOW


def test_two_denials_for_one_command_are_both_said() -> None:
    log = PathFacts("LOG.md", "file", True, "append-only", data=b"# Log\n")
    decision = gate.decide(shell("echo a > NOTES.md && echo b > LOG.md"), facts_for(notes(), log))
    assert decision.verdict == "deny"
    assert decision.reason.count("\n") == 1
    assert "NOTES.md is section-owned" in decision.reason
    assert "LOG.md is append-only" in decision.reason


# -- deleting, moving away and restoring over (Bash) ------------------------------------------


def test_deleting_or_moving_away_a_managed_file_is_denied_but_a_private_one_is_not() -> None:
    log = PathFacts("LOG.md", "file", True, "append-only", data=b"# Log\n")
    mine = PathFacts("scratch.md", "file", True, "private")
    entries = {f"{ROOT}/{f.rel}": f for f in (log, notes(), mine)}
    facts = facts_for()._replace(entries=entries)
    for command in ("rm LOG.md", "mv LOG.md /tmp/", "unlink LOG.md", "git rm LOG.md"):
        denied = gate.decide(shell(command), facts)
        assert denied.verdict == "deny", command
        assert "LOG.md is append-only history" in denied.reason
    assert (
        "NOTES.md is section-owned: `rm` would delete it"
        in gate.decide(shell("rm -f NOTES.md"), facts).reason
    )
    assert gate.decide(shell("rm scratch.md"), facts) == gate.ALLOW


def test_a_discard_is_judged_on_the_link_itself_not_on_what_it_reaches() -> None:
    link = PathFacts("AGENTS.md", "other", True, "section-owned")
    facts = facts_for(notes(rel="AGENTS.md"))._replace(entries={f"{ROOT}/AGENTS.md": link})
    assert gate.decide(shell("rm AGENTS.md"), facts) == gate.ALLOW
    assert gate.decide(shell("echo x > AGENTS.md"), facts).verdict == "deny"


def test_deleting_a_missing_file_loses_nothing() -> None:
    gone = PathFacts("LOG.md", "missing", True, "append-only")
    assert (
        gate.decide(shell("rm -f LOG.md"), facts_for()._replace(entries={"/r/LOG.md": gone}))
        == gate.ALLOW
    )


def swept_facts(command: str, *found: PathFacts, top: str = ROOT) -> Facts:
    """Facts for ``command``'s sweeps as the hook gathers them: each resolved as itself."""
    call = shell(command)
    sweeps = {s: s for s in gate.targets(call) if isinstance(s, Sweep)}
    paths = {f"{ROOT}/{f.rel}": f for f in found}
    return facts_for()._replace(paths=paths, sweeps=sweeps, tree=tuple(paths))


def changed(rel: str, file_class: str | None, *states: GitState) -> PathFacts:
    return PathFacts(rel, "file", True, file_class, git=frozenset(states))


def test_a_git_sweep_is_denied_for_the_managed_files_it_would_lose_changes_of() -> None:
    tree = (
        changed("NOTES.md", "section-owned", "unstaged"),
        changed("LOG.md", "append-only", "staged"),
        changed("AGENTS.md", "section-owned"),  # clean
        changed("src/app.py", "private", "unstaged"),
    )
    stash = gate.decide(shell("git stash"), swept_facts("git stash", *tree))
    assert stash.verdict == "deny"
    assert "NOTES.md (section-owned), LOG.md (append-only history)" in stash.reason
    assert "AGENTS.md" not in stash.reason
    checkout = gate.decide(shell("git checkout -- ."), swept_facts("git checkout -- .", *tree))
    assert "LOG.md" not in checkout.reason  # staged only: the worktree keeps the index's copy


def test_a_git_sweep_over_clean_memory_is_allowed() -> None:
    tree = (changed("NOTES.md", "section-owned"), changed("src/app.py", None, "unstaged"))
    for command in ("git stash", "git reset --hard", "git checkout -- .", "git clean -fdx"):
        assert gate.decide(shell(command), swept_facts(command, *tree)) == gate.ALLOW, command


def test_a_sweep_left_out_by_its_pathspecs_is_allowed() -> None:
    command = "git stash push -- . ':!NOTES.md'"
    facts = swept_facts(command, changed("NOTES.md", "section-owned", "unstaged"))
    assert gate.decide(shell(command), facts) == gate.ALLOW


def test_a_sweep_without_git_reaches_every_managed_file_below_it() -> None:
    tree = (changed("memory/a.md", "section-owned"), changed("memory/scratch/x.md", "private"))
    denied = gate.decide(shell("rm -rf memory"), swept_facts("rm -rf memory", *tree))
    assert "memory/a.md (section-owned)" in denied.reason
    assert "scratch" not in denied.reason


def test_a_sweep_the_hook_did_not_resolve_here_is_another_roots() -> None:
    swept = swept_facts("rm -rf memory", changed("memory/a.md", "section-owned"))
    facts = swept._replace(sweeps={})
    assert gate.decide(shell("rm -rf memory"), facts) == gate.ALLOW


def test_decisions_from_several_roots_combine_like_one() -> None:
    one = gate.decide(shell("echo x >> NOTES.md"), facts_for(notes()))
    other = Decision("allow", "WAIT: b holds …", "WAIT: b holds …")
    assert gate.combine([other, one]).verdict == "deny"
    assert gate.combine([gate.ALLOW, gate.ALLOW]) == gate.ALLOW


def test_with_memkeepers_mcp_server_a_refusal_names_its_tools_too() -> None:
    plain = gate.decide(write("NOTES.md", "# Other\n"), facts_for(notes()))
    assert "memory_patch" not in plain.reason
    with_mcp = facts_for(notes())._replace(mcp=True)
    denied = gate.decide(write("NOTES.md", "# Other\n"), with_mcp)
    assert denied.verdict == "deny"
    assert 'memory_read(ref="NOTES.md#' in denied.reason
    assert "memory_patch(ref=" in denied.reason
    assert "memkeeper patch" in denied.reason  # the CLI spelling stays
    log = PathFacts("LOG.md", "missing", True, "append-only")
    appended = gate.decide(write("LOG.md", "# Log\n"), facts_for(log)._replace(mcp=True))
    assert 'memory_append(path="LOG.md", text=...)' in appended.reason

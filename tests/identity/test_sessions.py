"""Who is acting: the agent session a process runs in, and when naming another is acting as it."""

from __future__ import annotations

import pytest

from memkeeper.identity.sessions import Session, chosen, detect, impersonates

CLAUDE = {"CLAUDE_CODE_SESSION_ID": "7f3c2a10-1b2c-4d5e-8f90-123456789abc", "CLAUDECODE": "1"}
SESSION = Session("claude-code", "7f3c2a10-1b2c-4d5e-8f90-123456789abc", "CLAUDE_CODE_SESSION_ID")


def test_claude_codes_session_variable_is_its_session() -> None:
    assert detect(CLAUDE) == SESSION
    assert SESSION.identity == "claude-code:7f3c2a10-1b2c-4d5e-8f90-123456789abc"


def test_codexs_thread_is_its_session_and_the_hooks_session_id() -> None:
    # Codex runs its shell tool's commands with CODEX_THREAD_ID, the session_id of its hooks.
    thread = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
    assert detect({"CODEX_THREAD_ID": thread, "CODEX_SANDBOX": "seatbelt"}) == Session(
        "codex", thread, "CODEX_THREAD_ID"
    )


def test_an_agent_started_in_claude_codes_shell_is_judged_by_the_tables_order() -> None:
    assert detect({**CLAUDE, "CODEX_THREAD_ID": "019a"}) == SESSION


@pytest.mark.parametrize(
    "env",
    [{}, {"CLAUDECODE": "1"}, {"CLAUDE_CODE_SESSION_ID": ""}, {"CLAUDE_CODE_SESSION_ID": "a b"}],
)
def test_no_session_where_none_is_named_well(env: dict[str, str]) -> None:
    assert detect(env) is None


def test_a_session_id_that_is_no_id_is_no_session() -> None:
    assert detect({"CLAUDE_CODE_SESSION_ID": "x" * 201}) is None
    assert detect({"CLAUDE_CODE_SESSION_ID": "a\nb"}) is None


def test_the_identity_is_the_named_then_the_environments_then_the_sessions_then_human() -> None:
    assert chosen("alice", CLAUDE, "human") == ("alice", SESSION)
    assert chosen(None, {**CLAUDE, "MEMKEEPER_AGENT": "planner"}, "human") == ("planner", SESSION)
    assert chosen(None, CLAUDE, "human") == (SESSION.identity, SESSION)
    assert chosen(None, {"MEMKEEPER_AGENT": "planner"}, "human") == ("planner", None)
    assert chosen(None, {}, "human") == ("human", None)


def test_two_sessions_of_one_agent_are_two_identities() -> None:
    other = detect({"CLAUDE_CODE_SESSION_ID": "another"})
    assert other is not None
    assert other.identity != SESSION.identity


def test_acting_as_human_from_a_session_is_acting_as_another() -> None:
    assert impersonates("human", SESSION, frozenset())
    assert not impersonates("human", None, frozenset())  # a human's shell


def test_a_session_is_itself_and_its_sub_agents() -> None:
    assert not impersonates(SESSION.identity, SESSION, frozenset({SESSION.identity}))
    assert not impersonates(SESSION.identity + "/explorer", SESSION, frozenset({"human"}))
    assert impersonates("claude-code:other", SESSION, frozenset({"claude-code:other"}))


def test_a_name_nobody_holds_a_key_for_is_a_label_anyone_may_use() -> None:
    assert not impersonates("planner", SESSION, frozenset({"alice"}))
    assert impersonates("alice", SESSION, frozenset({"alice"}))

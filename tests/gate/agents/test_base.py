"""What every adapter is made of, and the readers several adapters share, on plain values:
the records (``HookInput``, ``Answer``, one ``Adapter`` per agent), ``dumps`` (one line of
JSON, non-ASCII kept), ``absolute`` (a path as the tool reaches it), ``first_string`` and
``text_field`` (the agents' differing argument names), ``edit_step`` (one old → new edit in
either spelling) and ``file_op_calls`` (one ``apply_patch`` file as the core's calls)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memkeeper.fs import agentfiles
from memkeeper.gate import agents
from memkeeper.gate.agents.base import (
    Adapter,
    Answer,
    HookInput,
    Setup,
    absolute,
    dumps,
    edit_step,
    file_op_calls,
    first_string,
    text_field,
)
from memkeeper.gate.applypatch import FileOp
from memkeeper.gate.payload import BadPayload, ToolCall

# -- the records -----------------------------------------------------------------------------------


def test_a_hook_input_defaults_to_no_calls_in_no_session() -> None:
    assert HookInput("other") == HookInput("other", (), "")


def test_an_answer_defaults_to_printing_nothing_and_exit_0() -> None:
    assert Answer() == Answer("", 0)


@pytest.mark.parametrize("name", agents.AGENTS)
def test_every_agent_has_an_adapter_by_its_name(name: str) -> None:
    adapter = agents.adapter(name)
    assert isinstance(adapter, Adapter)
    assert adapter.name == name


# -- the setups: what install-hooks writes for each agent -----------------------------------------


def test_every_agent_has_a_setup_whose_files_are_the_ones_check_looks_at() -> None:
    """``fs.agentfiles`` keeps the hook files' names and the labels for ``check``, a layer
    below the agents: the same as the setups say."""
    assert set(agents.AGENTS) == set(agentfiles.AGENTS)
    for name in agents.AGENTS:
        setup = agents.setup(name)
        assert isinstance(setup, Setup)
        assert setup.name == name
        assert setup.hook_files == agentfiles.HOOK_FILES[name]
        assert setup.label == agentfiles.LABELS[name]
        assert setup.todo
        assert set(setup.pre) <= set(setup.events)


def test_each_agent_has_json_entries_or_executable_hooks_one_per_event() -> None:
    for name in agents.AGENTS:
        setup = agents.setup(name)
        assert (setup.entry is None) is (setup.scripts is not None), name
        if setup.scripts is not None:
            assert len(setup.hook_files) == len(setup.events)
            assert "{event}" in setup.scripts.marker


def test_only_an_agent_that_keeps_its_servers_per_user_has_no_mcp_file() -> None:
    per_user = [name for name in agents.AGENTS if not agents.setup(name).mcp_file]
    assert per_user == ["cline"]


def test_a_setup_restarts_the_agent_and_starts_a_file_empty_unless_it_says_otherwise() -> None:
    def entry(event: str, command: str) -> dict[str, Any]:
        return {"command": command}

    def deny(why: str) -> dict[str, Any]:
        return {"deny": why}

    setup = Setup("x", "X Agent", (".x/hooks.json",), ("pre",), ("pre",), entry, deny, ("t",))
    assert (setup.again, setup.skeleton, setup.refuses, setup.after) == (
        "restart X Agent",
        {},
        "",
        "",
    )
    assert (setup.on_argv, setup.project_env, setup.scripts, setup.mcp_key) == (
        False,
        "",
        None,
        "mcpServers",
    )


# -- dumps -----------------------------------------------------------------------------------------


def test_dumps_is_one_line_of_json_keeping_non_ascii_text() -> None:
    reason = "CLAUDE.md is section-owned — patch it\nthen “retry”"
    out = dumps({"reason": reason, "n": [1, None]})
    assert (
        out
        == '{"reason": "CLAUDE.md is section-owned — patch it\\nthen “retry”", "n": [1, null]}\n'
    )
    assert out.count("\n") == 1
    assert json.loads(out) == {"reason": reason, "n": [1, None]}


# -- absolute --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "path", "expected"),
    [
        ("/repo", "CLAUDE.md", "/repo/CLAUDE.md"),
        ("/repo/src", "../memory/x.md", "/repo/memory/x.md"),
        ("/repo", "/etc/hosts", "/etc/hosts"),  # an absolute path ignores the cwd
        ("/repo", "./memory//./x.md", "/repo/memory/x.md"),
        ("/repo/", "", "/repo"),
        ("/", "../../x.md", "/x.md"),  # nothing above the filesystem's root
    ],
)
def test_a_path_is_taken_from_the_cwd_and_normalised(cwd: str, path: str, expected: str) -> None:
    assert absolute(cwd, path) == expected


# -- first_string and text_field -------------------------------------------------------------------


KEYS = ("path", "file_path")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "a.md"}, "a.md"),
        ({"file_path": "b.md"}, "b.md"),
        ({"file_path": "b.md", "path": "a.md"}, "a.md"),  # the keys' order, not the payload's
        ({"path": None, "file_path": "b.md"}, "b.md"),  # null is as good as missing
        ({"path": "", "file_path": "b.md"}, ""),  # an empty string is there
        ({"other": "c.md"}, None),
        ({}, None),
    ],
)
def test_first_string_is_the_first_key_the_arguments_hold(
    args: dict[str, Any], expected: str | None
) -> None:
    assert first_string(args, KEYS, "edit") == expected


@pytest.mark.parametrize("value", [3, True, ["a.md"], {"p": "a.md"}])
def test_a_key_holding_something_else_than_a_string_is_a_bad_payload(value: object) -> None:
    with pytest.raises(BadPayload) as caught:
        first_string({"file_path": value, "path": "a.md"}, ("file_path", "path"), "create")
    assert str(caught.value) == "create: file_path is not a string"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"cwd": "/repo"}, "/repo"),
        ({"cwd": ""}, ""),
        ({}, ""),
        ({"cwd": None}, ""),
        ({"cwd": 7}, ""),
        ({"cwd": ["/repo"]}, ""),
    ],
)
def test_text_field_is_the_string_there_or_empty(payload: dict[str, Any], expected: str) -> None:
    assert text_field(payload, "cwd") == expected


# -- edit_step -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"old_string": "a", "new_string": "b"}, ("a", "b", False)),
        ({"old_str": "a", "new_str": "b"}, ("a", "b", False)),  # the str_replace spelling
        ({"old_string": "a", "old_str": "x", "new_str": "b"}, ("a", "b", False)),
        ({"old_string": "a", "new_string": "b", "replace_all": True}, ("a", "b", True)),
        ({"old_string": "a", "new_string": "b", "replace_all": "true"}, ("a", "b", False)),
        ({"old_string": "a", "new_string": "b", "replace_all": 1}, ("a", "b", False)),
        ({"new_string": "b"}, ("", "b", False)),  # no old text: it only creates
        ({}, ("", "", False)),
        ({"old_string": None, "new_string": None}, ("", "", False)),
    ],
)
def test_an_edit_step_is_old_new_and_replace_all_only_when_true(
    step: dict[str, Any], expected: tuple[str, str, bool]
) -> None:
    assert edit_step(step, "multi_edit") == expected


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("old → new", "multi_edit: an edit is not an object"),
        (["a", "b"], "multi_edit: an edit is not an object"),
        (None, "multi_edit: an edit is not an object"),
        ({"old_string": 1}, "multi_edit: old_string is not a string"),
        ({"old_str": "a", "new_str": ["b"]}, "multi_edit: new_str is not a string"),
    ],
)
def test_an_edit_step_the_tool_would_reject_is_a_bad_payload(step: object, says: str) -> None:
    with pytest.raises(BadPayload) as caught:
        edit_step(step, "multi_edit")
    assert str(caught.value) == says


# -- file_op_calls ---------------------------------------------------------------------------------


BASE = ToolCall("PreToolUse", "apply_patch", "/repo/src", "s1", "call_7")


def call(tool: str, **fields: Any) -> ToolCall:
    """A call of ``BASE``'s event, cwd, session and tool use."""
    return ToolCall("PreToolUse", tool, "/repo/src", "s1", "call_7", **fields)


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (
            FileOp("add", "../CLAUDE.md", content="# Memory\n"),
            [call("Write", file_path="/repo/CLAUDE.md", content="# Memory\n")],
        ),
        (FileOp("delete", "notes.md"), [call("Bash", command="rm -- notes.md")]),
        (FileOp("delete", "my notes.md"), [call("Bash", command="rm -- 'my notes.md'")]),
        (FileOp("delete", "-x.md"), [call("Bash", command="rm -- -x.md")]),
        (
            FileOp("update", "a.md", edits=(("x\n", "y\n"), ("", "tail\n"), ("z\n", ""))),
            [
                call(
                    "Edit",
                    file_path="/repo/src/a.md",
                    edits=(("x\n", "y\n", False), ("z\n", "", False)),
                )
            ],
        ),
        (
            FileOp("update", "a.md", edits=(("x\n", "y\n"),), move_to="../b c.md"),
            [
                call("Edit", file_path="/repo/src/a.md", edits=(("x\n", "y\n", False),)),
                call("Bash", command="mv -- a.md '../b c.md'"),
            ],
        ),
        (
            FileOp("update", "a.md", edits=(("", "only added\n"),), move_to="b.md"),
            [call("Edit", file_path="/repo/src/a.md"), call("Bash", command="mv -- a.md b.md")],
        ),
    ],
    ids=["add", "delete", "delete-quoted", "delete-dash", "update", "move", "move-only"],
)
def test_each_file_of_a_patch_is_the_calls_it_amounts_to(
    op: FileOp, expected: list[ToolCall]
) -> None:
    assert file_op_calls(BASE, op) == expected


@pytest.mark.parametrize("written", ["x", ""])
def test_an_added_file_is_written_with_what_the_agent_writes_when_told(written: str) -> None:
    op = FileOp("add", "a.md", content="x\n")
    assert file_op_calls(BASE, op, add_content=written) == [
        call("Write", file_path="/repo/src/a.md", content=written)
    ]


def test_add_content_changes_only_an_added_file() -> None:
    op = FileOp("delete", "a.md")
    assert file_op_calls(BASE, op, add_content="x") == file_op_calls(BASE, op)

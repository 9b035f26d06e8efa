"""Claude Code's hook JSON read into a ``ToolCall``, or a ``BadPayload`` saying what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memkeeper.gate.payload import BadPayload, ToolCall, parse_call

CWD = "/srv/repo"


def pre(tool: str, tool_input: object, **extra: Any) -> bytes:
    """A PreToolUse payload, as Claude Code sends it."""
    fields = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
    return json.dumps({"session_id": "s1", "cwd": CWD, **fields, **extra}).encode()


# -- the shapes judged ---------------------------------------------------------------------------


def test_a_write_carries_its_absolute_path_and_content() -> None:
    call = parse_call(pre("Write", {"file_path": "CLAUDE.md", "content": "x\n"}), "/ignored")
    assert call == ToolCall(
        "PreToolUse", "Write", CWD, "s1", "", file_path=f"{CWD}/CLAUDE.md", content="x\n"
    )


def test_a_read_carries_what_it_read_and_writes_nothing() -> None:
    from memkeeper.gate.decide import targets

    call = parse_call(pre("Read", {"file_path": "CLAUDE.md", "offset": 3}), "/ignored")
    assert call == ToolCall("PreToolUse", "Read", CWD, "s1", "", file_path=f"{CWD}/CLAUDE.md")
    assert targets(call) == ()
    for odd in ({}, {"file_path": 3}, "CLAUDE.md"):
        assert parse_call(pre("Read", odd), "/ignored").file_path is None


def test_an_edit_is_one_step_and_replace_all_defaults_to_false() -> None:
    raw = pre("Edit", {"file_path": "/abs/a.md", "old_string": "a", "new_string": "b"})
    call = parse_call(raw, CWD)
    assert (call.file_path, call.edits, call.content) == ("/abs/a.md", (("a", "b", False),), None)


def test_a_multiedit_keeps_its_steps_in_order() -> None:
    steps = [
        {"old_string": "a", "new_string": "b", "replace_all": True},
        {"old_string": "c", "new_string": "d"},
    ]
    call = parse_call(pre("MultiEdit", {"file_path": "a.md", "edits": steps}), CWD)
    assert call.edits == (("a", "b", True), ("c", "d", False))


def test_a_multiedit_with_no_steps_is_read_as_none() -> None:
    assert parse_call(pre("MultiEdit", {"file_path": "a.md", "edits": []}), CWD).edits == ()


def test_a_bash_call_carries_its_command_and_ignores_the_rest() -> None:
    call = parse_call(pre("Bash", {"command": "ls > x", "timeout": 5}, tool_use_id="t9"), CWD)
    assert (call.command, call.tool_use_id, call.file_path) == ("ls > x", "t9", None)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("notes.md", f"{CWD}/notes.md"),
        ("./memory/../notes.md", f"{CWD}/notes.md"),
        ("../other/x.md", "/srv/other/x.md"),
        ("/abs//dir/./x.md", "/abs/dir/x.md"),
    ],
)
def test_a_path_is_made_absolute_against_the_sessions_cwd_and_normalised(
    path: str, expected: str
) -> None:
    assert parse_call(pre("Write", {"file_path": path, "content": ""}), CWD).file_path == expected


def test_a_missing_or_empty_cwd_is_the_hooks_own_directory() -> None:
    raw = {"hook_event_name": "PreToolUse", "tool_name": "Write"}
    tool_input = {"file_path": "a.md", "content": ""}
    for extra in ({}, {"cwd": ""}):
        call = parse_call(json.dumps({**raw, **extra, "tool_input": tool_input}), "/fallback")
        assert (call.cwd, call.file_path) == ("/fallback", "/fallback/a.md")


def test_another_tools_input_is_not_looked_at() -> None:
    call = parse_call(pre("Grep", "not even an object"), CWD)
    assert call == ToolCall("PreToolUse", "Grep", CWD, "s1")


def test_an_event_nobody_judges_is_read_without_its_fields() -> None:
    raw = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": 42, "prompt": "hi"})
    assert parse_call(raw, "/here") == ToolCall("UserPromptSubmit", "", "/here")


def test_post_tool_use_is_read_like_pre_tool_use() -> None:
    raw = pre("Write", {"file_path": "a.md", "content": "x"}, hook_event_name="PostToolUse")
    assert parse_call(raw, CWD).event == "PostToolUse"


def test_text_and_bytes_read_the_same() -> None:
    raw = pre("Bash", {"command": "echo é"})
    assert parse_call(raw, CWD) == parse_call(raw.decode(), CWD)


# -- what is refused, and how it is said ---------------------------------------------------------


def event(**fields: object) -> bytes:
    """A PreToolUse payload with only ``fields`` besides its event name."""
    return json.dumps({"hook_event_name": "PreToolUse", **fields}).encode()


def edit_input(**fields: object) -> dict[str, object]:
    return {"file_path": "a.md", "old_string": "", "new_string": "", **fields}


def steps(*edits: object) -> bytes:
    return event(tool_name="MultiEdit", tool_input={"file_path": "a.md", "edits": list(edits)})


MALFORMED = {
    "not json": (b"{nope", "not JSON: "),
    "not utf-8": (b'\xff\xfe{"a": 1}', "not JSON: "),
    "a list": (b"[1, 2]", "expected a JSON object, got list"),
    "a string": (b'"PreToolUse"', "expected a JSON object, got str"),
    "no event": (b'{"tool_name": "Write"}', "payload.hook_event_name is missing"),
    "event not a string": (b'{"hook_event_name": 1}', "payload.hook_event_name is not a string"),
    "no tool name": (event(tool_input={}), "payload.tool_name is missing"),
    "session not a string": (event(tool_name="Read", session_id=7), "session_id is not a string"),
    "tool use id null": (event(tool_name="Read", tool_use_id=None), "tool_use_id is not a string"),
    "cwd not a string": (event(tool_name="Read", cwd=["/"]), "payload.cwd is not a string"),
    "no tool input": (event(tool_name="Write"), "Write: tool_input is not an object"),
    "input a list": (event(tool_name="Bash", tool_input=["ls"]), "Bash: tool_input is not an"),
    "no command": (event(tool_name="Bash", tool_input={}), "tool_input.command is missing"),
    "command a list": (
        event(tool_name="Bash", tool_input={"command": ["ls"]}),
        "tool_input.command is not a string",
    ),
    "no file path": (event(tool_name="Edit", tool_input={}), "tool_input.file_path is missing"),
    "empty file path": (
        event(tool_name="Write", tool_input={"file_path": "", "content": ""}),
        "Write: tool_input.file_path is empty",
    ),
    "no content": (
        event(tool_name="Write", tool_input={"file_path": "a.md"}),
        "tool_input.content is missing",
    ),
    "no old string": (
        event(tool_name="Edit", tool_input={"file_path": "a.md", "new_string": ""}),
        "tool_input.old_string is missing",
    ),
    "new string a number": (
        event(tool_name="Edit", tool_input=edit_input(new_string=3)),
        "tool_input.new_string is not a string",
    ),
    "replace_all a number": (
        event(tool_name="Edit", tool_input=edit_input(replace_all=1)),
        "tool_input.replace_all is not true or false",
    ),
    "edits missing": (
        event(tool_name="MultiEdit", tool_input={"file_path": "a.md"}),
        "MultiEdit: tool_input.edits is not a list",
    ),
    "a step not an object": (
        steps(edit_input(), "x"),
        "tool_input.edits[1] is not an object",
    ),
    "a step without its old string": (
        steps({"new_string": ""}),
        "tool_input.edits[0].old_string is missing",
    ),
}


@pytest.mark.parametrize(("raw", "says"), MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_payload_is_a_bad_payload_that_says_what_is_wrong(
    raw: bytes, says: str
) -> None:
    with pytest.raises(BadPayload) as raised:
        parse_call(raw, CWD)
    assert says in str(raised.value)


def test_a_bad_payload_is_a_value_error() -> None:
    assert issubclass(BadPayload, ValueError)

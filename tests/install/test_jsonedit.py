"""JSON and JSONC edited as text: comments and layout kept, an insert undone byte for byte by
the remove, and the result always JSON that reads as the value plus (or minus) the child."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.gate.jsonc import blank
from memkeeper.install.jsonedit import insert, parse, remove, replace

ENTRY = {"matcher": "Bash", "hooks": [{"type": "command", "command": "memkeeper hook x"}]}


def member(text: str, key: str) -> Any:
    found = parse(text, "f.json").member(key)
    assert found is not None
    return found


def test_a_file_that_is_not_json_says_where_in_the_file() -> None:
    with pytest.raises(Invalid) as caught:
        parse('{\n  // fine\n  "a": 1\n  "b": 2\n}\n', ".gemini/settings.json")
    assert caught.value.message.startswith(".gemini/settings.json:4:3: not valid JSON")


def test_the_tree_knows_where_each_value_is() -> None:
    text = '{"a": [1, {"b": true}], "c": "x"}'
    top = parse(text, "f.json")
    a = member(text, "a")
    assert text[a.start : a.end] == '"a": [1, {"b": true}]'
    assert [text[c.start : c.end] for c in a.node.children] == ["1", '{"b": true}']
    assert top.value == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        "{}\n",  # (not "{\n}": with its member it reads as "{}" with one, so it comes back "{}")
        '{"a": 1}',
        '{\n    "a": 1\n}\n',
        '{\n\t"a": 1\n}\n',
        '{\n  "a": 1 // the a\n}\n',
        '{\n  "a": 1, // JSONC\n}\n',
        '{\n  "a": 1 /* runs\n  on */\n}\n',
        '{\n  "a": 1, "b": 2\n}\n',
        "{\n  // only a comment\n}\n",
    ],
)
def test_inserting_then_removing_a_member_gives_the_text_back(text: str) -> None:
    top = parse(text, "f.json")
    added = insert(text, top, ENTRY, "memkeeper")
    assert json.loads(blank(added)) == {**top.value, "memkeeper": ENTRY}
    again = parse(added, "f.json")
    found = again.member("memkeeper")
    assert found is not None
    assert remove(added, again, found) == text


def test_the_new_member_is_indented_like_its_siblings_and_a_comment_stays_on_its_line() -> None:
    text = '{\n    "a": 1 // the a\n}\n'
    added = insert(text, parse(text, "f.json"), {"b": 2}, "new")
    assert added == '{\n    "a": 1, // the a\n    "new": {\n        "b": 2\n    }\n}\n'


def test_a_trailing_comma_style_is_kept() -> None:
    text = '{\n  "a": [\n    1,\n  ],\n}\n'
    a = member(text, "a")
    added = insert(text, a.node, 2)
    assert added == '{\n  "a": [\n    1,\n    2,\n  ],\n}\n'


def test_a_line_break_inside_a_block_comment_is_not_a_place_to_insert() -> None:
    text = '{\n  "a": 1 /* runs\n  on */\n}\n'
    added = insert(text, parse(text, "f.json"), 2, "b")
    assert json.loads(blank(added)) == {"a": 1, "b": 2}
    assert "/* runs\n  on */" in added


def test_removing_a_child_in_the_middle_or_first_keeps_its_neighbours() -> None:
    text = '{\n  "a": 1,\n  "b": 2, // b\n  "c": 3\n}\n'
    top = parse(text, "f.json")
    b, a = top.member("b"), top.member("a")
    assert b is not None
    assert a is not None
    assert remove(text, top, b) == '{\n  "a": 1,\n  "c": 3\n}\n'
    assert remove(text, top, a) == '{\n  "b": 2, // b\n  "c": 3\n}\n'


def test_a_value_is_replaced_indented_as_its_line() -> None:
    text = '{\n  "a": {\n    "m": "old"\n  }\n}\n'
    m = member(text, "a")
    assert replace(text, m.node, {"x": 1}) == '{\n  "a": {\n    "x": 1\n  }\n}\n'


# -- whatever the file looks like ----------------------------------------------------------------

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.dictionaries(st.text(max_size=4), values, max_size=4),
    st.sampled_from([None, 2, 4, "\t"]),
    st.booleans(),
)
def test_any_object_gets_its_member_and_loses_it_again_byte_for_byte(
    value: dict[str, Any], indent: int | str | None, comment: bool
) -> None:
    text = json.dumps(value, indent=indent) + "\n"
    if comment and indent is not None and value:
        text = text.replace(",\n", ", // note\n", 1)
    top = parse(text, "f.json")
    added = insert(text, top, ENTRY, "\u00e9 memkeeper")
    assert json.loads(blank(added)) == {**value, "\u00e9 memkeeper": ENTRY}
    again = parse(added, "f.json")
    found = again.member("\u00e9 memkeeper")
    assert found is not None
    assert remove(added, again, found) == text


@given(st.lists(values, max_size=4), st.sampled_from([None, 2, "\t"]))
def test_any_list_gets_its_item_and_loses_it_again_byte_for_byte(
    items: list[Any], indent: int | str | None
) -> None:
    text = json.dumps({"hooks": {"PreToolUse": items}}, indent=indent)
    groups = member(text, "hooks").node.member("PreToolUse")
    assert groups is not None
    added = insert(text, groups.node, ENTRY)
    loaded = json.loads(added)
    assert loaded["hooks"]["PreToolUse"] == [*items, ENTRY]
    again = member(added, "hooks").node.member("PreToolUse")
    assert again is not None
    assert remove(added, again.node, again.node.children[-1]) == text

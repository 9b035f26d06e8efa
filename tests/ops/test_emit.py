"""``emit``: coordination events recorded from outside, and what it refuses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memkeeper import Invalid, Memory
from memkeeper.cli.main import main
from memkeeper.ops.emit import MAX_DATA_BYTES, parse_data


def test_an_emitted_event_is_chained_with_its_type_data_and_agent(memory: Memory) -> None:
    event = memory.emit("task.completed", {"task": "T-12", "by": "ci"})
    assert (event.type, event.actor) == ("task.completed", "agent-a")
    assert event.data == {"task": "T-12", "by": "ci"}
    assert (event.path, event.section) == (None, None)
    assert memory.events()[-1] == event
    assert memory.verify()["events"] == 1


@pytest.mark.parametrize(
    "type",
    ["section.patched", "claim.granted", "policy.violation", "region.x", "entry", "reconcile.y"],
)
def test_memkeepers_own_event_families_cannot_be_emitted(memory: Memory, type: str) -> None:
    with pytest.raises(Invalid, match=r"memkeeper's own"):
        memory.emit(type)
    assert memory.events() == []


@pytest.mark.parametrize("type", ["", "Task.Done", "1task", "task done", "task/done", "a" * 101])
def test_a_type_must_be_a_lowercase_dotted_name(memory: Memory, type: str) -> None:
    with pytest.raises(Invalid, match=r"for example task\.completed"):
        memory.emit(type)


@pytest.mark.parametrize("type", ["risk", "risk.found", "deploy_2.done-ok", "sectionx.y"])
def test_sane_types_outside_the_reserved_families_are_accepted(memory: Memory, type: str) -> None:
    assert memory.emit(type).type == type


def test_data_must_be_plain_finite_json_of_modest_size(memory: Memory) -> None:
    with pytest.raises(Invalid, match="not plain JSON"):
        memory.emit("risk.found", {"x": math.nan})
    with pytest.raises(Invalid, match="not plain JSON"):
        memory.emit("risk.found", {"x": object()})
    with pytest.raises(Invalid, match="the limit is"):
        memory.emit("risk.found", {"x": "y" * MAX_DATA_BYTES})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "not an array"),
        ('"done"', "not a string"),
        ("null", "not null"),
        ("{", "not valid JSON"),
        ('{"x": NaN}', "not valid JSON"),
    ],
)
def test_data_from_the_command_line_must_be_a_json_object(text: str, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        parse_data(text)


def test_data_from_the_command_line_defaults_to_an_empty_object() -> None:
    assert parse_data(None) == {}
    assert parse_data('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}


def test_the_emit_command_prints_the_event_and_refuses_reserved_types_with_exit_2(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ["--root", str(sample), "--agent", "ci"]
    assert main(["emit", "risk.found", "--data", '{"title": "flaky"}', "--json", *root]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "ok"
    assert (printed["type"], printed["actor"]) == ("risk.found", "ci")
    assert printed["data"] == {"title": "flaky"}
    assert main(["emit", "claim.granted", "--json", *root]) == 2
    refused = json.loads(capsys.readouterr().out)
    assert refused["status"] == "invalid"
    assert "claim.* events are memkeeper's own" in refused["message"]
    assert main(["emit", "task.done", *root]) == 0
    assert capsys.readouterr().out == "recorded event 2: task.done\n"

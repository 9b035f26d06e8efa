"""The streaming verbs through ``main()`` and their pieces: ``watch`` (with a scripted change
source instead of watchfiles), ``events --follow`` (stopped by its signal helper) and ``emit``."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence, Set
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memkeeper import Memory
from memkeeper.cli import watch
from memkeeper.daemon import loop

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Cli

Raw = Set[tuple[int, str]]


# -- _millis -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "ms"), [("0", 0), ("50", 50), ("007", 7), ("120000", 120000)])
def test_milliseconds_are_whole_numbers_of_zero_or_more(text: str, ms: int) -> None:
    assert watch._millis(text) == ms


@pytest.mark.parametrize("text", ["", "-1", "1.5", "1e3", " 5", "٣", "²", "fifty"])
def test_anything_else_is_refused_with_the_text_quoted(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        watch._millis(text)
    assert str(raised.value) == f"{text!r} is not a whole number of milliseconds >= 0"


def test_a_bad_debounce_is_a_usage_error_before_anything_runs(cli: Cli, sample: Path) -> None:
    done = cli("watch", "--debounce-ms", "-5")
    assert done.code == 2
    assert "--debounce-ms: '-5' is not a whole number of milliseconds" in done.stderr
    assert not (sample / ".memkeeper").exists()


# -- watch, with a scripted source ---------------------------------------------------------------


class OneTick:
    """Stands in for ``WatchfilesSource``: remembers its options, yields one quiet tick and
    ends, as watchfiles does once stopped."""

    made: ClassVar[list[dict[str, int]]] = []

    def __init__(self, **options: int) -> None:
        self.made.append(options)

    def watch(self, dirs: Sequence[str], stop: object) -> Iterator[Raw]:
        yield set()


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """``watch`` runs on ``OneTick``; the options each source was made with."""
    made: list[dict[str, int]] = []
    monkeypatch.setattr(OneTick, "made", made)
    monkeypatch.setattr(loop, "WatchfilesSource", OneTick)
    return made


def test_watch_streams_one_json_line_per_outcome_and_prints_nothing_after(
    cli: Cli, sample: Path, scripted: list[dict[str, int]]
) -> None:
    assert cli("init").code == 0
    done = cli("watch", "--json", "--debounce-ms", "5", "--step-ms", "7")
    assert done.code == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["status"], o["action"]) for o in lines] == [
        ("ok", "started"),
        ("ok", "regenerated"),
        ("ok", "stopped"),
    ]
    assert lines[0]["path"] == str(sample.resolve())
    assert scripted == [{"debounce_ms": 5, "step_ms": 7}]


def test_watch_for_people_prints_one_timed_line_per_outcome(
    cli: Cli, scripted: list[dict[str, int]]
) -> None:
    assert cli("init").code == 0
    lines = cli("watch").stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["started", "regenerated", "stopped"]
    assert scripted == [{"debounce_ms": 50, "step_ms": 20}]


def test_a_second_watch_on_the_same_home_is_refused_with_exit_1(
    cli: Cli, memory: Memory, scripted: list[dict[str, int]]
) -> None:
    with loop.instance_lock(memory.home):
        done = cli("watch", "--json")
    assert done.code == 1
    assert "memkeeper watch is already running for this memory home" in done.json["message"]
    assert done.json["pid"] == os.getpid()
    assert scripted == [{"debounce_ms": 50, "step_ms": 20}]  # made, never watched


# -- emit ----------------------------------------------------------------------------------------


def test_emit_records_an_event_by_the_agent_with_its_data(cli: Cli) -> None:
    done = cli("emit", "task.completed", "--data", '{"task": "T-1"}', "--agent", "ci", "--json")
    assert done.code == 0, done.stderr
    assert (done.json["id"], done.json["type"], done.json["actor"]) == (1, "task.completed", "ci")
    assert done.json["data"] == {"task": "T-1"}
    (listed,) = [json.loads(line) for line in cli("events", "--json").stdout.splitlines()]
    assert listed == done.json


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("{nope", "--data: not valid JSON"),
        ("[1]", "--data: must be a JSON object, not an array"),
        ('{"x": NaN}', "--data: not valid JSON (NaN is not JSON"),
    ],
)
def test_emit_refuses_data_that_is_not_a_json_object(cli: Cli, data: str, says: str) -> None:
    done = cli("emit", "task.completed", "--data", data, "--json")
    assert (done.code, done.json["status"]) == (2, "invalid")
    assert done.json["message"].startswith(says)
    assert cli("events", "--json").stdout == ""


# -- events --follow -----------------------------------------------------------------------------


@pytest.fixture
def stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """``events --follow`` finds its stop event already set: one pass, then it returns."""

    @contextlib.contextmanager
    def already_set() -> Iterator[threading.Event]:
        stop = threading.Event()
        stop.set()
        yield stop

    monkeypatch.setattr(watch, "stop_on_signals", already_set)


@pytest.mark.usefixtures("stopped")
def test_follow_prints_the_events_after_since_then_stops(cli: Cli, memory: Memory) -> None:
    for n in range(3):
        memory.emit("step.done", {"n": n})
    done = cli("events", "--follow", "--since", "1", "--json")
    assert done.code == 0
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(e["status"], e["id"], e["data"]) for e in lines] == [
        ("ok", 2, {"n": 1}),
        ("ok", 3, {"n": 2}),
    ]


@pytest.mark.usefixtures("stopped")
def test_follow_keeps_only_what_the_filters_keep(cli: Cli, memory: Memory, sample: Path) -> None:
    memory.emit("task.started", {"n": 1})
    memory.emit("task.completed", {"n": 1})
    Memory(sample, "agent-b").emit("task.completed", {"n": 2})
    done = cli("events", "--follow", "--type", "task.completed", "--actor", "agent-b", "--json")
    assert [json.loads(line)["data"] for line in done.stdout.splitlines()] == [{"n": 2}]
    typed = cli("events", "--follow", "--type", "task.*", "--json")
    assert len(typed.stdout.splitlines()) == 3


@pytest.mark.usefixtures("stopped")
def test_follow_for_people_prints_event_lines(cli: Cli, memory: Memory) -> None:
    memory.emit("risk.found", {"title": "flaky"})
    (line,) = cli("events", "--follow").stdout.splitlines()
    assert line.split()[0] == "1"
    assert re.search(r' agent-a +risk\.found +\{"title": "flaky"\}$', line)


def test_follow_prints_an_event_recorded_meanwhile_and_stops_on_sigint(
    cli: Cli, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    following = threading.Event()
    real = watch.stop_on_signals

    @contextlib.contextmanager
    def announced() -> Iterator[threading.Event]:
        with real() as stop:
            following.set()
            yield stop

    def record_then_interrupt() -> None:
        assert following.wait(10)  # the handlers are in place: a SIGINT cannot kill pytest
        Memory(sample, "agent-b").emit("task.completed", {"task": "T-9"})
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(watch, "stop_on_signals", announced)
    before = signal.getsignal(signal.SIGINT)
    worker = threading.Thread(target=record_then_interrupt)
    worker.start()
    done = cli("events", "--follow", "--json")
    worker.join(10)
    (line,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert (done.code, line["type"], line["actor"]) == (0, "task.completed", "agent-b")
    assert signal.getsignal(signal.SIGINT) is before


class BrokenPipe(io.StringIO):
    """A stdout whose reader has gone; its descriptor is ``fd``."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        return self.fd


def test_follow_stops_quietly_once_nobody_reads_and_points_stdout_at_devnull(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.emit("step.done", {"n": 1})
    memory.emit("step.done", {"n": 2})
    out = tmp_path / "stdout"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT)
    try:
        monkeypatch.setattr(sys, "stdout", BrokenPipe(fd))
        assert watch.follow_events(memory, 0, as_json=True) == {"events": []}
        os.write(fd, b"after the reader left")
    finally:
        os.close(fd)
    assert out.read_bytes() == b""


# -- the signal helper ---------------------------------------------------------------------------


def test_sigterm_and_sigint_set_the_stop_event_and_the_old_handlers_come_back() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for number in before:
        with watch.stop_on_signals() as stop:
            assert not stop.is_set()
            signal.raise_signal(number)
            assert stop.is_set()
    assert {s: signal.getsignal(s) for s in before} == before


def test_off_the_main_thread_the_helper_installs_nothing() -> None:
    seen: list[Any] = []

    def in_a_thread() -> None:
        with watch.stop_on_signals() as stop:
            seen.extend([stop.is_set(), signal.getsignal(signal.SIGTERM)])

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=in_a_thread)
    worker.start()
    worker.join(10)
    assert seen == [False, before]

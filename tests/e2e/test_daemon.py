"""The real daemon and event stream: ``memkeeper watch`` and ``events --follow`` in subprocesses,
on a copy of sample-repo, with real files, real watchfiles and real signals."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memkeeper import Memory
from tests.conftest import MEMKEEPER, Cli

GOAL_S = 2.0  # generous: the figures themselves come from bench/daemon.py


class Streamed:
    """A long-running memkeeper process whose stdout lines arrive on a queue."""

    def __init__(self, root: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
        self.proc = subprocess.Popen(
            [MEMKEEPER, *args], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.decode())

    def next_json(self, timeout: float = 10.0) -> dict[str, Any]:
        loaded = json.loads(self.lines.get(timeout=timeout))
        assert isinstance(loaded, dict)
        return loaded

    def wait_for(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            line = self.next_json()
            if wanted(line):
                return line

    def signal_and_wait(self, number: int = signal.SIGTERM) -> tuple[int, float]:
        """Send a signal; the exit code and how long the process took to exit."""
        start = time.monotonic()
        self.proc.send_signal(number)
        code = self.proc.wait(timeout=10)
        return code, time.monotonic() - start

    def remaining(self) -> list[dict[str, Any]]:
        """Every line not read yet, once the process has exited."""
        self._reader.join(timeout=10)
        lines = []
        while not self.lines.empty():
            lines.append(self.next_json())
        return lines

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def spawn(sample: Path) -> Iterator[Callable[..., Streamed]]:
    started: list[Streamed] = []

    def start(*args: str) -> Streamed:
        started.append(Streamed(sample, *args))
        return started[-1]

    yield start
    for process in started:
        process.close()


def until(check: Callable[[], bool], timeout: float = 10.0) -> float:
    """Poll ``check`` every few ms; the seconds it took to hold (fail after ``timeout``)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, "timed out"
        time.sleep(0.005)
    return time.monotonic() - start


def events_of(cli: Cli, type: str) -> list[dict[str, Any]]:
    done = cli("events", "--json")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [e for e in lines if e["type"] == type]


def test_the_daemon_notices_saves_renders_claims_refuses_a_twin_and_stops_on_sigterm(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    assert cli("init").code == 0
    daemon = spawn("watch", "--json")
    started = daemon.wait_for(lambda o: o["action"] == "started")
    assert started["status"] == "ok"

    claude = sample / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make build", "make wheel"))  # in place
    saved = time.monotonic()
    line = daemon.wait_for(lambda o: o["action"] == "indexed")
    in_place_s = time.monotonic() - saved
    assert (line["path"], line["section"]) == ("CLAUDE.md", "inventory-service/build")
    assert len(events_of(cli, "section.external_edit")) == 1

    agents = sample / "AGENTS.md"
    temp = sample / "AGENTS.md.new"
    temp.write_text(agents.read_text() + "\n- by rename\n")
    os.replace(temp, agents)  # an editor's atomic save
    line = daemon.wait_for(lambda o: o["action"] == "indexed")
    assert line["path"] == "AGENTS.md"

    status = sample / "memory/status.md"
    assert cli("claim", "src/api/", "--ttl", "60", "--agent", "agent-b").code == 0
    region_s = until(lambda: "| agent-b | write | src/api/ |" in status.read_text())
    assert in_place_s < GOAL_S
    assert region_s < GOAL_S

    twin = cli("watch")
    assert twin.code == 1
    assert f"already running for this memory home (pid {daemon.proc.pid})" in twin.stderr

    code, took = daemon.signal_and_wait(signal.SIGTERM)
    assert code == 0
    assert took < 1.0
    assert daemon.remaining()[-1]["action"] == "stopped"
    print(f"\nsave -> event {in_place_s * 1000:.0f} ms; claim -> region {region_s * 1000:.0f} ms")


def test_sigint_stops_the_daemon_cleanly_too(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    assert cli("init").code == 0
    daemon = spawn("watch", "--json")
    daemon.wait_for(lambda o: o["action"] == "started")
    code, took = daemon.signal_and_wait(signal.SIGINT)
    assert (code, took < 1.0) == (0, True)
    again = spawn("watch", "--json")  # the lock went with the process
    again.wait_for(lambda o: o["action"] == "started")
    assert again.signal_and_wait()[0] == 0


def test_the_daemon_survives_a_deleted_file_and_a_policy_edit(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    assert cli("init").code == 0
    daemon = spawn("watch", "--json")
    daemon.wait_for(lambda o: o["action"] == "started")
    (sample / "memory/risks.md").unlink()
    assert daemon.wait_for(lambda o: o["action"] == "gone")["path"] == "memory/risks.md"
    policy = sample / ".memkeeper.yaml"
    (sample / "docs/notes.md").write_text("# Notes\n\nfirst\n")
    rule = "  - path: docs/**\n    class: section-owned\n"
    policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))
    daemon.wait_for(lambda o: o["action"] == "reloaded")
    daemon.wait_for(lambda o: o["action"] == "rewatched")
    daemon.wait_for(lambda o: o["action"] == "indexed" and o["path"] == "docs/notes.md")
    notes = sample / "docs/notes.md"
    notes.write_text(notes.read_text() + "second\n")
    line = daemon.wait_for(lambda o: o["action"] == "indexed" and o["path"] == "docs/notes.md")
    assert line["section"] == "notes"  # an edit of a file it knows: indexed by section
    assert daemon.signal_and_wait()[0] == 0


def test_a_claim_is_expired_on_time_without_any_command(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    assert cli("init").code == 0
    daemon = spawn("watch", "--json")
    daemon.wait_for(lambda o: o["action"] == "started")
    claim = cli("claim", "src/api/", "--ttl", "1", "--agent", "agent-b", "--json").json
    status = sample / "memory/status.md"
    row = "| agent-b | write | src/api/ |"
    until(lambda: row in status.read_text())
    expired = daemon.wait_for(lambda o: o["action"] == "expired")
    late_s = time.time() - datetime.fromisoformat(claim["expires_at"]).timestamp()
    assert f"claim {claim['id']} of agent-b" in expired["detail"]
    until(lambda: row not in status.read_text())
    assert late_s < GOAL_S
    assert daemon.signal_and_wait()[0] == 0


def test_the_watchdog_marks_a_claim_idle_and_not_one_whose_files_change(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    """The real daemon, real watches, real time: ``idle_after: 2``; a claim nobody works
    under goes idle about 2 s after its grant, one whose directory a process keeps writing
    under does not, and the holder finds the message in its inbox."""
    policy = sample / ".memkeeper.yaml"
    policy.write_text(
        policy.read_text().replace("  max_ttl: 3600\n", "  max_ttl: 3600\n  idle_after: 2\n")
    )
    (sample / "docs" / "live").mkdir()
    assert cli("init").code == 0
    daemon = spawn("watch", "--json")
    daemon.wait_for(lambda o: o["action"] == "started")
    quiet = cli("claim", "src/", "--ttl", "600", "--agent", "agent-b", "--json").json["id"]
    busy = cli("claim", "docs/", "--ttl", "600", "--agent", "agent-c", "--json").json["id"]
    granted = time.monotonic()

    def work() -> None:  # 5 s of work under docs/, in a directory made before the claim
        for n in range(20):
            (sample / "docs" / "live" / "work.txt").write_text(f"step {n}\n")
            time.sleep(0.25)

    worker = threading.Thread(target=work)
    worker.start()
    went = daemon.wait_for(lambda o: o["action"] == "idle")
    took = time.monotonic() - granted
    worker.join()
    assert went["detail"].startswith(f"claim {quiet} of agent-b on src/")
    assert 1.5 < took < 4.0
    marks = [e["data"]["id"] for e in events_of(cli, "claim.idle")]
    assert marks == [quiet], f"{busy} moved all along"
    inbox = cli("inbox", "--agent", "agent-b", "--json").json["messages"]
    assert [(m["kind"], m["about"]) for m in inbox] == [("idle", quiet)]
    assert daemon.signal_and_wait()[0] == 0


def test_events_follow_streams_new_events_until_a_signal(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    follow = spawn("events", "--follow", "--json")
    assert cli("emit", "task.completed", "--data", '{"task": "T-1"}').code == 0
    line = follow.next_json()
    assert (line["status"], line["type"], line["data"]) == ("ok", "task.completed", {"task": "T-1"})
    assert cli("claim", "src/", "--ttl", "30", "--agent", "agent-b").code == 0
    assert follow.next_json()["type"] == "claim.granted"
    code, took = follow.signal_and_wait(signal.SIGINT)
    assert (code, took < 1.0) == (0, True)


def test_events_follow_type_is_woken_by_the_event_itself_within_100_ms(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    """A completion reaches whoever follows its type as it is committed: the follower waits
    on the store's movement, not on a poll."""
    follow = spawn("events", "--follow", "--type", "task.completed", "--json")
    assert cli("emit", "task.completed", "--data", '{"n": -1}').code == 0
    assert follow.next_json()["data"] == {"n": -1}  # it is up
    took = []
    for n in range(5):
        time.sleep(0.2)
        assert cli("emit", "task.started", "--data", json.dumps({"n": n})).code == 0
        memory = Memory.open(sample, agent="agent-b")
        start = time.monotonic()
        memory.emit("task.completed", {"n": n})
        memory.close()
        line = follow.next_json()
        took.append(time.monotonic() - start)
        assert (line["type"], line["data"]) == ("task.completed", {"n": n})  # no task.started
    assert sorted(took)[len(took) // 2] < 0.1, took
    assert follow.signal_and_wait(signal.SIGTERM)[0] == 0


def test_events_follow_resumes_after_the_id_given_with_since(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    for n in range(3):
        assert cli("emit", "step.done", "--data", json.dumps({"n": n})).code == 0
    follow = spawn("events", "--follow", "--since", "2", "--json")
    assert follow.next_json()["data"] == {"n": 2}
    assert cli("emit", "step.done", "--data", '{"n": 3}').code == 0
    assert follow.next_json()["data"] == {"n": 3}
    assert follow.signal_and_wait(signal.SIGTERM)[0] == 0


def test_events_follow_prints_lines_for_people_without_json(
    sample: Path, cli: Cli, spawn: Callable[..., Streamed]
) -> None:
    follow = spawn("events", "--follow")
    assert cli("emit", "risk.found", "--agent", "ci").code == 0
    line = follow.lines.get(timeout=10)
    assert line.split()[:4] == ["1", line.split()[1], "ci", "risk.found"]
    assert follow.signal_and_wait()[0] == 0


def test_emit_refuses_memkeepers_own_types_with_exit_2(cli: Cli) -> None:
    done = cli("emit", "section.patched", "--data", "{}")
    assert done.code == 2
    assert "section.* events are memkeeper's own" in done.stderr
    assert cli("emit", "task.done", "--data", "[1]").code == 2

"""Writers that take no lock: a human's editor saving CLAUDE.md in place, in one write or in two
chunks with a pause, while agents patch other sections and the daemon runs. memkeeper must
never be the reason a save is lost: each save's text ends up in the file, or whole in a
``save.raced`` event (docs/reference.md §15)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memkeeper import Conflict, Memory
from tests.conftest import MEMKEEPER

TESTING = "## Testing\n"
NOTES = "## Notes\n"  # memory/status.md: manual text below the generated regions


def human(path: Path, heading: str, saves: int, max_pause: float, seed: int) -> None:
    """The editor: read the file, add a line under ``heading``, save it in place."""
    chance = random.Random(seed)
    for number in range(saves):
        text = path.read_text()
        at = text.index(heading) + len(heading)
        data = (text[:at] + f"- save {number}\n" + text[at:]).encode()
        with open(path, "r+b") as handle:  # in place, as most editors save: truncate, write
            handle.truncate(0)
            if chance.random() < 0.3:  # two chunks with a pause between them
                cut = chance.randrange(1, len(data))
                handle.write(data[:cut])
                handle.flush()
                time.sleep(chance.uniform(0.01, max_pause))
                handle.write(data[cut:])
            else:
                handle.write(data)
        time.sleep(chance.uniform(0.02, 0.1))  # a fast human: ten saves a second or so


def agent(root: Path, name: str, stop_at: float) -> int:
    """Patch ``#build`` in a loop (re-reading after a conflict) until ``stop_at``."""
    memory, done = Memory.open(root, agent=name), 0
    while time.time() < stop_at:
        section = memory.read("CLAUDE.md#build")
        try:
            memory.patch(
                "CLAUDE.md#build", section.content + f"- {name} {done}\n", expect_rev=section.rev
            )
            done += 1
        except Conflict:
            continue
    return done


def emitter(root: Path, name: str, stop_at: float) -> int:
    """Emit events in a loop (each one re-renders memory/status.md) until ``stop_at``."""
    memory, done = Memory.open(root, agent=name), 0
    while time.time() < stop_at:
        memory.emit("task.progress", {"step": done})
        done += 1
        time.sleep(0.02)
    return done


def run_race(
    root: Path, saves: int, max_pause: float, target: str = "CLAUDE.md"
) -> tuple[str, list[dict[str, object]]]:
    """A human saving ``target`` while two agents work: patching ``CLAUDE.md#build``, or, for
    the generated page, emitting events the daemon renders into it."""
    subprocess.run([MEMKEEPER, "init"], cwd=root, check=True, capture_output=True)
    worker, heading = ("agent", TESTING) if target == "CLAUDE.md" else ("emitter", NOTES)
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]);"
        f"from tests.e2e.test_unlocked_writers import {worker};"
        f"{worker}(__import__('pathlib').Path(sys.argv[2]), sys.argv[3], float(sys.argv[4]))"
    )
    project = str(Path(__file__).resolve().parents[2])
    stop_at = str(time.time() + 600)  # they are stopped long before; a bound if a test dies
    log = watch_log(root).open("wb")  # what the daemon did, for a failure's report
    daemon = subprocess.Popen([MEMKEEPER, "watch", "--json"], cwd=root, stdout=log)
    log.close()
    agents: list[subprocess.Popen[bytes]] = []
    try:
        time.sleep(0.5)
        for name in ("agent-a", "agent-b"):
            argv = [sys.executable, "-c", code, project, str(root), name, stop_at]
            agents.append(subprocess.Popen(argv))
        human(root / target, heading, saves, max_pause, seed=saves)
        stop(agents)
        caught_up(root)  # the daemon indexes the human's last save once it has been quiet
    finally:
        stop([*agents, daemon])
    settle = "from memkeeper import Memory; import sys; Memory.open(sys.argv[1]).workspace"
    deadline = time.time() + 10  # what was kept of replaced files, settled (as the daemon does)
    kept = root / ".memkeeper" / "kept"
    while time.time() < deadline and kept.is_dir() and any(kept.iterdir()):
        subprocess.run(
            [sys.executable, "-c", settle + ".settle_kept()", str(root)], check=True, cwd=root
        )
        time.sleep(0.3)
    events = subprocess.run(
        [MEMKEEPER, "events", "--json"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    return (root / target).read_text(), [json.loads(line) for line in events]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


def caught_up(root: Path, within: float = 20.0) -> None:
    """Wait until ``verify`` is clean: every save indexed, every kept file settled."""
    deadline = time.time() + within
    while time.time() < deadline:
        verify = subprocess.run([MEMKEEPER, "verify"], cwd=root, capture_output=True)
        if verify.returncode == 0:
            return
        time.sleep(0.2)


def lost_saves(text: str, events: list[dict[str, object]], saves: int) -> list[int]:
    raced = " ".join(
        str(e["data"]) for e in events if e["type"] == "save.raced"
    )  # a save kept whole in an event is not lost
    return [
        n for n in range(saves) if f"- save {n}\n" not in text and f"- save {n}\\n" not in raced
    ]


def watch_log(root: Path) -> Path:
    return root.parent / "watch.jsonl"


def test_no_save_of_a_writer_without_a_lock_is_lost(sample: Path) -> None:
    saves = int(os.environ.get("MEMKEEPER_STRESS_SAVES", "60"))
    text, events = run_race(sample, saves, max_pause=0.3)
    assert lost_saves(text, events, saves) == []
    verify = subprocess.run([MEMKEEPER, "verify", "--json"], cwd=sample, capture_output=True)
    last = watch_log(sample).read_text(errors="replace").splitlines()[-15:]
    assert verify.returncode == 0, (verify.stdout, "the daemon's last lines:", last)


def test_no_save_to_a_generated_page_is_lost_while_the_daemon_renders_it(sample: Path) -> None:
    saves = int(os.environ.get("MEMKEEPER_STRESS_SAVES", "60"))
    text, events = run_race(sample, saves, max_pause=0.3, target="memory/status.md")
    assert lost_saves(text, events, saves) == []
    assert "task.progress" in text  # the page was rendered meanwhile, around the notes
    verify = subprocess.run([MEMKEEPER, "verify", "--json"], cwd=sample, capture_output=True)
    assert verify.returncode == 0, verify.stdout


@pytest.mark.slow
def test_no_save_is_lost_over_six_hundred_saves_with_pauses_up_to_a_second(sample: Path) -> None:
    text, events = run_race(sample, 600, max_pause=1.0)
    assert lost_saves(text, events, 600) == []


@pytest.mark.slow
def test_no_save_to_a_generated_page_is_lost_over_six_hundred_saves(sample: Path) -> None:
    text, events = run_race(sample, 600, max_pause=1.0, target="memory/status.md")
    assert lost_saves(text, events, 600) == []

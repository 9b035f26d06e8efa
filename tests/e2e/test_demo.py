"""The README's first command: the demo runs to its end and reads as a person follows it —
every list as words, the same writer's name for the same edit in every step, what the daemon
did before the save printed before it, the text that arrived in the other clone shown, and no
dashboard address printed for a server that stops with a demo nobody can interact with."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "demo.py"


@pytest.fixture(scope="module")
def printed() -> str:
    done = subprocess.run(
        [sys.executable, str(DEMO)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def steps(printed: str) -> dict[int, str]:
    parts = re.split(r"^== (\d+)\. ", printed, flags=re.MULTILINE)
    return {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=True)}


def test_the_demo_runs_every_step(printed: str) -> None:
    assert sorted(steps(printed)) == list(range(1, 15))


def test_no_python_value_is_printed_for_a_person(printed: str) -> None:
    assert not re.search(r"\['|\{'|\bTrue\b|\bNone\b", printed)


def test_an_edit_memkeeper_did_not_see_is_called_what_the_log_calls_it(printed: str) -> None:
    shown = steps(printed)
    assert "external" in shown[4]
    assert re.search(
        r"external +section\.external_edit +CLAUDE\.md#inventory-service/build", shown[10]
    )


def test_the_daemons_start_up_work_is_printed_before_the_save(printed: str) -> None:
    lines = steps(printed)[11].splitlines()
    saved = next(n for n, line in enumerate(lines) if "a human saves CLAUDE.md" in line)
    indexed = next(n for n, line in enumerate(lines) if "[watch] indexed CLAUDE.md" in line)
    between = lines[saved:indexed]
    assert not [line for line in between if "[watch]" in line]


def test_the_text_that_arrived_in_the_other_clone_is_shown(printed: str) -> None:
    assert "    | - Shared across machines through etcd." in steps(printed)[13]


def test_the_two_claims_tables_after_keep_human_are_told_apart(printed: str) -> None:
    assert "the human's edited table, now plain text above the region" in steps(printed)[9]


def test_no_dead_dashboard_address_is_printed_without_a_terminal(printed: str) -> None:
    shown = steps(printed)[14]
    assert "?token=" not in shown
    assert "it stops with the demo" in shown

"""The one exit boundary: expected errors become exit codes and messages, anything else is a
bug whose traceback goes to ``.memkeeper/error.log`` (or stderr), never a bare crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from memkeeper import Memory
from memkeeper.cli import main as cli_main
from memkeeper.cli import output
from memkeeper.cli.boundary import fail
from memkeeper.errors import (
    Busy,
    Conflict,
    EnvironmentFailure,
    Failed,
    Invalid,
    MemkeeperError,
    PolicyInvalid,
    Refused,
)
from memkeeper.records import SectionText, Violation
from tests.conftest import Cli, Run

READ = ("read", "CLAUDE.md#build")


def raising(exc: BaseException) -> Any:
    """A verb (or any callable) that raises ``exc`` whatever it is given."""

    def verb(*args: object, **kwargs: object) -> NoReturn:
        raise exc

    return verb


@pytest.fixture
def broken_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read`` fails with a bug of its own."""
    monkeypatch.setitem(cli_main.COMMANDS, "read", raising(RuntimeError("kaboom")))


@pytest.fixture
def home(cli: Cli, sample: Path) -> Path:
    """The sample initialised (it has a memory home); the path of its error log."""
    assert cli("init").code == 0
    return sample / ".memkeeper" / "error.log"


# -- bugs ------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("broken_read")
def test_an_unexpected_exception_exits_1_and_logs_its_traceback_under_the_root(
    cli: Cli, home: Path
) -> None:
    done = cli(*READ)
    assert (done.code, done.stdout) == (1, "")
    assert done.stderr.startswith("memkeeper: internal error: RuntimeError: kaboom — this is a bug")
    assert f"the traceback is in {home} (or run again with --debug)" in done.stderr
    assert "Traceback" not in done.stderr
    log = home.read_text()
    assert "memkeeper read CLAUDE.md#build\nTraceback (most recent call last):\n" in log
    assert log.rstrip().endswith("RuntimeError: kaboom")
    assert "in verb\n" in log  # the frame that raised, not just the message


@pytest.mark.usefixtures("broken_read")
def test_with_json_a_bug_is_one_object_with_status_error_naming_the_log(
    cli: Cli, home: Path
) -> None:
    done = cli(*READ, "--json")
    assert done.code == 1
    assert done.json["status"] == "error"
    assert done.json["log"] == str(home)
    assert "internal error: RuntimeError: kaboom" in done.json["message"]
    assert done.stderr == ""


@pytest.mark.usefixtures("broken_read")
def test_each_bug_is_appended_to_the_log_under_its_own_header(cli: Cli, home: Path) -> None:
    cli(*READ)
    cli(*READ, "--agent", "agent-b")
    headers = [line for line in home.read_text().splitlines() if line.startswith("### ")]
    assert len(headers) == 2
    assert headers[1].endswith(": memkeeper read CLAUDE.md#build --agent agent-b")
    assert " pid " in headers[0]


@pytest.mark.usefixtures("broken_read")
def test_with_debug_the_traceback_goes_to_stderr_and_no_log_is_written(
    cli: Cli, home: Path
) -> None:
    done = cli(*READ, "--debug")
    assert done.code == 1
    assert done.stderr.startswith("Traceback (most recent call last):\n")
    assert "RuntimeError: kaboom\nmemkeeper: internal error" in done.stderr
    assert done.stderr.rstrip().endswith("please report it with the traceback above")
    assert not home.exists()
    as_json = cli(*READ, "--debug", "--json")
    assert (as_json.json["status"], as_json.json["log"]) == ("error", None)
    assert "Traceback" in as_json.stderr
    assert not home.exists()


@pytest.mark.usefixtures("broken_read")
def test_without_a_memory_home_nothing_is_created_and_the_traceback_goes_to_stderr(
    cli: Cli, sample: Path
) -> None:
    done = cli(*READ)
    assert done.code == 1
    assert "Traceback (most recent call last):" in done.stderr
    assert "the traceback above" in done.stderr
    assert cli(*READ, "--json").json["log"] is None
    assert not (sample / ".memkeeper").exists()


def test_a_bug_before_the_root_is_known_goes_to_stderr(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Memory, "open", raising(RuntimeError("no root yet")))
    done = cli(*READ)
    assert done.code == 1
    assert "RuntimeError: no root yet" in done.stderr
    assert "Traceback" in done.stderr
    assert not home.exists()


@pytest.mark.usefixtures("broken_read")
def test_a_log_that_cannot_be_written_falls_back_to_stderr(cli: Cli, home: Path) -> None:
    home.mkdir()  # opening a directory for appending fails
    done = cli(*READ)
    assert done.code == 1
    assert "Traceback" in done.stderr
    assert "the traceback above" in done.stderr


def test_a_failure_while_printing_for_people_is_caught_by_the_boundary_too(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output, "render", raising(KeyError("heading")))
    done = cli(*READ)
    assert (done.code, done.stdout) == (1, "")
    assert "internal error: KeyError: 'heading'" in done.stderr
    assert "KeyError: 'heading'" in home.read_text()
    assert cli(*READ, "--json").code == 0  # JSON never goes through the renderer


def test_an_interrupt_exits_130_quietly(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "read", raising(KeyboardInterrupt()))
    assert cli(*READ) == Run(130, "", "")


# -- expected errors -------------------------------------------------------------------------------

CURRENT = SectionText("CLAUDE.md", "build", "## Build\n", "one\n", 2, "h2", 5, "f5")
VIOLATIONS = [
    Violation("CLAUDE.md", 29, "hidden-text", "column 8: U+202E", "delete it"),
    Violation("memory/decisions.md", None, "history", "rewritten", "restore it"),
    Violation(None, None, "chain", "event 4 edited", "restore the store"),
]
EXPECTED: list[tuple[MemkeeperError, int, str]] = [
    (EnvironmentFailure("disk full — free some space"), 1, "error"),
    (Invalid("bad ref — see --help", path="x"), 2, "invalid"),
    (PolicyInvalid(".memkeeper.yaml", 3, 5, "unknown class", "use one of …"), 2, "invalid"),
    (
        Conflict(
            "changed since you read it",
            reason="stale_revision",
            expected={"rev": 1},
            current=CURRENT,
            recover="memkeeper read CLAUDE.md#build --json, then patch --expect-rev 2",
        ),
        3,
        "conflict",
    ),
    (Refused("append-only", reason="class"), 4, "refused"),
    (Busy("held by agent-b", reason="held", holders=[{"agent": "agent-b"}]), 5, "busy"),
    (Failed("check found 3 violation(s)", violations=VIOLATIONS), 6, "failed"),
]
IDS = [type(exc).__name__ for exc, _, _ in EXPECTED]


@pytest.mark.parametrize(("exc", "code", "status"), EXPECTED, ids=IDS)
def test_an_expected_error_maps_to_its_exit_code_and_json_status(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, exc: MemkeeperError, code: int, status: str
) -> None:
    monkeypatch.setitem(cli_main.COMMANDS, "read", raising(exc))
    done = cli(*READ, "--json")
    assert (done.code, done.json["status"], done.json["message"]) == (code, status, exc.message)
    assert done.stderr == ""
    human = cli(*READ)
    assert (human.code, human.stdout) == (code, "")
    assert human.stderr.startswith(f"memkeeper: {exc.message}\n")


def test_a_conflict_carries_the_current_text_in_json_and_a_next_line_for_people(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    conflict = next(exc for exc, _, _ in EXPECTED if isinstance(exc, Conflict))
    monkeypatch.setitem(cli_main.COMMANDS, "read", raising(conflict))
    data = cli(*READ, "--json").json
    assert data["current"] == CURRENT.to_json()
    assert (data["reason"], data["retryable"]) == ("stale_revision", True)
    stderr = cli(*READ).stderr
    assert stderr.endswith(f"\nnext: {conflict.recover}\n")


def test_violations_are_listed_for_people_with_path_line_rule_and_fix(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = Failed("check found 3 violation(s)", violations=VIOLATIONS)
    monkeypatch.setitem(cli_main.COMMANDS, "read", raising(failed))
    assert cli(*READ).stderr.splitlines() == [
        "memkeeper: check found 3 violation(s)",
        "  CLAUDE.md:29: [hidden-text] column 8: U+202E (fix: delete it)",
        "  memory/decisions.md: [history] rewritten (fix: restore it)",
        "  -: [chain] event 4 edited (fix: restore the store)",
    ]
    assert [v["line"] for v in cli(*READ, "--json").json["violations"]] == [29, None, None]


@pytest.mark.peer("git")
def test_a_real_check_failure_lists_the_file_and_line_and_exits_6(cli: Cli, sample: Path) -> None:
    claude = sample / "CLAUDE.md"
    claude.write_text(claude.read_text() + "sneaky \u202e text\n")
    done = cli("check")
    assert done.code == 6
    assert done.stderr.startswith("memkeeper: check found 1 violation(s) in 1 file(s)\n")
    assert "\n  CLAUDE.md:29: [hidden-text] column 8: U+202E" in done.stderr


def test_a_usage_error_is_invalid_and_points_at_help(cli: Cli) -> None:
    done = cli("read", "--json")
    assert done.code == 2
    assert done.json["status"] == "invalid"
    assert "see memkeeper read --help" in done.json["message"]
    assert "see memkeeper --help" in cli("no-such-verb").stderr


def test_the_boundary_prints_an_error_without_a_recover_line_when_there_is_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert fail(Refused("no", reason="owner"), as_json=False) == 4
    assert capsys.readouterr().err == "memkeeper: no\n"


def test_a_usage_error_names_its_command_once_for_people(cli: Cli) -> None:
    done = cli("patch", "CLAUDE.md#build")
    assert done.code == 2
    assert done.stderr == (
        "memkeeper patch: the following arguments are required: --expect-rev "
        "— see memkeeper patch --help\n"
    )
    assert cli().stderr.startswith("memkeeper: the following arguments are required: command")

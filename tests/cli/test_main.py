"""The command line through ``main(argv)``, in this process: global options before or after
the verb, read and patch with their JSON and what people read, init, status, paths inside the
root, the verb groups loaded lazily, read-only commands that create no state, and the hook's
words read without argparse. In separate processes: tests/e2e/test_cli_processes.py and
tests/e2e/test_startup_imports.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, run_main


def test_global_options_work_before_and_after_the_command(cli: Cli, sample: Path) -> None:
    before = cli("--json", "--agent", "a1", "read", "CLAUDE.md#build")
    after = cli("read", "CLAUDE.md#build", "--json", "--root", str(sample))
    assert before.code == after.code == 0
    assert before.json == after.json
    assert before.json["status"] == "ok"


def test_read_json_carries_the_contract_fields(cli: Cli) -> None:
    data = cli("read", "CLAUDE.md#build", "--json").json
    assert set(data) >= {"status", "heading", "content", "rev", "hash", "file_rev", "file_hash"}
    assert data["heading"] == "## Build\n"


def test_sections_lists_keys_titles_levels_and_lines(cli: Cli) -> None:
    data = cli("sections", "memory/architecture.md", "--json").json
    rows = [
        (s["key"], s["title"], s["level"], s["start_line"], s["end_line"]) for s in data["sections"]
    ]
    assert rows == [
        ("_preamble", "", 0, 1, 4),
        ("architecture", "Architecture", 1, 5, 6),
        ("inventory", "Inventory", 1, 7, 11),
        ("inventory/storage", "Storage", 2, 12, 14),
    ]


def test_patch_then_events_then_verify(cli: Cli) -> None:
    patched = cli(
        "--agent",
        "agent-b",
        "patch",
        "CLAUDE.md#testing",
        "--expect-rev",
        "1",
        "--body-file",
        "-",
        "--json",
        stdin="- run `make test`\n\n",
    )
    assert patched.code == 0, patched.stdout
    assert patched.json["rev"] == 2
    lines = cli("events", "--json").stdout.splitlines()
    event = json.loads(lines[-1])
    assert (event["type"], event["actor"], event["section"]) == (
        "section.patched",
        "agent-b",
        "inventory-service/testing",
    )
    assert set(event) >= {"id", "ts", "actor", "type", "path", "section", "data", "prev", "hash"}
    assert cli("verify").code == 0


def test_a_stale_patch_exits_3_with_the_current_text_and_a_recovery(cli: Cli) -> None:
    cli("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-", stdin="one\n")
    lost = cli(
        "patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-", "--json", stdin="two\n"
    )
    assert lost.code == 3
    payload = lost.json
    assert payload["status"] == "conflict"
    assert payload["reason"] == "stale_revision"
    assert payload["expected"] == {"rev": 1}
    assert payload["current"]["rev"] == 2
    assert payload["current"]["content"] == "one\n"
    assert set(payload["current"]) >= {"rev", "hash", "file_hash", "content"}
    assert payload["retryable"] is True
    assert "memkeeper patch" in payload["recover"]
    assert "--expect-rev 2" in payload["recover"]


def test_people_get_readable_output(cli: Cli) -> None:
    assert "rev 1" in cli("read", "CLAUDE.md#build").stdout
    assert "inventory-service/build" in cli("sections", "CLAUDE.md").stdout
    lost = cli("patch", "CLAUDE.md#build", "--expect-rev", "9", "--body-file", "-", stdin="x\n")
    assert lost.code == 3
    assert "changed since you read it" in lost.stderr
    assert "next: memkeeper patch" in lost.stderr


def test_init_is_idempotent_and_writes_the_home(tmp_path: Path, cli: Cli, sample: Path) -> None:
    first = cli("init", "--json")
    assert first.code == 0
    assert first.json["policy_created"] is False
    assert (sample / ".memkeeper" / ".gitignore").read_text() == "*\n"
    classes = {f["path"]: f["class"] for f in first.json["files"]}
    assert classes["memory/decisions.md"] == "append-only"
    assert classes["memory/scratch/agent-a.md"] == "private"
    assert cli("init", "--json").json["files"] == first.json["files"]


def test_init_with_a_preset_copies_it_with_its_comments(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# Project\n\n## Build\n\nmake\n")
    done = run_main(root, "init", "--preset", "default", "--json")
    assert done.code == 0, done.stdout
    policy = (root / ".memkeeper.yaml").read_text()
    assert policy.lstrip().startswith("#")
    assert json.loads(done.stdout)["files"] == [
        {"path": "CLAUDE.md", "class": "section-owned", "sections": 2}
    ]


def test_status_names_the_root_and_managed_files(cli: Cli, sample: Path) -> None:
    data = cli("status", "--json").json
    assert data["root"] == str(sample.resolve())
    assert any(f["path"] == "CLAUDE.md" for f in data["files"])


def test_paths_are_relative_to_a_subdirectory_inside_the_root(cli: Cli, sample: Path) -> None:
    inside = cli("read", "decisions.md", "--json", cwd=sample / "memory")
    assert inside.code == 0
    assert inside.json["path"] == "memory/decisions.md"


def test_lazily_imported_verb_groups_match_the_commands_their_modules_declare() -> None:
    import importlib

    from memkeeper.cli.main import COMMANDS
    from memkeeper.cli.parser import BASE_VERBS, VERB_GROUPS, build_parser

    assert sorted(BASE_VERBS) == sorted(COMMANDS)
    declared: list[str] = list(COMMANDS)
    for module_name, verbs in VERB_GROUPS.items():
        module = importlib.import_module(module_name)
        assert set(module.COMMANDS) <= set(verbs)
        declared += verbs
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(subparsers.choices) == sorted(declared)  # type: ignore[arg-type]


READ_ONLY = [
    ("status",),
    ("claims",),
    ("events",),
    ("metrics",),
    ("sections", "CLAUDE.md"),
    ("read", "CLAUDE.md#build"),
    ("read", "memory/scratch/agent-a.md"),
]


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda argv: "-".join(argv))
def test_read_only_commands_create_no_state_where_there_is_none(
    cli: Cli, sample: Path, argv: tuple[str, ...]
) -> None:
    for as_json in ((), ("--json",)):
        done = cli(*argv, *as_json)
        assert done.code == 0, done.stdout + done.stderr
    assert not (sample / ".memkeeper").exists()


def test_status_of_another_root_creates_no_state_there_or_here(
    sample: Path, tmp_path: Path
) -> None:
    here = tmp_path / "elsewhere"
    here.mkdir()
    done = run_main(here, "status", "--root", str(sample), "--json")
    assert done.code == 0, done.stdout
    assert done.json["root"] == str(sample)
    assert not (sample / ".memkeeper").exists()
    assert not (here / ".memkeeper").exists()


def test_read_only_commands_without_a_store_answer_as_an_empty_one_would(cli: Cli) -> None:
    claims = cli("claims", "--json").json
    assert claims.pop("now").endswith("Z")
    assert claims == {"status": "ok", "claims": [], "waiters": []}
    metrics = cli("metrics", "--json").json
    assert metrics.pop("window_s") == 3600
    assert metrics.pop("status") == "ok"
    assert set(metrics.values()) == {0}
    assert cli("events", "--json").stdout == ""
    status = cli("status", "--json").json
    assert (status["claims"], status["reconciliations"]) == ([], [])
    sections = {f["path"]: f.get("sections") for f in status["files"]}
    assert sections["CLAUDE.md"] == 5
    read = cli("read", "CLAUDE.md#build", "--json").json
    assert (read["rev"], read["file_rev"]) == (1, 1)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["hook", "codex"], ("codex", None, None, None)),
        (
            ["--root", "/r", "hook", "gemini", "--agent=a", "--event", "BeforeTool", "--json"],
            ("gemini", "/r", "a", "BeforeTool"),
        ),
        (["hook", "nobody"], None),  # argparse names the choices
        (["hook"], None),
        (["hook", "codex", "extra"], None),
        (["--event", "X", "hook", "codex"], None),  # not a top-level option
        (["hook", "codex", "--help"], None),
        (["hook", "codex", "--root"], None),  # missing its value: argparse says so
        (["read", "CLAUDE.md"], None),
    ],
)
def test_hook_words_reads_what_argparse_would_and_leaves_the_rest_to_it(
    words: list[str], expected: tuple[str, str | None, str | None, str | None] | None
) -> None:
    from memkeeper.cli.main import hook_words
    from memkeeper.cli.parser import build_parser

    assert hook_words(words) == expected
    if expected is not None:
        args = build_parser().parse_args(words)
        assert (args.kind, args.root, args.agent, args.event) == expected

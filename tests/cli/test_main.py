"""End to end through the installed ``memkeeper`` console script, in subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER, Cli, run_main

pytestmark = pytest.mark.e2e


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
    done = subprocess.run(
        [MEMKEEPER, "init", "--preset", "default", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
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


_WORKER = textwrap.dedent(
    """
    import json, subprocess, sys
    exe, worker = sys.argv[1], sys.argv[2]
    def run(*args, stdin=None):
        return subprocess.run([exe, *args, "--json"], input=stdin, capture_output=True,
                              text=True)
    retries = 0
    for n in range(6):
        while True:
            sec = json.loads(run("read", "CLAUDE.md#testing").stdout)
            body = sec["content"] + f"- update {worker}.{n}\\n"
            done = run("patch", "CLAUDE.md#testing", "--expect-rev", str(sec["rev"]),
                       "--body-file", "-", *sys.argv[3:], stdin=body)
            if done.returncode == 0:
                break
            assert done.returncode == 3, done.stdout
            retries += 1
    print(retries)
    """
)


@pytest.mark.parametrize("merge", [False, True], ids=["retrying", "merging"])
def test_six_processes_patching_one_section_lose_no_update(sample: Path, merge: bool) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, MEMKEEPER, str(w), *(["--merge"] if merge else [])],
            cwd=sample,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(6)
    ]
    retries = sum(int(worker.communicate(timeout=300)[0]) for worker in workers)
    assert all(w.returncode == 0 for w in workers)
    if merge:  # every stale patch only adds lines where another added: it merges
        assert retries <= 36 // 10
    done = subprocess.run(
        [MEMKEEPER, "read", "CLAUDE.md#testing", "--json"],
        cwd=sample,
        capture_output=True,
        text=True,
        check=True,
    )
    section = json.loads(done.stdout)
    for w in range(6):
        for n in range(6):
            assert section["content"].count(f"- update {w}.{n}\n") == 1
    assert section["rev"] == 1 + 36
    verify = subprocess.run([MEMKEEPER, "verify"], cwd=sample, capture_output=True, check=False)
    assert verify.returncode == 0


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


HEAVY = ("markdown_it", "ruamel.yaml", "pathspec", "typing", "dataclasses", "pathlib", "threading")


def test_a_read_of_an_indexed_file_imports_no_parser_and_no_heavy_stdlib(sample: Path) -> None:
    """The start-up idiom pays here: what `read` imports is all it needs (docs/architecture.md)."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    probe = (
        "import sys; from memkeeper.cli.main import main; "
        "code = main(['read', 'CLAUDE.md#build', '--json']); "
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_a_second_patch_imports_no_parser_either(sample: Path) -> None:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    body = sample / "body.md"
    for rev in (1, 2):  # the first patch parses the policy once; its verdicts are cached
        current = json.loads(
            subprocess.run(
                [MEMKEEPER, "read", "CLAUDE.md#build", "--json"],
                cwd=sample, capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        body.write_text(current["content"] + f"- step {rev}\n")
        probe = (
            "import sys; from memkeeper.cli.main import main; "
            f"code = main(['patch', 'CLAUDE.md#build', '--expect-rev', '{current['rev']}', "
            f"'--body-file', {str(body)!r}, '--json']); "
            "print(code, sorted(m for m in ('markdown_it', 'ruamel.yaml', 'pathspec') "
            "if m in sys.modules))"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
        )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_read_and_patch_import_no_verb_group(sample: Path) -> None:
    probe = (
        "import sys; from memkeeper.cli.main import main; "
        "from memkeeper.cli.parser import VERB_GROUPS; "
        "main(['read', 'CLAUDE.md#build', '--json']); "
        "print(sorted(m for m in sys.modules if m in VERB_GROUPS or m in "
        "('memkeeper.claims.decisions', 'markdown_it', 'ruamel.yaml', 'pathspec', 'dataclasses')))"
    )
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_python_dash_m_memkeeper_runs_the_cli(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memkeeper", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: memkeeper ")
    assert "Safe shared memory files for AI agents." in done.stdout
    assert all(verb in done.stdout for verb in ("read", "patch", "watch", "hook"))


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


def test_a_hook_call_imports_neither_argparse_nor_typing_nor_a_parser(sample: Path) -> None:
    """Every agent runs `memkeeper hook AGENT` before every tool call (docs/architecture.md)."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    payload = {
        "session_id": "s1",
        "cwd": str(sample),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(sample / "CLAUDE.md"), "content": "x\n"},
    }
    heavy = (
        "argparse",
        "typing",
        "dataclasses",
        "markdown_it",
        "ruamel.yaml",
        "pathspec",
        "threading",
    )
    probe = (
        "import sys, io; from memkeeper.cli.main import main; "
        "code = main(['hook', 'claude-code', '--agent', 'a1']); "
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    for _ in range(2):  # the first call parses the policy once; its verdicts are cached
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=sample,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            check=True,
        )
    lines = done.stdout.strip().splitlines()
    assert '"permissionDecision": "deny"' in lines[0]
    assert lines[-1] == "0 []"


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

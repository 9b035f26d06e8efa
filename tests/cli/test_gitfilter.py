"""``memkeeper filter clean PATH``: git's clean filter, in this process — the stored form of a
live page, and the bytes unchanged whenever anything is off (git must never break)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from memkeeper.cli.gitfilter import clean, run_clean
from memkeeper.cli.main import main
from memkeeper.regions.gitform import PLACEHOLDER
from memkeeper.regions.markers import fill, parse

POLICY = "version: 1\nfiles:\n  - path: memory/status.md\n    class: generated\n{extra}"
PAGE = b"# S\n<!-- memkeeper:generated source=claims -->\n<!-- memkeeper:end -->\n"


def live_page() -> bytes:
    return fill(PAGE, parse(PAGE, "p"), {"claims": "| a1 | write |\n"})


def tree(root: Path, extra: str = "", policy: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".memkeeper.yaml").write_text(POLICY.format(extra=extra) if policy is None else policy)
    return root


def test_a_live_page_is_stored_as_placeholders(tmp_path: Path) -> None:
    out = clean(str(tree(tmp_path)), "memory/status.md", live_page())
    assert PLACEHOLDER.encode() in out
    assert b"a1" not in out


@pytest.mark.parametrize(
    ("policy", "path"),
    [
        pytest.param(POLICY.format(extra="    git: snapshot\n"), "memory/status.md", id="snapshot"),
        pytest.param(POLICY.format(extra=""), "memory/other.md", id="unmanaged"),
        pytest.param(
            "version: 1\nfiles:\n  - path: '*.md'\n    class: section-owned\n",
            "memory/status.md",
            id="section-owned",
        ),
        pytest.param("version: [\n", "memory/status.md", id="invalid-policy"),
    ],
)
def test_anything_else_is_stored_as_it_is(tmp_path: Path, policy: str, path: str) -> None:
    assert clean(str(tree(tmp_path, policy=policy)), path, live_page()) == live_page()


def test_no_policy_and_broken_markers_are_stored_as_they_are(tmp_path: Path) -> None:
    assert clean(str(tmp_path), "memory/status.md", live_page()) == live_page()
    broken = PAGE + b"<!-- memkeeper:end -->\n"
    assert clean(str(tree(tmp_path)), "memory/status.md", broken) == broken


def test_the_policy_nearest_above_the_file_decides(tmp_path: Path) -> None:
    tree(tmp_path / "sub")
    out = clean(str(tmp_path), "sub/memory/status.md", live_page())
    assert PLACEHOLDER.encode() in out
    assert clean(str(tmp_path), "../outside/memory/status.md", live_page()) == live_page()


def test_run_clean_reads_stdin_and_writes_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree(tmp_path))
    out = io.BytesIO()
    assert run_clean("memory/status.md", io.BytesIO(live_page()), out) == 0
    assert PLACEHOLDER.encode() in out.getvalue()


def test_the_command_line_is_read_without_argparse_and_a_wrong_one_is_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tree(tmp_path))

    class Stdin:
        buffer = io.BytesIO(live_page())

    class Stdout:
        buffer = io.BytesIO()

    monkeypatch.setattr("sys.stdin", Stdin)
    monkeypatch.setattr("sys.stdout", Stdout)
    assert main(["filter", "clean", "memory/status.md"]) == 0
    assert PLACEHOLDER.encode() in Stdout.buffer.getvalue()
    monkeypatch.undo()
    assert main(["filter", "smudge", "x"]) == 2
    assert "invalid choice: 'smudge'" in capsys.readouterr().err

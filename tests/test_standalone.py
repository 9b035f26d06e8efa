"""The repository stands alone: its reference, code and tests cite no document outside it and
name no path of the machine they were written on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent
# What the repository is made of (a checkout's own caches and virtual environment aside).
SEARCHED = ("memkeeper", "tests", "docs", "bench", "policies", "sample-repo", "README.md")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".json", ".txt", ".html", ".js", ".css"}
# A design document that is not in the repository, or a path of the machine the project is
# built on (tests' made-up paths such as /home/dev/repo are fine).
FOREIGN = re.compile(r"contract §|CONTRACT\b|\.\./shared/|(?<![\w./-])/(work|root)/")


def searched_files(top: Path) -> list[Path]:
    found: list[Path] = []
    for name in SEARCHED:
        start = top / name
        candidates = [start] if start.is_file() else start.rglob("*")
        found += [
            path
            for path in candidates
            if path.is_file()
            and path.suffix in SUFFIXES
            and "__pycache__" not in path.parts
            and path.resolve() != Path(__file__).resolve()
        ]
    return found


def foreign_citations(files: list[Path], top: Path) -> list[str]:
    hits = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if FOREIGN.search(line):
                hits.append(f"{path.relative_to(top)}:{number}: {line.strip()}")
    return hits


def test_nothing_cites_a_document_outside_the_repository_or_a_machines_path() -> None:
    assert foreign_citations(searched_files(TOP), TOP) == []


@pytest.mark.parametrize(
    "line",
    ["see contract §4 for claims", "as CONTRACT.md says", "(../shared/NOTES.md)", "/work/x/y.md"],
)
def test_the_check_finds_a_planted_citation(tmp_path: Path, line: str) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(f"# Page\n\n{line}\n", encoding="utf-8")
    assert foreign_citations(searched_files(tmp_path), tmp_path) == [f"docs/page.md:3: {line}"]

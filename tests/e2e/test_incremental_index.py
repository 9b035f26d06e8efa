"""Re-parsing only what changed, through the installed CLI: after fenced-body patches, a
save in the middle and appends to a log, what ``memkeeper sections`` answers from the index
is what a whole parse of the file on disk gives — keys, levels, titles, lines and hashes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memkeeper.events import digest
from memkeeper.markdown.sections import split
from tests.conftest import MEMKEEPER


def mk(root: Path, *args: str, stdin: str | None = None) -> dict[str, object]:
    done = subprocess.run(
        [MEMKEEPER, *args, "--json"], cwd=root, input=stdin, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def listed(root: Path, rel: str) -> list[tuple[object, ...]]:
    found = subprocess.run(
        [MEMKEEPER, "sections", rel, "--json"], cwd=root, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stdout + found.stderr
    rows = json.loads(found.stdout)["sections"]
    return [(r["key"], r["level"], r["title"], r["start_line"], r["hash"]) for r in rows]


def whole(root: Path, rel: str) -> list[tuple[object, ...]]:
    doc = split((root / rel).read_bytes())
    return [(s.key, s.level, s.title, s.start_line, digest(doc.text(s))) for s in doc.sections]


def test_patches_saves_and_appends_index_as_a_whole_parse_would(sample: Path) -> None:
    rel = "memory/notes.md"
    notes = "".join(f"## Note {n}\n\nfact {n}\n\n" for n in range(300))
    (sample / rel).write_text("# Notes\n\n" + notes)
    mk(sample, "read", rel)
    fenced = "Text.\n\n```python\n# not a heading\n```\n\n<div>\n# in html\n</div>\n\n"
    for key in ("notes/note-150", "notes/note-299", "notes/note-0"):
        rev = mk(sample, "read", f"{rel}#{key}")["rev"]
        mk(sample, "patch", f"{rel}#{key}", "--expect-rev", str(rev), "--body-file", "-",
           stdin=fenced)  # fmt: skip
    data = (sample / rel).read_text()
    data = data.replace("fact 200\n", "fact 200\n\n## Inserted by hand\n\nhello\n")
    (sample / rel).write_text(data.replace("## Note 100\n", "## Note 100 renamed\n"))
    assert listed(sample, rel) == whole(sample, rel)
    log = "memory/decisions.md"
    for n in range(3):
        mk(sample, "append", log, "--text", f"Decision {n}: keep it small.")
    mk(sample, "append", log, "--text", "```\nfenced\n```\n\nwith a fence")
    assert listed(sample, log) == whole(sample, log)

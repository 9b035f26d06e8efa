"""Issue 26's parsing costs: what one change costs in a small and in a big file, side by side.

- a patch whose body holds a code fence, in a file of 100 and of 10,000 sections (the
  fixture's ``document(count)``: 105-byte ``## Note NNNNN`` sections);
- a human's save of one section's line, then a ``read`` of it (the read indexes the save),
  in the same two files;
- ``append`` of one entry to an append-only log of 100 KB and of 10 MB (~1 KB entries).

All four files live in one repository (sample-repo plus a rule making ``memory/logs/``
append-only), so every command pays the same start-up; each round times the small then the
big, or the big then the small, in turn. Medians of the rounds. ``--quick``: 1,000 sections
and a 1 MB log for the big sizes.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from bench.fixture import document, sample_copy
from bench.scale.files import memkeeper
from bench.scale.growth import Growth

RATIO = 3.0  # the bound on each big/small ratio
FENCED = "Text before the code.\n\n```python\n# not a heading\nprint({n})\n```\n\n"
ENTRY = "## 2026-01-01 — bench\n\n" + "We keep money in integer cents, always. " * 24 + "\n\n"
LOG_RULE = "  - path: memory/logs/**\n    class: append-only\n"


def run(work: Path, quick: bool) -> list[Growth]:
    sections = 1_000 if quick else 10_000
    log_bytes = 1_000_000 if quick else 10_000_000
    rounds = 3 if quick else 5
    root = _repo(work / "repo", sections, log_bytes)
    small_doc, big_doc = "memory/parse-small.md", "memory/parse-big.md"
    small_log, big_log = "memory/logs/small.md", "memory/logs/big.md"
    times: dict[str, list[float]] = {}
    for turn in range(rounds):
        pairs = [(small_doc, 100, small_log), (big_doc, sections, big_log)]
        for doc, count, log in pairs if turn % 2 == 0 else pairs[::-1]:
            times.setdefault(f"patch {doc}", []).append(_patch(root, doc, count // 2, turn))
            times.setdefault(f"save {doc}", []).append(_save_read(root, doc, count // 2 + 1, turn))
            times.setdefault(f"append {log}", []).append(_append(root, log, turn))
    median = {what: statistics.median(took) for what, took in times.items()}
    labels = ("100 sections", f"{sections:,} sections")
    return [
        Growth(
            "`patch` with a fenced body",
            *labels,
            "ms",
            median[f"patch {small_doc}"] * 1000,
            median[f"patch {big_doc}"] * 1000,
            ratio_goal=RATIO,
        ),
        Growth(
            "a save, then `read`",
            *labels,
            "ms",
            median[f"save {small_doc}"] * 1000,
            median[f"save {big_doc}"] * 1000,
            ratio_goal=RATIO,
        ),
        Growth(
            "`append` to a log",
            "100 KB log",
            f"{log_bytes // 1_000_000} MB log",
            "ms",
            median[f"append {small_log}"] * 1000,
            median[f"append {big_log}"] * 1000,
            ratio_goal=RATIO,
        ),
    ]


def _repo(root: Path, sections: int, log_bytes: int) -> Path:
    """sample-repo with the two documents and the two logs, under memkeeper."""
    sample_copy(root)
    policy = root / ".memkeeper.yaml"
    text = policy.read_text()
    at = text.index("  - path: memory/**\n")  # before the catch-all section-owned rule
    policy.write_text(text[:at] + LOG_RULE + text[at:])
    (root / "memory/parse-small.md").write_bytes(document(100))
    (root / "memory/parse-big.md").write_bytes(document(sections))
    (root / "memory/logs").mkdir()
    entry = ENTRY.encode()
    (root / "memory/logs/small.md").write_bytes(entry * (100_000 // len(entry)))
    (root / "memory/logs/big.md").write_bytes(entry * (log_bytes // len(entry)))
    memkeeper(root, "init", "--json")
    return root


def _patch(root: Path, doc: str, number: int, turn: int) -> float:
    """A fenced body patched into section ``number`` (its rev read first, untimed)."""
    ref = f"{doc}#note-{number:05d}"
    rev = json.loads(memkeeper(root, "read", ref, "--json")[1])["rev"]
    body = root.parent / "body.md"
    body.write_text(FENCED.format(n=turn))
    took, _ = memkeeper(root, "patch", ref, "--expect-rev", str(rev), "--body-file", str(body))
    return took


def _save_read(root: Path, doc: str, number: int, turn: int) -> float:
    """One line of section ``number`` changed in place (as an editor saves), then the
    ``read`` that indexes it: the read is timed."""
    path = root / doc
    data = path.read_bytes()
    at = data.index(b"Fact %05d" % number)
    line_end = data.index(b"\n", at)
    path.write_bytes(
        data[:at] + b"Fact %05d, saved in round %d." % (number, turn) + data[line_end:]
    )
    took, out = memkeeper(root, "read", f"{doc}#note-{number:05d}", "--json")
    assert b"saved in round %d" % turn in out
    return took


def _append(root: Path, log: str, turn: int) -> float:
    took, _ = memkeeper(root, "append", log, "--text", f"Round {turn}: one more decision.")
    return took

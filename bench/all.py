"""Every benchmark in one run, and one table: memkeeper against what a user would do instead.

    .venv/bin/python -m bench.all [--quick] [--json] [--dir D]

Runs, one after the other in this process, the core figures (``bench.core``: CLI start-up,
patch rate, file size), lost updates under a 6-process race (``bench.lostupdates``), claims
against Redis and etcd (``bench.claims``; skipped, with the reason, when ``redis-server`` or
``etcd`` is not installed) and the watch daemon's latencies against watchfiles' own
(``bench.daemon``). Each section is its module's own ``run`` with its default options (with
``--quick``: a smoke run of a few seconds each). Prints the machine once, the combined table
(measure, memkeeper, baseline or alternative, ratio, goal, met?) and the details the table
leaves out. The exit code is 0 whether goals are met or not; 1 if a section failed.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench import claims, core, crash, daemon, fleet, lostupdates, machine, servers
from bench.stats import Figure, figure_table
from memkeeper import MemkeeperError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn


def claims_details(result: dict[str, Any]) -> str:
    sides = claims.side_table(result["sides"], result["summaries"])
    return f"{sides}\n\n{crash.table(result['crashes'])}"


class Section(NamedTuple):
    """One benchmark module: how to run it (full or quick) and what it adds to the table."""

    name: str
    parser: Callable[[], argparse.ArgumentParser]
    run: Callable[[argparse.Namespace], dict[str, Any]]
    figures: Callable[[dict[str, Any]], list[Figure]]
    details: Callable[[dict[str, Any]], str] | None
    quick: tuple[str, ...]
    needs: tuple[str, ...] = ()


INSTALL = "apt-get install -y redis-server etcd-server"
SECTIONS = (
    Section("core", core.build_parser, core.measure, core.figures, None,
            ("--runs", "3", "--batches", "2", "--batch-size", "2")),
    Section("lost updates", lostupdates.build_parser, lostupdates.run, lostupdates.figures,
            lostupdates.report_table, ("--updates", "5", "--repeats", "1")),
    Section("claims", claims.build_parser, claims.measure, claims.figures, claims_details,
            ("--pairs", "20", "--rounds", "3"), ("redis-server", "etcd")),
    Section("daemon", daemon.build_parser, daemon.run, daemon.figures, None,
            ("--runs", "1", "--warmup", "1")),
    Section("fleet", fleet.build_parser, fleet.measure, fleet.figures, None,
            ("--rounds", "2", "--batch", "2", "--syncs", "3")),
)  # fmt: skip


class Outcome(NamedTuple):
    """A section's command and result, or why it has none (``skipped``, ``failed``)."""

    section: Section
    command: str
    result: dict[str, Any] | None
    note: str = ""


def run_section(section: Section, quick: bool, directory: str | None) -> Outcome:
    argv = [*(section.quick if quick else ()), *(("--dir", directory) if directory else ())]
    args = section.parser().parse_args(argv)
    if absent := servers.missing(section.needs):
        why = f"skipped: not installed: {', '.join(absent)} — {INSTALL}"
        return Outcome(section, "", None, why)
    _progress(f"— {section.name} —")
    try:
        result = section.run(args)
    except (RuntimeError, OSError, MemkeeperError) as exc:  # say what failed, run the rest
        return Outcome(section, "", None, f"failed: {exc}")
    return Outcome(section, result["command"], result)


def tree() -> str:
    """The commit memkeeper was measured at, and whether its sources had uncommitted changes."""
    top = str(Path(__file__).resolve().parent.parent)
    git = ["git", "-C", top]
    head = subprocess.run(
        [*git, "log", "-1", "--format=%h %cI"], capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    status = [*git, "status", "--porcelain", "--", "memkeeper"]
    dirty = subprocess.run(status, capture_output=True, text=True, check=False).stdout.strip()
    return head.stdout.strip() + (" + uncommitted changes in memkeeper/" if dirty else "")


def measure(quick: bool, directory: str | None) -> dict[str, Any]:
    facts = {**machine.describe(directory or tempfile.gettempdir()), "tree": tree()}
    if not servers.missing():
        facts.update(servers.versions())
    start = time.monotonic()
    outcomes = [run_section(section, quick, directory) for section in SECTIONS]
    facts["took"] = f"{time.monotonic() - start:.0f} s"
    command = f".venv/bin/python -m bench.all{' --quick' if quick else ''}"
    return {"machine": facts, "command": command, "outcomes": outcomes}


def report(result: dict[str, Any]) -> str:
    outcomes: list[Outcome] = result["outcomes"]
    parts = [machine.markdown(result["machine"]), f"`{result['command']}`, which ran:"]
    parts.append("\n".join(f"- {o.section.name}: `{o.command}`" if o.result is not None
                           else f"- {o.section.name}: {o.note}" for o in outcomes))  # fmt: skip
    figures = [f for o in outcomes if o.result is not None for f in o.section.figures(o.result)]
    parts.append(figure_table(figures))
    for o in outcomes:
        if o.result is not None and o.section.details is not None:
            parts.append(f"Details, {o.section.name}:\n\n{o.section.details(o.result)}")
    return "\n\n".join(parts) + "\n"


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    sections = {
        o.section.name: {
            "command": o.command,
            "note": o.note,
            "figures": [f.to_json() for f in o.section.figures(o.result)] if o.result else [],
        }
        for o in result["outcomes"]
    }
    return {"machine": result["machine"], "command": result["command"], "sections": sections}


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _terminated(signum: int, frame: object) -> NoReturn:
    raise SystemExit(128 + signum)  # unwinds like Ctrl-C: servers stopped, temp dirs removed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench.all", description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--quick", action="store_true", help="a smoke run: a few seconds per section")
    add("--dir", help="parent of every temp dir (default: $TMPDIR or /tmp)")
    add("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        result = measure(args.quick, args.dir)
    except KeyboardInterrupt:
        _progress("interrupted; the servers are stopped and the temp dirs removed")
        return 130
    if args.json:
        print(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print(report(result), end="")
    return 1 if any(o.note.startswith("failed") for o in result["outcomes"]) else 0


if __name__ == "__main__":
    sys.exit(main())

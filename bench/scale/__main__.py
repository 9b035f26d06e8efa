"""Run every area of ``bench.scale`` (or those named with ``--only``) and print one table."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path

from bench import machine
from bench.scale.growth import table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bench.scale.growth import Growth

# The areas in the order the issue lists them; each is bench/scale/<area>.py with a `run`.
AREAS: list[str] = [
    "index",
    "stat",
    "chain",
    "parse",
    "work",
    "wake",
    "events",  # regions, metrics and the daemon against the event log
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    parser.add_argument("--only", nargs="*", choices=AREAS, help="these areas only")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--dir", help="where the fixtures go (a temp dir by default)")
    args = parser.parse_args(argv)
    rows: list[Growth] = []
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="mk-scale-") as tmp:
        for area in args.only or AREAS:
            module = importlib.import_module(f"bench.scale.{area}")
            work = Path(tmp) / area
            work.mkdir()
            rows += module.run(work, args.quick)
        facts = machine.describe(tmp)
    if args.json:
        print(json.dumps({"machine": facts, "rows": [row.to_json() for row in rows]}, indent=2))
    else:
        print(machine.markdown(facts))
        print()
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

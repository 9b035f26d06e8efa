"""What the numbers were measured on: date, CPUs, Python, SQLite, the temp dir's filesystem."""

from __future__ import annotations

import datetime
import os
import platform
import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def describe(directory: str) -> dict[str, Any]:
    """The facts a reader needs to compare a run with another one."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": _cpu_model(),
        "kernel": platform.release(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlite": sqlite3.sqlite_version,
        "filesystem": filesystem_of(directory),
    }


def filesystem_of(directory: str) -> str:
    """``type (device on mount point)`` of the mount holding ``directory``, from /proc/mounts."""
    real = os.path.realpath(directory)
    best: tuple[int, str] = (-1, "unknown")
    try:
        with open("/proc/mounts", encoding="utf-8") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return "unknown"
    for device, point, kind, *_ in mounts:
        point = point.replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best[0]:
            best = (len(point), f"{kind} ({device} on {point})")
    return best[1]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def markdown(facts: dict[str, Any]) -> str:
    """One line per fact, for the top of the printed report."""
    return "\n".join(f"- {name}: {value}" for name, value in facts.items())

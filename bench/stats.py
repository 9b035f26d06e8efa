"""Interleaved timing, medians and the Markdown table the benchmark prints.

On a noisy machine two commands timed one after the other see different noise; timed in
turn (A, B, A, B…) they see the same, so the ratio of their medians is what we report.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal, NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

Better = Literal["lower", "higher"]


class Summary(NamedTuple):
    """Seconds per operation: how many samples, their median and 90th percentile."""

    n: int
    median: float
    p90: float

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median_s": self.median, "p90_s": self.p90}


class Row(NamedTuple):
    """One line of the table: memkeeper against its baseline, and the goal on their ratio."""

    measure: str
    baseline: str
    unit: Literal["ms", "ops/s"]
    ours: Summary
    base: Summary
    goal: float
    better: Better

    @property
    def ratio(self) -> float:
        """``ours / base`` for times; for a rate (ops/s), ``base / ours`` of the times."""
        if self.unit == "ops/s":
            return self.base.median / self.ours.median
        return self.ours.median / self.base.median

    @property
    def met(self) -> bool:
        return self.ratio <= self.goal if self.better == "lower" else self.ratio >= self.goal

    def figure(self) -> Figure:
        """This row as a line of the combined table (``bench.all``)."""
        goal = f"{'≤' if self.better == 'lower' else '≥'} {self.goal:g}x"
        alternative = f"{self.baseline}: {_cell(self, self.base)}"
        return Figure(
            self.measure, _cell(self, self.ours), alternative, f"{self.ratio:.2f}x", goal, self.met
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "baseline_is": self.baseline,
            "unit": self.unit,
            "memkeeper": self.ours.to_json(),
            "baseline": self.base.to_json(),
            "ratio": self.ratio,
            "goal": f"{'<=' if self.better == 'lower' else '>='} {self.goal}",
            "met": self.met,
        }


def summarize(samples: Sequence[float]) -> Summary:
    """Median and nearest-rank 90th percentile of ``samples`` (seconds)."""
    ordered = sorted(samples)
    p90 = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]
    return Summary(len(ordered), statistics.median(ordered), p90)


def interleave(
    steps: Sequence[Callable[[], Sequence[float]]], rounds: int, warmup: int = 3
) -> list[list[float]]:
    """Run every step in turn, ``rounds`` times; each returns the seconds of what it timed.

    The first ``warmup`` rounds are run and dropped (cold caches, first-call imports).
    """
    samples: list[list[float]] = [[] for _ in steps]
    for index in range(warmup + rounds):
        for step, kept in zip(steps, samples, strict=True):
            took = step()
            if index >= warmup:
                kept.extend(took)
    return samples


def _cell(row: Row, summary: Summary) -> str:
    if row.unit == "ops/s":
        return (
            f"{1 / summary.median:,.0f}/s ({summary.median * 1e3:.2f} ms, p90 "
            f"{summary.p90 * 1e3:.2f})"
        )
    return f"{summary.median * 1e3:.1f} ms (p90 {summary.p90 * 1e3:.1f})"


def table(rows: Sequence[Row]) -> str:
    """The Markdown table: measure, memkeeper, baseline, ratio, goal, met?"""
    header = "| measure | memkeeper median (p90) | baseline median (p90) | ratio | goal | met? |"
    return _markdown(header, [row.figure() for row in rows])


class Figure(NamedTuple):
    """One line of the combined table, its cells already written; ``met`` None: no goal."""

    measure: str
    memkeeper: str
    alternative: str
    ratio: str
    goal: str
    met: bool | None

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


def figure_table(figures: Sequence[Figure]) -> str:
    """The combined Markdown table: measure, memkeeper, baseline/alternative, ratio, goal, met?"""
    header = "| measure | memkeeper | baseline / alternative | ratio | goal | met? |"
    return _markdown(header, figures)


def _markdown(header: str, figures: Sequence[Figure]) -> str:
    lines = [header, "| --- | --- | --- | --- | --- | --- |"]
    for f in figures:
        met = "—" if f.met is None else ("yes" if f.met else "**no**")
        lines.append(
            f"| {f.measure} | {f.memkeeper} | {f.alternative} | {f.ratio} | {f.goal} | {met} |"
        )
    return "\n".join(lines)

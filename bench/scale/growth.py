"""One line of the scale table: a cost at a small and at a big size, and the goals on it."""

from __future__ import annotations

from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Growth(NamedTuple):
    """``measure`` at ``small`` and at ``big`` (labels such as ``1,000 files``), in ``unit``.

    ``ratio_goal`` bounds ``big_value / small_value``; ``limit`` bounds ``big_value`` itself;
    either may be absent. A lower figure is better.
    """

    measure: str
    small: str
    big: str
    unit: str
    small_value: float
    big_value: float
    ratio_goal: float | None = None
    limit: float | None = None

    @property
    def ratio(self) -> float:
        return self.big_value / self.small_value if self.small_value else float("inf")

    @property
    def met(self) -> bool:
        ratio_ok = self.ratio_goal is None or self.ratio <= self.ratio_goal
        return ratio_ok and (self.limit is None or self.big_value <= self.limit)

    def goal(self) -> str:
        goals = []
        if self.ratio_goal is not None:
            goals.append(f"≤ {self.ratio_goal:g}x")
        if self.limit is not None:
            goals.append(f"≤ {_number(self.limit)} {self.unit}")
        return ", ".join(goals) or "—"

    def cells(self) -> list[str]:
        return [
            self.measure,
            f"{_number(self.small_value)} {self.unit} ({self.small})",
            f"{_number(self.big_value)} {self.unit} ({self.big})",
            f"{self.ratio:.2f}x",
            self.goal(),
            "yes" if self.met else "**no**",
        ]

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "ratio": self.ratio, "met": self.met}


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def table(rows: list[Growth]) -> str:
    """The rows as a Markdown table."""
    head = ["what", "small", "big", "growth", "goal", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)

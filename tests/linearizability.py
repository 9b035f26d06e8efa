"""A linearizability checker for histories of registers with compare-and-swap (test tooling).

The model is memkeeper's section: a register per key holding ``State(rev, value)``.

- ``read`` returns the state.
- ``cas(expect_rev, value)`` swaps iff the register is at ``expect_rev``: the rev goes up by one
  (it stays put when the value is unchanged: a patch that changes no byte is no change) and
  the caller gets the new rev. Otherwise it fails and the caller gets the current state — a
  failed CAS is also a read.
- An operation that never returned (its process died, it timed out) may have taken effect at
  any moment after its invocation, or never.

``check`` searches for a linearization in the manner of Wing & Gong, with Lowe's memoisation
of configurations (the set of operations placed so far and the register's state). By
P-compositionality each key is checked on its own. Times are wall-clock nanoseconds
(``time.time_ns``: comparable across processes on one machine, unlike ``time.monotonic``);
an interval only needs to enclose the real call, so record invocation before the call and
return after it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

NEVER = 2**63  # the return time of an operation that never returned


@dataclass(frozen=True, slots=True)
class State:
    rev: int
    value: str


@dataclass(frozen=True, slots=True)
class Op:
    """One call as its client saw it. Build them with ``read``, ``cas_ok``, ``cas_failed``
    and ``cas_pending``."""

    process: int
    key: str
    kind: Literal["read", "cas"]
    invoked: int
    returned: int | None  # None: never returned
    seen: State | None = None  # read, failed cas: the state observed
    expect_rev: int = 0  # cas
    value: str = ""  # cas: the value written
    ok: bool = False  # cas: it swapped
    new_rev: int = 0  # successful cas: the rev it returned

    @property
    def ends(self) -> int:
        return NEVER if self.returned is None else self.returned

    def __str__(self) -> str:
        span = f"[{self.invoked}, {'…' if self.returned is None else self.returned}]"
        if self.kind == "read":
            return f"p{self.process} read {self.key} -> {self.seen} {span}"
        outcome = f"ok, rev {self.new_rev}" if self.ok else f"failed, saw {self.seen}"
        if self.returned is None:
            outcome = "pending"
        call = f"cas {self.key} @{self.expect_rev} := {self.value!r}"
        return f"p{self.process} {call} -> {outcome} {span}"


def read(process: int, key: str, invoked: int, returned: int, rev: int, value: str) -> Op:
    return Op(process, key, "read", invoked, returned, seen=State(rev, value))


def cas_ok(
    process: int, key: str, invoked: int, returned: int, expect_rev: int, value: str, new_rev: int
) -> Op:
    return Op(process, key, "cas", invoked, returned, None, expect_rev, value, True, new_rev)


def cas_failed(
    process: int, key: str, invoked: int, returned: int, expect_rev: int, value: str, seen: State
) -> Op:
    return Op(process, key, "cas", invoked, returned, seen, expect_rev, value)


def cas_pending(process: int, key: str, invoked: int, expect_rev: int, value: str) -> Op:
    return Op(process, key, "cas", invoked, None, None, expect_rev, value)


def step(state: State, op: Op) -> State | None:
    """The register's state after ``op``, or ``None`` if ``op`` cannot happen in ``state``."""
    if op.kind == "read":
        return state if op.seen == state else None
    matches = state.rev == op.expect_rev
    swapped = State(state.rev if op.value == state.value else state.rev + 1, op.value)
    if op.returned is None:
        return swapped if matches else state
    if op.ok:
        return swapped if matches and swapped.rev == op.new_rev else None
    return state if not matches and op.seen == state else None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome; on failure, the key and where the longest linearization got stuck."""

    ok: bool
    configurations: int  # configurations explored, over all keys
    key: str | None = None
    placed: tuple[Op, ...] = ()  # the longest linearizable prefix found, in order
    state: State | None = None  # the register after it
    stuck: tuple[Op, ...] = ()  # the operations that could come next, none of which fits
    exhausted: bool = False  # gave up at the configuration budget (not a proof either way)

    def explain(self) -> str:
        if self.ok:
            return f"linearizable ({self.configurations} configurations)"
        why = "search budget exhausted" if self.exhausted else "not linearizable"
        lines = [f"{why}: key {self.key!r}, {len(self.placed)} ops placed, state {self.state}"]
        lines += ["  placed last: " + str(op) for op in self.placed[-3:]]
        lines += ["  cannot place: " + str(op) for op in self.stuck]
        return "\n".join(lines)


def check(history: Iterable[Op], initial: Mapping[str, State], budget: int = 2_000_000) -> Verdict:
    """Whether ``history`` is linearizable, each key starting from ``initial[key]``."""
    by_key: dict[str, list[Op]] = defaultdict(list)
    for op in history:
        if op.kind == "cas" or op.returned is not None:  # a read that never returned: nothing
            by_key[op.key].append(op)
    explored = 0
    for key in sorted(by_key):
        verdict = _Search(by_key[key], initial[key], budget - explored).run()
        explored += verdict.configurations
        if not verdict.ok:
            return Verdict(False, explored, key, *_tail(verdict))
    return Verdict(True, explored)


def _tail(v: Verdict) -> tuple[tuple[Op, ...], State | None, tuple[Op, ...], bool]:
    return v.placed, v.state, v.stuck, v.exhausted


class _Search:
    """Depth-first search over configurations ``(placed mask, state)``, each visited once."""

    def __init__(self, ops: list[Op], initial: State, budget: int) -> None:
        self.ops = sorted(ops, key=lambda op: (op.invoked, op.ends))
        self.initial, self.budget = initial, budget
        self.must = sum(1 << i for i, op in enumerate(self.ops) if op.returned is not None)
        self.deepest: tuple[int, int, State] = (-1, 0, initial)  # placed count, mask, state
        self.parent: dict[tuple[int, State], tuple[int, State, int]] = {}

    def run(self) -> Verdict:
        seen: set[tuple[int, State]] = set()
        stack = [(0, self.initial)]
        while stack:
            mask, state = stack.pop()
            if mask & self.must == self.must:
                return Verdict(True, len(seen))
            if (mask, state) in seen:
                continue
            if len(seen) >= self.budget:
                return self._failure(len(seen), exhausted=True)
            seen.add((mask, state))
            self._note_depth(mask, state)
            stack.extend(self._successors(mask, state))
        return self._failure(len(seen), exhausted=False)

    def _successors(self, mask: int, state: State) -> list[tuple[int, State]]:
        out = []
        for i in reversed(self._candidates(mask)):  # earliest invoked is tried first
            nxt = step(state, self.ops[i])
            if nxt is not None:
                self.parent.setdefault((mask | 1 << i, nxt), (mask, state, i))
                out.append((mask | 1 << i, nxt))
        return out

    def _candidates(self, mask: int) -> list[int]:
        """Unplaced operations that no unplaced operation precedes in real time."""
        found: list[int] = []
        horizon = NEVER
        first = (~mask & (mask + 1)).bit_length() - 1
        for i in range(first, len(self.ops)):
            if mask >> i & 1:
                continue
            op = self.ops[i]
            if op.invoked > horizon:
                break
            found.append(i)
            horizon = min(horizon, op.ends)
        return [i for i in found if self.ops[i].invoked <= horizon]

    def _note_depth(self, mask: int, state: State) -> None:
        placed = mask.bit_count()
        if placed > self.deepest[0]:
            self.deepest = (placed, mask, state)

    def _failure(self, explored: int, exhausted: bool) -> Verdict:
        _, mask, state = self.deepest
        path: list[Op] = []
        at = (mask, state)
        while at in self.parent:
            before_mask, before_state, i = self.parent[at]
            path.append(self.ops[i])
            at = (before_mask, before_state)
        stuck = tuple(self.ops[i] for i in self._candidates(mask))
        return Verdict(False, explored, None, tuple(reversed(path)), state, stuck, exhausted)

"""Crash consistency (issue 6, item 1): a CLI write killed by SIGKILL at each named crash point
leaves every managed file byte-identical to its old or its new version — exactly the one the
point implies — loses no operation that returned success, and the next operation reconciles
so that ``verify`` passes (event chain intact, index matching the files).

Each case runs one prepared repository through ``RUNS`` rounds of: a successful operation
(in-process), the same kind of operation through the CLI with ``MEMKEEPER_CRASH_AT`` set, the
checks, and the recovery (the next ``read``; every few rounds through the CLI). The heavier
variant runs ``SLOW_RUNS`` rounds: ``.venv/bin/python -m pytest -m slow tests/test_crash.py``.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.markdown import appendonly
from memkeeper.regions import markers as regions
from tests.conftest import SAMPLE_REPO, run_cli, tree_bytes

# Each point is a fixed place in the code: the default run proves each one again every round
# on a repository that has grown, and the slow run repeats them at length. Every case recovers
# twice through the CLI (rounds 4 and 8), as it did at 20 rounds (10 and 20).
RUNS = 8
SLOW_RUNS = 100
CLI_RECOVERY_EVERY = 4  # the other rounds recover through the API (the same code, no start-up)
TEMP = re.compile(r"(^|/)\.[^/]+\.memkeeper-\d+\.tmp$")

WRITES = ("write.after_temp_write", "write.after_commit", "write.after_rename")
CASES = [
    *[("patch", p) for p in ("patch.before_write", *WRITES, "patch.after_write")],
    *[("patch", p) for p in ("patch.before_commit", "patch.after_commit")],
    *[("append", p) for p in (*WRITES, "append.before_commit", "append.after_commit")],
    *[("regen", p) for p in (*WRITES, "regen.before_commit", "regen.after_commit")],
    ("claim", "claim.before_commit"),
    ("claim", "claim.after_commit"),
]
# the store is the files' write-ahead log: the temp is written before the commit, renamed after
TEMP_LEFT_AT = {
    "write.after_temp_write",
    "write.after_commit",
    "patch.after_write",
    *(f"{op}.before_commit" for op in ("patch", "append", "regen")),
}  # the next look at the file sweeps it
OLD_BYTES_AT = {"patch.before_write", *TEMP_LEFT_AT}
COMMITTED_AT = re.compile(r"\.after_commit$|^write\.after_rename$")
REDONE_AT = {"write.after_commit"}  # committed, not renamed: the next look redoes the replace

Accepts = Callable[[bytes], bool]


@dataclass(frozen=True)
class Call:
    """One CLI invocation: its arguments and standard input."""

    args: tuple[str, ...]
    stdin: str | None = None


class Operation:
    """A kind of write: done once successfully, once through a crashing CLI, per round."""

    path: str | None = None  # the file it writes; None: it writes none
    event: str = ""  # the event its commit records

    def succeed(self, memory: Memory, run: int) -> None:
        raise NotImplementedError

    def call(self, memory: Memory, run: int) -> Call:
        raise NotImplementedError

    def new_version(self, memory: Memory, old: bytes, run: int) -> Accepts:
        """Whether bytes are the version the crashing call would write (before it runs)."""
        raise NotImplementedError

    def kept(self, memory: Memory, run: int, committed: bool) -> None:
        """Assert what the operation keeps besides files and events (claims: the leases)."""


class Patch(Operation):
    path, event, ref = "CLAUDE.md", "section.patched", "CLAUDE.md#build"

    def succeed(self, memory: Memory, run: int) -> None:
        memory.patch(self.ref, f"\n- ok {run}\n\n", expect_rev=memory.read(self.ref).rev)

    def call(self, memory: Memory, run: int) -> Call:
        rev = str(memory.read(self.ref).rev)
        args = ("patch", self.ref, "--expect-rev", rev, "--body-file", "-", "--json")
        return Call(args, f"\n- crashed {run}\n\n")

    def new_version(self, memory: Memory, old: bytes, run: int) -> Accepts:
        section = memory.read(self.ref)
        before = (section.heading + section.content).encode()
        assert old.count(before) == 1
        new = old.replace(before, f"{section.heading}\n- crashed {run}\n\n".encode())
        return lambda data: data == new


class Append(Operation):
    path, event = "memory/risks.md", "entry.appended"

    def succeed(self, memory: Memory, run: int) -> None:
        memory.append(self.path, f"Risk {run}: it went fine.")

    def call(self, memory: Memory, run: int) -> Call:
        return Call(("append", self.path, "--text", f"Risk {run}: it crashed.", "--json"))

    def new_version(self, memory: Memory, old: bytes, run: int) -> Accepts:
        entry = appendonly.make_entry(None, f"Risk {run}: it crashed.", "", 0.0)
        new = appendonly.append_entry(old, entry)
        return lambda data: data == new


class Regen(Operation):
    path, event = "memory/status.md", "region.regenerated"

    def succeed(self, memory: Memory, run: int) -> None:
        memory.regen(self.path)
        memory.append("memory/decisions.md", f"Decision {run}.")  # news for the next regen

    def call(self, memory: Memory, run: int) -> Call:
        return Call(("regen", self.path, "--json"))

    def new_version(self, memory: Memory, old: bytes, run: int) -> Accepts:
        """Rendered text depends on the clock: any re-rendering of every region will do."""
        return lambda data: data != old and rerendered(old, data, self.path)


@dataclass
class Claim(Operation):
    event: str = "claim.granted"
    granted: list[str] = field(default_factory=list)

    def succeed(self, memory: Memory, run: int) -> None:
        self.granted.append(memory.claim(f"ok/{run}/", ttl=3600).id)

    def call(self, memory: Memory, run: int) -> Call:
        return Call(("claim", f"crashed/{run}/", "--ttl", "3600", "--json"))

    def new_version(self, memory: Memory, old: bytes, run: int) -> Accepts:
        raise AssertionError("a claim writes no file")

    def kept(self, memory: Memory, run: int, committed: bool) -> None:
        live = memory.claims()
        assert set(self.granted) <= {c.id for c in live}  # granted claims are never lost
        crashed = [c for c in live if c.targets == (f"crashed/{run}/",)]
        assert len(crashed) == int(committed)
        tokens = [c.token for c in live]
        assert tokens == sorted(set(tokens))


OPERATIONS: dict[str, Callable[[], Operation]] = {
    "patch": Patch,
    "append": Append,
    "regen": Regen,
    "claim": Claim,
}


def rerendered(old: bytes, new: bytes, path: str) -> bool:
    """``new`` is ``old`` with its regions' texts replaced and each end marker's checksum
    matching its text: nothing outside the regions moved, nothing half-written."""
    before, after = regions.parse(old, path), regions.parse(new, path)
    if [r.id for r in before] != [r.id for r in after] or any(r.edited(new) for r in after):
        return False
    return outside(old, before) == outside(new, after)


def outside(data: bytes, found: tuple[regions.Region, ...]) -> list[bytes]:
    cuts = [0, *(i for r in found for i in (r.text_start, r.end)), len(data)]
    return [data[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True)]


def crash(root: Path, call: Call, point: str) -> None:
    """Run ``call`` with the crash point armed; it must die there, by SIGKILL."""
    done = run_cli(root, *call.args, stdin=call.stdin, env={"MEMKEEPER_CRASH_AT": point})
    assert done.code == -signal.SIGKILL, f"{point} not reached: {done.code} {done.stderr}"


def events(memory: Memory) -> list[tuple[int, str, str]]:
    return [(e.id, e.type, e.hash) for e in memory.events()]


def temps(tree: dict[str, bytes]) -> list[str]:
    return [path for path in tree if TEMP.search(path)]


class CrashLoop:
    """Rounds of success, crash, checks and recovery on one repository at one point."""

    def __init__(self, root: Path, op: Operation, point: str) -> None:
        self.root, self.op, self.point = root, op, point
        self.memory = Memory.open(root, agent="survivor")
        self.committed = COMMITTED_AT.search(point) is not None

    def round(self, run: int) -> None:
        self.op.succeed(self.memory, run)
        self.memory.verify()
        tree, history = tree_bytes(self.root), events(self.memory)
        assert temps(tree) == []  # a killed writer's temp file went with the next write
        accepts = self.expected(tree, run)
        crash(self.root, self.op.call(self.memory, run), self.point)
        self.check_files_after(tree, accepts)
        self.check_events(history)
        self.recover(run)
        if self.committed and accepts is not None:  # what the commit promised is in the file
            assert self.op.path is not None
            assert accepts((self.root / self.op.path).read_bytes()), f"{self.point}: not redone"
        redone = [kind for _, kind, _ in events(self.memory)[len(history) :]]
        assert ("write.redone" in redone) == (self.point in REDONE_AT)
        self.op.kept(self.memory, run, self.committed)
        assert events(self.memory)[: len(history)] == history  # nothing lost or rewritten

    def expected(self, tree: dict[str, bytes], run: int) -> Accepts | None:
        if self.op.path is None:
            return None
        return self.op.new_version(self.memory, tree[self.op.path], run)

    def check_files_after(self, tree: dict[str, bytes], accepts: Accepts | None) -> None:
        after = tree_bytes(self.root)
        left = temps(after)
        assert len(left) == (self.point in TEMP_LEFT_AT)
        assert set(after) - set(left) == set(tree)
        for path, data in tree.items():
            if path != self.op.path:
                assert after[path] == data, f"{path} changed"
        if self.op.path is not None:
            assert accepts is not None
            old = self.point in OLD_BYTES_AT
            now = after[self.op.path]
            assert (now == tree[self.op.path]) if old else accepts(now), f"{self.op.path}"
            assert all(Path(p).parent == Path(self.op.path).parent for p in left)

    def check_events(self, history: list[tuple[int, str, str]]) -> None:
        now = events(self.memory)
        assert now[: len(history)] == history
        added = [kind for _, kind, _ in now[len(history) :]]
        assert added == ([self.op.event] if self.committed else [])

    def recover(self, run: int) -> None:
        """The next operation indexes whatever the crash left; then ``verify`` passes."""
        if run % CLI_RECOVERY_EVERY == 0:
            next_op = ("read", self.op.path) if self.op.path else ("claims",)
            assert run_cli(self.root, *next_op, "--json").code == 0
            verified = run_cli(self.root, "verify", "--json")
            assert verified.code == 0, verified.stdout
        elif self.op.path is not None:
            self.memory.read(self.op.path)
        self.memory.verify()


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample repository, initialised once; each case works on its own copy."""
    root = tmp_path_factory.mktemp("crash") / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_cli(root, "init", "--json").code == 0
    return root


def crash_loop(prepared: Path, tmp_path: Path, name: str, point: str, runs: int) -> None:
    root = tmp_path / "repo"
    shutil.copytree(prepared, root)
    loop = CrashLoop(root, OPERATIONS[name](), point)
    try:
        for run in range(1, runs + 1):
            loop.round(run)
        loop.op.succeed(loop.memory, runs + 1)
        assert temps(tree_bytes(root)) == []
        loop.memory.verify()
    finally:
        loop.memory.close()


@pytest.mark.parametrize(("name", "point"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_a_crash_at_each_point_leaves_old_or_new_bytes_and_loses_nothing(
    prepared: Path, tmp_path: Path, name: str, point: str
) -> None:
    crash_loop(prepared, tmp_path, name, point, RUNS)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "point"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_many_crashes_at_each_point_leave_old_or_new_bytes_and_lose_nothing(
    prepared: Path, tmp_path: Path, name: str, point: str
) -> None:
    crash_loop(prepared, tmp_path, name, point, SLOW_RUNS)


def test_every_crash_point_in_the_code_has_a_case() -> None:
    package = Path(__file__).resolve().parents[2] / "memkeeper"
    named = {
        name
        for source in package.rglob("*.py")
        for name in re.findall(r'crashpoint\("([^"]+)"\)', source.read_text())
    }
    assert named == {point for _, point in CASES}


def test_a_temp_file_left_by_a_killed_writer_is_no_memory_file_and_goes_with_the_next_write(
    prepared: Path, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(prepared, root)
    memory = Memory.open(root, agent="survivor")
    crash(root, Append().call(memory, 1), "write.after_temp_write")
    [temp] = temps(tree_bytes(root))
    assert temp.startswith("memory/")  # where the policy's memory/** glob would take it

    listed = run_cli(root, "init", "--json").json["files"]

    assert temp not in {row["path"] for row in listed}
    Append().succeed(memory, 2)
    assert temps(tree_bytes(root)) == []
    memory.verify()
    memory.close()

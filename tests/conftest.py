"""Shared fixtures: a copy of sample-repo, and two runners for the CLI — ``run_main`` calls
``memkeeper.cli.main.main(argv)`` in this process (fast; the ``cli`` fixture), ``run_cli``
runs the installed console script in a subprocess (for races, crashes and installs)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from memkeeper import Memory
from tests.etcd_cluster import Cluster, binary, secure_wanted
from tests.tiers import RECORD_ENV, spawn_guard, suspended

SAMPLE_REPO = Path(__file__).resolve().parent.parent / "sample-repo"

# The subprocesses the tests start run memkeeper as an installed package does: with its
# bytecode cached (here under the temp dir, so no source tree is touched), even where the
# environment says PYTHONDONTWRITEBYTECODE — else every call compiles every module again.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault(
    "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "memkeeper-tests-pycache")
)
MEMKEEPER = str(Path(sys.executable).parent / "memkeeper")

# Who is acting must not depend on where the suite runs: no key of the user running it signs
# the tests' events (keys live under $XDG_CONFIG_HOME: an empty one here, for every process the
# tests start), and a suite started from inside an agent's session is not that session.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="memkeeper-tests-config-")
for _variable in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "MEMKEEPER_KEY"):
    os.environ.pop(_variable, None)

# Hypothesis profiles, chosen with --hypothesis-profile NAME (or $HYPOTHESIS_PROFILE): ``ci``,
# the default, is what CI and the README's command run; ``dev`` is the fast loop — a tenth of
# the examples where a test does not pin its own number. Tests that pin theirs (the property
# suites that found bugs at that size) keep it in both. Neither has hypothesis's 200 ms
# deadline: on a shared machine an example's wall time measures the neighbours (an argv parse
# took 267 ms once and 132 ms on the replay: a "flaky" failure of nothing); a test that is
# about speed says so itself.
settings.register_profile("ci", print_blob=True, deadline=None)
settings.register_profile("dev", max_examples=10, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@dataclass(frozen=True)
class Run:
    """One finished CLI invocation."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        loaded = json.loads(self.stdout)
        assert isinstance(loaded, dict)
        return loaded


Cli = Callable[..., Run]


def run_cli(
    root: Path,
    *args: str,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run the installed console script with ``--root`` unset; ``cwd`` defaults to ``root``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    full_env.update(env or {})
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [MEMKEEPER, *args],
        cwd=cwd or root,
        input=data,
        capture_output=True,
        env=full_env,
        timeout=120,
        check=False,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


def run_main(
    root: Path,
    *args: str,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """``run_cli`` in this process: ``main(argv)`` with its own cwd, environment and stdio —
    the process's, set and set back, so one run at a time: a second thread's run fails at
    once (drive concurrent callers through ``Memory`` or processes)."""
    from memkeeper.cli.main import main

    if not _IN_PROCESS.acquire(blocking=False):
        raise RuntimeError(
            "run_main: another thread is running the CLI in this process, which sets the "
            "process's working directory, environment and stdio — give each thread a Memory "
            "of its own, or run the CLI as processes (tests/e2e)"
        )
    try:
        return _run_main(root, args, stdin, env, cwd, main)
    finally:
        _IN_PROCESS.release()


_IN_PROCESS = threading.Lock()


def _run_main(
    root: Path,
    args: tuple[str, ...],
    stdin: str | bytes | None,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    main: Callable[[list[str]], int],
) -> Run:
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    out, err = io.StringIO(), io.StringIO()
    try:
        for name in [k for k in os.environ if k.startswith("MEMKEEPER_")]:
            del os.environ[name]
        os.environ.update(env or {})
        os.chdir(cwd or root)
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One single-member etcd per test process, for every test that works under a prefix of
    its own; skipped, saying why, where no etcd binary can be had. A test that kills, stops
    or compacts members' data past others' use starts a cluster of its own. With
    ``MEMKEEPER_TESTS_ETCD=secure``, a cluster with TLS and authentication on (the tests that
    reach it through ``cluster.gateway()`` or ``cluster.access`` run as they would in a
    hardened fleet: the store contract does)."""
    exe, why = binary()
    if exe is None:
        pytest.skip(why)
    with suspended("the session's etcd"):
        work = tmp_path_factory.mktemp("etcd")
        # secure: its user's role may read and write every key under "/" (the tests' prefixes);
        # tests/e2e/test_etcd_secure.py checks a role limited to one prefix
        started = Cluster(work, secure=secure_wanted(), granted=b"/").start()
    yield started
    started.stop()


@pytest.fixture(scope="session")
def sample_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample-repo in a git repository of its own, made once per test process: ``sample``
    copies it (a copy is ~40 times cheaper than another ``git init``, and spawns nothing)."""
    root = tmp_path_factory.mktemp("template") / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def sample(tmp_path: Path, sample_template: Path) -> Path:
    """A fresh copy of sample-repo in its own git repository (memkeeper not yet initialised)."""
    root = tmp_path / "repo"
    shutil.copytree(sample_template, root, symlinks=True)
    return root


@pytest.fixture
def memory(sample: Path) -> Memory:
    """A ``Memory`` on the sample copy, as agent ``agent-a``."""
    return Memory.open(sample, agent="agent-a")


@pytest.fixture
def cli(sample: Path) -> Cli:
    """``cli("read", "CLAUDE.md#build", "--json")`` runs memkeeper in the sample copy, in
    this process (``run_main``)."""

    def run(*args: str, **kwargs: Any) -> Run:
        return run_main(sample, *args, **kwargs)

    return run


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except memkeeper's state, for "nothing changed" checks."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".memkeeper/"):
            out[rel] = path.read_bytes()
    return out


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile memkeeper's bytecode once, as an installed package has it: where
    ``PYTHONDONTWRITEBYTECODE`` is set (this sandbox, many CI images) an editable install
    never writes it, and every CLI subprocess the tests start would compile the modules it
    imports all over again (the end-to-end tests start thousands)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "memkeeper"), quiet=1)


TESTS = Path(__file__).resolve().parent
E2E = TESTS / "e2e"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier, by directory (as pip keeps its tiers): ``tests/e2e/`` is
    ``e2e`` (real processes: the installed CLI, git, etcd, a browser, agents); every other
    directory is ``unit`` (in this process: ``guard_unit_tier`` fails one that spawns).
    Then leave ``slow`` tests out unless ``-m`` mentions them (``-m slow`` runs only them)."""
    for item in items:
        item.add_marker("e2e" if E2E in item.path.parents else "unit")
    items.sort(key=cost_rank)
    if "slow" in str(config.getoption("markexpr") or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def cost_rank(item: pytest.Item) -> int:
    """Where a test goes in the run, dearest first: the end-to-end tier (processes, seconds
    each), then the property tests (hundreds of examples), then the rest (milliseconds); the
    sort is stable, so each keeps its collection order within its rank. pytest-xdist's
    ``worksteal`` (pyproject's addopts) splits the list between the workers and an idle
    worker takes half of what another has queued, from the end: with the cheap tests last,
    the run ends on short ones and no core waits on a lone long test."""
    if E2E in item.path.parents:
        return 0
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        return 1
    return 2


@pytest.fixture(autouse=True)
def guard_unit_tier(request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit-tier test that starts a process fails, naming the program: move what needs a
    real process to ``tests/e2e/``, or — for a real peer the unit under test runs itself, such
    as ``git`` — name it with ``@pytest.mark.peer("git")``. Session fixtures (the sample
    template, etcd) are set up before this guard and may start theirs."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    allowed = {name for mark in request.node.iter_markers("peer") for name in mark.args}
    started: list[str] = []
    with spawn_guard(allowed, started):
        yield
    if started and os.environ.get(RECORD_ENV):
        with open(os.environ[RECORD_ENV], "a", encoding="utf-8") as log:
            log.write(f"{request.node.nodeid}\t{' '.join(sorted(set(started)))}\n")
    elif started:
        pytest.fail(
            f"a unit-tier test started {', '.join(sorted(set(started)))}: move it to tests/e2e/, "
            "run it in this process, or mark the real peer it needs with @pytest.mark.peer(NAME)",
            pytrace=False,
        )

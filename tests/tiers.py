"""The unit tier's guard: every way this process could start another, refused unless the test
names the program as a real peer it needs. What was refused is also recorded, so a test whose
code under test swallows the error still fails."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Iterator
from typing import Any

# Set to a file's path to record spawns there instead of refusing them (to survey a tree).
RECORD_ENV = "MEMKEEPER_TESTS_RECORD_SPAWNS"


def program_of(args: Any) -> str:
    """The program a ``Popen`` argument names: ``["git", "init"]`` and ``"git init"`` are git."""
    if isinstance(args, (str, bytes)):
        text = os.fsdecode(args)
        words = shlex.split(text) if text.strip() else [text]
        first = words[0] if words else text
    else:
        first = os.fsdecode(next(iter(args)))
    return os.path.basename(first)


_suspended: list[str] = []


@contextlib.contextmanager
def suspended(why: str) -> Iterator[None]:
    """Let a session-scoped fixture start its server (etcd) whichever test first asks for it:
    the server outlives the test, which only talks to it."""
    _suspended.append(why)
    try:
        yield
    finally:
        _suspended.pop()


class SpawnRefused(AssertionError):
    """A unit-tier test tried to start a process."""


@contextlib.contextmanager
def spawn_guard(allowed: set[str], started: list[str]) -> Iterator[None]:
    """Within the block, starting a program not in ``allowed`` raises ``SpawnRefused`` and is
    appended to ``started`` (with ``RECORD_ENV`` set: recorded there, and let through)."""
    record = os.environ.get(RECORD_ENV)
    execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    # subprocess itself goes through posix_spawn or _posixsubprocess: guarded above, by program
    saved = {name: getattr(os, name) for name in ("fork", "forkpty", "system")}

    def refuse(program: str) -> None:
        if _suspended:
            return
        started.append(program)
        if record:
            return
        raise SpawnRefused(f"unit-tier test started a process: {program}")

    def guarded_execute(self: subprocess.Popen[Any], args: Any, *rest: Any) -> Any:
        program = program_of(args)
        if program not in allowed:
            refuse(program)
        return execute(self, args, *rest)

    def raw(name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            refuse(f"os.{name}")
            return saved[name](*args, **kwargs)

        return refused

    subprocess.Popen._execute_child = guarded_execute  # type: ignore[attr-defined]
    for name in saved:
        setattr(os, name, raw(name))
    try:
        yield
    finally:
        subprocess.Popen._execute_child = execute  # type: ignore[attr-defined]
        for name, original in saved.items():
            setattr(os, name, original)

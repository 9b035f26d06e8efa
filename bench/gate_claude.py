"""``bench.gate_http``'s figures as the real Claude Code CLI sees them: sessions driven offline
by ``tests.e2e.fakemodel``, with ``--debug-file``, served (``memkeeper watch`` running) and
unserved (no daemon: the command hook answers) in turn.

A session of denied calls: a Read of CLAUDE.md, then ``calls`` whole-file Writes of it (each
denied before it runs, so only PreToolUse hooks fire). A session of allowed calls: a Read of
an unmanaged file, then ``calls`` Edits of it (PreToolUse, then PostToolUse, each call).
Claude Code starts an event's hooks together and logs ``HTTP hook POST to`` as it does; an
event's time is from that line to the later of the two ends it logs — the http hook's
(``HTTP hook response status`` or ``HTTP hook error``) and the command hook's (its output:
``Hook output does not start with {`` when empty, ``Checking first line for async`` when not).
Unserved, the http hooks' ``onFailure`` is taken off (``_fail_open``): Claude Code 2.1.332
would block every call the daemon cannot answer, and the command hook is what is timed there.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from bench.fixture import bench_env, sample_copy
from bench.gate_http import Daemon, prepared, summary
from memkeeper.install.served import LOCAL

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

NOTES = "notes.txt"
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+)Z ")
_START = "Hooks: HTTP hook POST to "
_HTTP_END = ("Hooks: HTTP hook response status", "Hooks: HTTP hook error")
_COMMAND_END = ("Hook output does not start with {", "Hooks: Checking first line for async")


def windows(log: str) -> list[tuple[float, float, float]]:
    """Seconds from each ``HTTP hook POST`` to the later of its two hooks' ends, to the http
    hook's and to the command hook's."""
    lines = [(_time(line), line) for line in log.splitlines() if _STAMP.match(line)]
    out = []
    for index, (start, line) in enumerate(lines):
        if _START not in line:
            continue
        ends = {}
        for when, later in lines[index + 1 :]:
            if _START in later:
                break
            for kind, markers in (("http", _HTTP_END), ("command", _COMMAND_END)):
                if kind not in ends and any(m in later for m in markers):
                    ends[kind] = when
            if len(ends) == 2:
                out.append(
                    (max(ends.values()) - start, ends["http"] - start, ends["command"] - start)
                )
                break
    return out


def _time(line: str) -> float:
    found = _STAMP.match(line)
    assert found is not None
    return datetime.fromisoformat(found.group(1) + "+00:00").timestamp()


def as_claude_sees_it(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from tests.e2e.claudecli import CLAUDE

    if CLAUDE is None:
        return {"rows": [], "notes": ["the Claude Code CLI is not installed: skipped"]}
    env = bench_env(work / "pycache", as_is=False)
    root = sample_copy(work / "claude")
    prepared(root, env)
    found: dict[str, list[float]] = {}
    for round_ in range(args.claude_sessions):
        for served in (True, False):
            daemon = Daemon(root, env) if served else None
            kept = _fail_open(root) if not served else None
            try:
                for kind in ("deny", "allow"):
                    log = work / f"claude-{round_}-{served}-{kind}.log"
                    times = _session(root, work, kind, args.claude_calls, log)
                    side = "served" if served else "no daemon"
                    for event, (took, http, command) in times:
                        found.setdefault(f"Claude Code: {side}: {event}", []).append(took)
                        if served:  # which of the two it waited for
                            found.setdefault(f"Claude Code: {side}: {event}: http hook", []).append(
                                http
                            )
                            found.setdefault(
                                f"Claude Code: {side}: {event}: command hook (guard)", []
                            ).append(command)
            finally:
                if daemon is not None:
                    daemon.stop()
                if kept is not None:
                    (root / LOCAL).write_text(kept)
    rows = [summary(label, samples) for label, samples in sorted(found.items())]
    return {"rows": rows, "notes": [f"Claude Code CLI: {CLAUDE}"]}


def _fail_open(root: Path) -> str:
    """Take ``onFailure`` off the http hooks (the settings as they were: returned), so that
    without a daemon Claude Code 2.1.332 lets the http hook fail and the command hook answers,
    as 2.1.197 does — with it, every call would be blocked and there would be nothing to time."""
    import json

    text = (root / LOCAL).read_text()
    settings = json.loads(text)
    for groups in settings["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                hook.pop("onFailure", None)
    (root / LOCAL).write_text(json.dumps(settings, indent=2) + "\n")
    return text


def _session(
    root: Path, work: Path, kind: str, calls: int, log: Path
) -> list[tuple[str, tuple[float, float, float]]]:
    """One ``claude -p`` session of ``calls`` denied Writes or allowed Edits: each event's
    name and seconds (the prompt's and the Read's first)."""
    from tests.e2e.claudecli import finish, session
    from tests.e2e.fakemodel import FakeModel, Step, Text, Tool

    one = session(root, work)
    target = str(root / ("CLAUDE.md" if kind == "deny" else NOTES))
    (root / NOTES).write_text("n0\n")  # each session's Edits start from it
    steps: list[Step] = [Tool("Read", {"file_path": target})]
    for n in range(calls):
        if kind == "deny":
            steps.append(Tool("Write", {"file_path": target, "content": f"# gone {n}\n"}))
        else:
            steps.append(
                Tool(
                    "Edit",
                    {"file_path": target, "old_string": f"n{n}\n", "new_string": f"n{n + 1}\n"},
                )
            )
    steps.append(Text("Done."))
    with FakeModel(steps) as model:
        finish(one.start(model, "--session-id", one.id, "--debug-file", str(log)))
    found = windows(log.read_text())
    # the prompt, then the Read's PostToolUse (what the session read, for the channel)
    names = ["UserPromptSubmit", "PostToolUse read"] + (
        ["PreToolUse deny"] * calls
        if kind == "deny"
        else ["PreToolUse allow", "PostToolUse"] * calls
    )
    if len(found) != len(names):
        raise RuntimeError(f"{log}: {len(found)} hook events, expected {len(names)}")
    return list(zip(names, found, strict=True))[2:]

"""A writer stopped while it holds the SQLite store's write lock (issue 22 item 8): a real
process, stopped by SIGSTOP between its claim's fence check and its commit. The others give
up after the busy timeout as ``store_busy`` naming it (not a silent 60 s wait, nor one without
end for a writer of the same file, behind the file's lock), nobody is
granted its claim meanwhile, and once resumed past the claim's expiry it lands nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memkeeper import Memory
from memkeeper.errors import EnvironmentFailure
from memkeeper.fs import locks
from memkeeper.store.sqlite import core

STALLED = """
import json, os, signal, sys
from memkeeper import Memory, Refused
from memkeeper.fs import crash

memory = Memory.open(agent="stalled")
mine = memory.claim("CLAUDE.md#build", ttl=1)

def stop(name):
    if name == "patch.before_commit":  # the file and index written, not committed
        print("stopped", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)

crash.crashpoint = stop
try:
    done = memory.patch("CLAUDE.md#build", "late\\n", expect_rev=1, claim=mine.id)
    print(json.dumps({"rev": done.rev}))
except Refused as refused:
    print(json.dumps({"refused": refused.reason, "message": refused.message}))
"""


def test_a_stopped_writer_holding_the_lock_is_named_and_lands_nothing_after_its_claim(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = Memory.open(sample, agent="other")
    other.read("CLAUDE.md#build")  # the store made and the file indexed before the writer
    before = (sample / "CLAUDE.md").read_bytes()
    writer = subprocess.Popen(
        [sys.executable, "-c", STALLED],
        cwd=sample,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "stopped\n"
        monkeypatch.setattr(core, "BUSY_TIMEOUT_S", 1.0)
        waiting = Memory.open(sample, agent="other")
        started = time.monotonic()
        with pytest.raises(EnvironmentFailure) as caught:
            waiting.patch("memory/architecture.md#inventory", "x\n", expect_rev=1)
        assert time.monotonic() - started < 10  # the busy timeout, not SQLite's 60 s
        assert caught.value.fields["reason"] == "store_busy"
        assert caught.value.fields["holder"] == writer.pid
        assert f"process {writer.pid} (" in caught.value.message
        assert f"it is stopped: resume it (`kill -CONT {writer.pid}`)" in caught.value.message
        monkeypatch.setattr(locks, "LOCK_WAIT_S", 1.0)
        with pytest.raises(EnvironmentFailure) as behind:  # a writer of the same file
            waiting.patch("CLAUDE.md#build", "x\n", expect_rev=1)
        assert behind.value.fields["reason"] == "store_busy"
        assert behind.value.fields["holder"] == writer.pid
        assert behind.value.message.startswith(f"CLAUDE.md: process {writer.pid} (")
        time.sleep(1.2)  # the stalled write's claim runs out meanwhile
        with pytest.raises(EnvironmentFailure):  # and nobody is granted it while held
            waiting.claim("CLAUDE.md#build", ttl=5)
        os.kill(writer.pid, signal.SIGCONT)
        out, _ = writer.communicate(timeout=60)
    finally:
        if writer.poll() is None:
            os.kill(writer.pid, signal.SIGCONT)
            writer.kill()
            writer.communicate()
    outcome = json.loads(out)
    assert outcome["refused"] == "claimed"
    assert "expired while this write was under way: nothing was written" in outcome["message"]
    assert (sample / "CLAUDE.md").read_bytes() == before
    assert waiting.read("CLAUDE.md#build").rev == 1
    assert waiting.claim("CLAUDE.md#build", ttl=5).agent == "other"

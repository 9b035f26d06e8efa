"""What the dashboard says of each event's signature: nothing without a signers file; with
one, each event judged once per version of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper import Memory
from memkeeper.dashboard.signatures import Marks
from memkeeper.identity import keys

if TYPE_CHECKING:
    import pytest


def test_events_are_judged_once_per_signers_file(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = keys.valid

    def counted(public: str, message: str, signature: str) -> bool:
        calls.append(1)
        return real(public, message, signature)

    monkeypatch.setattr(keys, "valid", counted)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    memory = Memory(sample, "human")
    try:
        marks = Marks()
        memory.emit("test.unsigned")
        assert "signature_problem" not in marks.shown(memory, memory.events())[0]
        from memkeeper.ops import keys as key_ops

        key_ops.init(memory.workspace, "alice", "box")
        key_ops.trust(memory.workspace, "alice", "human", ("human",))
        memory.emit("test.signed")
        shown = marks.shown(memory, memory.events())
        problems = {e["type"]: e["signature_problem"] for e in shown}
        assert problems["test.unsigned"] == "it is not signed"
        assert problems["test.signed"] is None
        judged = len(calls)
        marks.shown(memory, memory.events())
        assert len(calls) == judged  # the same signers file: judged already
    finally:
        memory.close()

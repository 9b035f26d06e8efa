"""Appending to history through the API, and noticing history that was rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper import Invalid, Memory, Refused
from memkeeper.clock import FakeClock

DECISIONS = "memory/decisions.md"


def test_append_pours_the_text_into_the_entry_template(sample: Path) -> None:
    memory = Memory.open(sample, agent="agent-a", clock=FakeClock(1_800_000_000.0))
    before = (sample / DECISIONS).read_bytes()
    result = memory.append(DECISIONS, "Use etcd for leases.\n")
    after = (sample / DECISIONS).read_bytes()
    entry = "## 2027-01-15 — agent-a\n\nUse etcd for leases.\n".encode()
    assert after == before + b"\n" + entry
    assert (result.start_line, result.end_line) == (9, 11)
    (event,) = memory.events()
    assert (event.type, event.path, event.actor) == ("entry.appended", DECISIONS, "agent-a")
    assert event.data["title"] == "Use etcd for leases."
    assert event.data["start_line"] == 9


def test_append_without_a_template_adds_the_text_as_is(memory: Memory, sample: Path) -> None:
    memory.append("memory/risks.md", "## Disk\n\nThe cache can fill the disk.")
    assert (
        (sample / "memory/risks.md")
        .read_text()
        .endswith("window on month ends.\n\n## Disk\n\nThe cache can fill the disk.\n")
    )


def test_the_index_follows_an_append(memory: Memory) -> None:
    memory.append("memory/risks.md", "## Disk\n\nFull.")
    keys = [s.key for s in memory.sections("memory/risks.md")]
    assert keys[-1] == "risks/disk"
    assert memory.read("memory/risks.md").file_rev == 2
    assert [e.type for e in memory.events()] == ["entry.appended"]


def test_append_creates_a_missing_append_only_file(memory: Memory, sample: Path) -> None:
    (sample / "memory/risks.md").unlink()
    memory.append("memory/risks.md", "First risk.")
    assert (sample / "memory/risks.md").read_text() == "First risk.\n"


def log_policy(sample: Path) -> None:
    """Make everything under memory/log/ append-only (the sample has no such directory)."""
    policy = sample / ".memkeeper.yaml"
    rule = "  - path: memory/log/**\n    class: append-only\n"
    policy.write_text(policy.read_text().replace("files:\n", "files:\n" + rule, 1))


def test_append_creates_the_missing_directories_of_a_new_file(memory: Memory, sample: Path) -> None:
    log_policy(sample)
    done = memory.append("memory/log/2026/11/day.md", "Deployed.")
    assert (sample / "memory/log/2026/11/day.md").read_text() == "Deployed.\n"
    assert (done.start_line, done.end_line, done.file_rev) == (1, 1, 1)
    assert [e.type for e in memory.events()] == ["entry.appended"]


def test_append_under_a_file_in_the_way_is_invalid_and_changes_nothing(
    memory: Memory, sample: Path
) -> None:
    log_policy(sample)
    (sample / "memory/log").write_text("not a directory\n")
    with pytest.raises(Invalid) as caught:
        memory.append("memory/log/day.md", "Deployed.")
    assert caught.value.message == (
        "memory/log/day.md: 'memory/log' on its path is a file, not a directory — "
        "move that file aside, or use another path"
    )
    assert (sample / "memory/log").read_text() == "not a directory\n"
    assert memory.events() == []


def test_append_is_refused_for_other_classes(memory: Memory) -> None:
    for path, reason in [
        ("CLAUDE.md", "class"),
        ("memory/status.md", "class"),
        ("memory/scratch/agent-a.md", "class"),
        ("README.md", "unmanaged"),
    ]:
        with pytest.raises(Refused) as caught:
            memory.append(path, "x")
        assert caught.value.reason == reason, path


def test_an_entry_that_leaves_a_fence_open_is_refused(memory: Memory, sample: Path) -> None:
    before = (sample / "memory/risks.md").read_bytes()
    with pytest.raises(Refused) as caught:
        memory.append("memory/risks.md", "```\nunclosed")
    assert caught.value.reason == "structure"
    assert (sample / "memory/risks.md").read_bytes() == before


def test_empty_or_binary_entries_are_invalid(memory: Memory) -> None:
    with pytest.raises(Invalid, match="empty"):
        memory.append("memory/risks.md", "\n\n")
    with pytest.raises(Invalid, match="NUL"):
        memory.append("memory/risks.md", b"a\x00b")


def test_a_rewrite_of_history_records_a_violation(memory: Memory, sample: Path) -> None:
    assert memory.workspace.store is not None  # a root with a store: the read indexes
    memory.read("memory/risks.md")
    path = sample / "memory/risks.md"
    path.write_text(path.read_text().replace("10-minute", "20-minute"))
    memory.append("memory/risks.md", "Another risk.")
    violation = [e for e in memory.events() if e.type == "policy.violation"]
    assert len(violation) == 1
    assert violation[0].data["rule"] == "append-only"
    assert violation[0].data["line"] == 5
    assert violation[0].actor == "external"


def test_an_extension_by_hand_is_no_violation(memory: Memory, sample: Path) -> None:
    memory.read("memory/risks.md")
    path = sample / "memory/risks.md"
    path.write_bytes(path.read_bytes() + b"\nhand-written entry\n")
    memory.read("memory/risks.md")
    assert "policy.violation" not in [e.type for e in memory.events()]


def test_private_files_are_read_but_never_indexed_nor_recorded(
    memory: Memory, sample: Path
) -> None:
    assert memory.workspace.store is not None  # a root with a store: other reads index
    memory.read("memory/scratch/agent-a.md")
    (sample / "memory/scratch/agent-a.md").write_text("# changed\n")
    assert memory.read("memory/scratch/agent-a.md").content == "# changed\n"
    assert memory.events() == []
    assert memory.workspace.store.file_state("memory/scratch/agent-a.md") is None


def test_another_agents_strict_claim_refuses_an_append(sample: Path) -> None:
    holder = Memory.open(sample, agent="agent-b")
    holder.claim([DECISIONS], ttl=600, strict=True)
    memory = Memory.open(sample, agent="agent-a")
    with pytest.raises(Refused) as caught:
        memory.append(DECISIONS, "Mine.")
    assert caught.value.reason == "claimed"
    assert [h["agent"] for h in caught.value.holders] == ["agent-b"]
    assert holder.append(DECISIONS, "The holder's own entry.").warnings == ()


def test_an_advisory_claim_warns_and_the_append_lands(sample: Path) -> None:
    Memory.open(sample, agent="agent-b").claim(["memory/"], ttl=600)
    done = Memory.open(sample, agent="agent-a").append(DECISIONS, "Mine.")
    assert len(done.warnings) == 1
    assert "agent-b" in done.warnings[0]


def notes_log(count: int) -> str:
    return "# Log\n\n" + "".join(f"## Entry {n}\n\nwe decided {n}\n\n" for n in range(count))


def test_an_append_parses_and_indexes_only_the_logs_tail(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (sample / "memory/risks.md").write_text(notes_log(200))
    memory.append("memory/risks.md", "## Entry 1\n\nagain")  # the log indexed whole, once
    written: list[list[str]] = []
    put = memory.workspace.store.put_sections

    def recording(path: str, rows: object) -> None:
        listed = list(rows)  # type: ignore[call-overload]
        written.append([row.key for row in listed])
        put(path, listed)

    monkeypatch.setattr(memory.workspace.store, "put_sections", recording)
    monkeypatch.setattr("memkeeper.markdown.sections.split", lambda *a: pytest.fail("whole"))
    memory.append("memory/risks.md", "## Entry 3\n\n```\nfenced\n```")
    # the last entry (its body gains the blank line before the new one) and the new one
    assert written == [["log/entry-1-2", "log/entry-3-2"]]
    monkeypatch.undo()
    keys = [s.key for s in memory.sections("memory/risks.md")]
    assert keys[-3:] == ["log/entry-199", "log/entry-1-2", "log/entry-3-2"]


def test_an_entry_that_opens_a_fence_is_refused_from_the_tail(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (sample / "memory/risks.md").write_text(notes_log(50))
    memory.append("memory/risks.md", "## Entry 1\n\nagain")
    monkeypatch.setattr("memkeeper.markdown.sections.split", lambda *a: pytest.fail("whole"))
    with pytest.raises(Refused) as refused:
        memory.append("memory/risks.md", "## Open\n\n```\nnever closed")
    assert refused.value.fields["reason"] == "structure"

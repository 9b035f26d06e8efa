"""The Python API: reads from the index, compare-and-swap patches, external edits, refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from diff_match_patch import diff_match_patch

from memkeeper import Conflict, Failed, Invalid, Memory, Refused
from memkeeper.clock import FakeClock


def test_read_returns_heading_body_and_revisions(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    assert sec.key == "inventory-service/build"
    assert sec.heading == "## Build\n"
    assert sec.content.startswith("\n- Python 3.11")
    assert (sec.rev, sec.file_rev) == (1, 1)
    assert sec.hash.startswith("sha256:")
    assert len(sec.hash) == 71


def test_read_without_key_returns_the_whole_file(memory: Memory, sample: Path) -> None:
    whole = memory.read("CLAUDE.md")
    assert whole.content == (sample / "CLAUDE.md").read_text()
    assert whole.key is None
    assert whole.rev == whole.file_rev == 1


def test_patch_replaces_only_the_section_body(memory: Memory, sample: Path) -> None:
    before = (sample / "CLAUDE.md").read_bytes()
    sec = memory.read("CLAUDE.md#build")
    result = memory.patch("CLAUDE.md#build", "- make build\n\n", expect_rev=sec.rev)
    after = (sample / "CLAUDE.md").read_bytes()
    old_body = sec.content.encode()
    assert after == before.replace(b"## Build\n" + old_body, b"## Build\n- make build\n\n")
    assert (result.rev, result.file_rev) == (2, 2)
    assert memory.read("CLAUDE.md#build").content == "- make build\n\n"
    assert memory.read("CLAUDE.md#testing").rev == 1


def test_stale_patch_is_a_conflict_carrying_the_current_text(memory: Memory) -> None:
    memory.patch("CLAUDE.md#build", "first\n", expect_rev=1)
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "second\n", expect_rev=1)
    conflict = caught.value
    assert conflict.reason == "stale_revision"
    assert conflict.current.rev == 2
    assert conflict.current.content == "first\n"
    assert conflict.retryable is True
    assert "--expect-rev 2" in conflict.recover


def test_stale_file_hash_is_a_conflict(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    memory.patch("CLAUDE.md#testing", "changed\n", expect_rev=1)
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "x\n", expect_rev=sec.rev, expect_file_hash=sec.file_hash)
    assert caught.value.reason == "stale_file_hash"


def test_a_human_save_is_indexed_before_the_revision_check(memory: Memory, sample: Path) -> None:
    memory.read("CLAUDE.md#build")
    path = sample / "CLAUDE.md"
    path.write_bytes(path.read_bytes().replace(b"make build", b"make wheel"))
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "agent text\n", expect_rev=1)
    assert caught.value.current.rev == 2
    assert "make wheel" in caught.value.current.content
    edits = [e for e in memory.events() if e.type == "section.external_edit"]
    assert [(e.section, e.actor, e.data["rev"]) for e in edits] == [
        ("inventory-service/build", "external", 2)
    ]


def test_a_sections_rev_never_goes_back_when_it_disappears_and_returns(
    memory: Memory, sample: Path
) -> None:
    memory.patch("CLAUDE.md#testing", "v2\n\n", expect_rev=1)
    path = sample / "CLAUDE.md"
    original = path.read_bytes()
    path.write_bytes(original.replace(b"## Testing\n", b"## Checks\n"))
    assert "inventory-service/testing" not in [s.key for s in memory.sections("CLAUDE.md")]
    path.write_bytes(original)
    assert memory.read("CLAUDE.md#testing").rev == 3


def test_dmp_payload_applies_strictly(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#testing")
    dmp = diff_match_patch()
    new = sec.content.replace("make test", "make check")
    payload = dmp.patch_toText(dmp.patch_make(sec.content, new))
    memory.patch("CLAUDE.md#testing", dmp=payload, expect_rev=sec.rev)
    assert memory.read("CLAUDE.md#testing").content == new


def test_dmp_payload_that_does_not_apply_exactly_is_invalid(memory: Memory) -> None:
    dmp = diff_match_patch()
    payload = dmp.patch_toText(dmp.patch_make("- Run `make tests` now\n", "- Run it\n"))
    with pytest.raises(Invalid) as caught:
        memory.patch("CLAUDE.md#testing", dmp=payload, expect_rev=1)
    assert caught.value.reason == "patch_does_not_apply"


def test_dmp_payload_against_a_stale_base_is_a_conflict(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#testing")
    memory.patch("CLAUDE.md#testing", sec.content + "- more\n", expect_rev=1)
    dmp = diff_match_patch()
    payload = dmp.patch_toText(dmp.patch_make(sec.content, sec.content.upper()))
    with pytest.raises(Conflict):
        memory.patch("CLAUDE.md#testing", dmp=payload, expect_rev=1)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("intro\n## Sneaky\n", "would become a heading"),
        ("intro\nSneaky\n---\n", "would become a heading"),
        ("```python\nunclosed fence\n", "code fence it never closes"),
        ("<div>\nopen html block\n", "HTML block"),
    ],
)
def test_a_body_that_would_change_headings_is_refused(
    memory: Memory, sample: Path, body: str, needle: str
) -> None:
    before = (sample / "CLAUDE.md").read_bytes()
    with pytest.raises(Refused) as caught:
        memory.patch("CLAUDE.md#build", body, expect_rev=1)
    assert caught.value.reason == "structure"
    assert needle in caught.value.message
    assert (sample / "CLAUDE.md").read_bytes() == before


def test_policy_classes_decide_who_may_patch(memory: Memory) -> None:
    with pytest.raises(Refused) as append_only:
        memory.patch("memory/decisions.md#decision-log", "x\n", expect_rev=1)
    assert append_only.value.reason == "class"
    with pytest.raises(Refused) as private:
        memory.patch("memory/scratch/agent-a.md#agent-a-scratchpad", "x\n", expect_rev=1)
    assert private.value.reason == "class"
    with pytest.raises(Refused) as unmanaged:
        memory.patch("README.md#inventory-sample", "x\n", expect_rev=1)
    assert unmanaged.value.reason == "unmanaged"


def test_section_owners_refuse_other_agents(memory: Memory, sample: Path) -> None:
    with pytest.raises(Refused) as caught:
        memory.patch("CLAUDE.md#release-process", "ship it\n", expect_rev=1)
    assert caught.value.reason == "owner"
    human = Memory.open(sample, agent="human")
    assert human.patch("CLAUDE.md#release-process", "ship it\n", expect_rev=1).rev == 2


def test_generated_regions_cannot_be_patched(memory: Memory) -> None:
    with pytest.raises(Refused) as caught:
        memory.patch("memory/status.md#live-claims", "mine\n", expect_rev=1)
    assert caught.value.reason == "class"


def test_line_endings_bom_and_missing_final_newline_are_kept(memory: Memory, sample: Path) -> None:
    path = sample / "AGENTS.md"
    path.write_bytes(b"\xef\xbb\xbf# A\r\n\r\nold\r\n# B\r\nlast line")
    memory.patch("AGENTS.md#a", "new\nlines\n\n", expect_rev=1)
    memory.patch("AGENTS.md#b", "tail", expect_rev=1)
    assert path.read_bytes() == b"\xef\xbb\xbf# A\r\nnew\r\nlines\r\n\r\n# B\r\ntail"


def test_patch_keeps_the_file_mode(memory: Memory, sample: Path) -> None:
    os.chmod(sample / "CLAUDE.md", 0o640)
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    assert (sample / "CLAUDE.md").stat().st_mode & 0o777 == 0o640


def test_events_record_the_agent_and_the_clock(sample: Path) -> None:
    memory = Memory.open(sample, agent="agent-z", clock=FakeClock(1_800_000_000.25))
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    (event,) = memory.events()
    assert (event.type, event.actor, event.path, event.section) == (
        "section.patched",
        "agent-z",
        "CLAUDE.md",
        "inventory-service/build",
    )
    assert event.ts == "2027-01-15T08:00:00.250Z"
    assert event.data["rev"] == 2


def test_verify_catches_an_edited_event(memory: Memory) -> None:
    memory.patch("CLAUDE.md#build", "x\n", expect_rev=1)
    memory.patch("CLAUDE.md#build", "y\n", expect_rev=2)
    assert memory.verify()["events"] == 2
    db = memory.workspace.store._db
    db.execute("UPDATE events SET actor = 'mallory' WHERE id = 1")
    with pytest.raises(Failed) as caught:
        memory.verify()
    assert any(v.rule == "event-chain" for v in caught.value.violations)


def test_verify_reports_a_file_changed_behind_the_index(memory: Memory, sample: Path) -> None:
    memory.read("CLAUDE.md#build")
    (sample / "CLAUDE.md").write_text("# Replaced\n")
    with pytest.raises(Failed) as caught:
        memory.verify()
    assert caught.value.violations[0].path == "CLAUDE.md"
    memory.read("CLAUDE.md")
    assert memory.verify()["files"] >= 1


def test_a_suffix_reference_must_be_unambiguous(memory: Memory, sample: Path) -> None:
    (sample / "AGENTS.md").write_text("# A\n## Testing\nx\n# B\n## Testing\ny\n")
    with pytest.raises(Invalid) as caught:
        memory.read("AGENTS.md#testing")
    assert set(caught.value.candidates) == {"a/testing", "b/testing"}
    assert memory.read("AGENTS.md#b/testing").content == "y\n"

"""Compare-and-swap patches of one section: the body spliced in, the class, owner and
structure refusals, the conflicts a stale revision or file hash loses with, and no-op patches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from diff_match_patch import diff_match_patch

from memkeeper import Conflict, Invalid, Memory, Refused
from memkeeper.events import digest
from memkeeper.records import SectionText
from tests.conftest import tree_bytes


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


def test_dmp_hunk_past_the_end_of_the_body_is_invalid_and_changes_nothing(
    memory: Memory, sample: Path
) -> None:
    sec = memory.read("CLAUDE.md#testing")
    at = len(sec.content) + 10
    payload = f"@@ -{at},0 +{at},6 @@\n+- more%0A\n"
    before = tree_bytes(sample)
    with pytest.raises(Invalid) as caught:
        memory.patch("CLAUDE.md#testing", dmp=payload, expect_rev=sec.rev)
    assert caught.value.reason == "patch_does_not_apply"
    assert tree_bytes(sample) == before
    assert memory.events() == []


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


STABLE = "# Guide\n\nIntro.\n<!-- memkeeper:section id=release -->\n## Release process\n\nTag it.\n"


def test_a_stable_id_marker_is_part_of_the_heading_it_names(memory: Memory, sample: Path) -> None:
    (sample / "AGENTS.md").write_text(STABLE)
    release = memory.read("AGENTS.md#release")
    assert release.heading == "<!-- memkeeper:section id=release -->\n## Release process\n"
    assert release.content == "\nTag it.\n"
    guide = memory.read("AGENTS.md#guide")
    assert guide.content == "\nIntro.\n"
    memory.patch("AGENTS.md#guide", "\nA new intro.\n", expect_rev=guide.rev)
    assert (sample / "AGENTS.md").read_text() == STABLE.replace("Intro.", "A new intro.")
    assert [s.key for s in memory.sections("AGENTS.md")] == ["guide", "release"]


def test_a_body_ending_in_a_stable_id_marker_is_refused_saying_what_to_do(
    memory: Memory, sample: Path
) -> None:
    body = "\nTag it.\n<!-- memkeeper:section id=notes -->\n"
    (sample / "AGENTS.md").write_text(STABLE + "## Notes\n\nNone.\n")
    release = memory.read("AGENTS.md#release")
    with pytest.raises(Refused) as caught:
        memory.patch("AGENTS.md#release", body, expect_rev=release.rev)
    assert caught.value.reason == "structure"
    assert caught.value.message == (
        "AGENTS.md#release: body line 3 is a stable-id marker "
        "(<!-- memkeeper:section id=notes -->), which would give the next heading "
        "('## Notes') the key 'notes' — a marker belongs to the heading it names, not to a "
        "body: remove it from the body, or add the marker above '## Notes' by editing the "
        "file itself"
    )


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


# -- the patch's shape -----------------------------------------------------------------------


def test_a_patch_needs_a_section_key(memory: Memory) -> None:
    with pytest.raises(Invalid, match="patch needs a section"):
        memory.patch("CLAUDE.md", "x\n", expect_rev=1)


@pytest.mark.parametrize(
    ("body", "dmp"), [(None, None), ("x\n", "@@ -1 +1 @@\n")], ids=["neither", "both"]
)
def test_a_patch_takes_exactly_one_of_a_body_and_a_diff(
    memory: Memory, body: str | None, dmp: str | None
) -> None:
    with pytest.raises(Invalid, match="exactly one of a body or a diff-match-patch payload"):
        memory.patch("CLAUDE.md#build", body, expect_rev=1, dmp=dmp)


@pytest.mark.parametrize(
    ("body", "needle"), [(b"ok\n\xff\n", "invalid UTF-8"), (b"a\0b\n", "NUL byte")]
)
def test_a_body_that_is_not_text_is_invalid(
    memory: Memory, sample: Path, body: bytes, needle: str
) -> None:
    before = tree_bytes(sample)
    with pytest.raises(Invalid, match=needle):
        memory.patch("CLAUDE.md#build", body, expect_rev=1)
    assert tree_bytes(sample) == before


def test_a_patch_records_the_new_revision_with_its_event(memory: Memory, sample: Path) -> None:
    result = memory.patch("CLAUDE.md#testing", "- make check\n\n", expect_rev=1)
    (event,) = memory.events()
    assert result.event_id == event.id
    assert (event.type, event.path, event.section) == (
        "section.patched",
        "CLAUDE.md",
        "inventory-service/testing",
    )
    assert event.data == {"rev": 2, "hash": result.hash, "file_rev": 2}
    assert result.hash == digest(b"## Testing\n- make check\n\n")
    assert result.file_hash == digest((sample / "CLAUDE.md").read_bytes())
    assert result.warnings == ()


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "reason", "needle"),
    [
        (
            "memory/decisions.md#decision-log",
            "class",
            "is append-only; patch is not allowed — add an entry with memkeeper append",
        ),
        ("memory/scratch/agent-a.md#agent-a-scratchpad", "class", "is private; patch is not"),
        ("README.md#inventory-sample", "unmanaged", "not managed by the policy"),
    ],
    ids=["append-only", "private", "unmanaged"],
)
def test_each_class_memkeeper_does_not_patch_is_refused_with_its_reason(
    memory: Memory, sample: Path, ref: str, reason: str, needle: str
) -> None:
    before = tree_bytes(sample)
    with pytest.raises(Refused) as caught:
        memory.patch(ref, "x\n", expect_rev=1)
    assert caught.value.reason == reason
    assert needle in caught.value.message
    assert tree_bytes(sample) == before
    assert memory.events() == []


def test_an_owner_refusal_names_the_owners_and_the_agent(memory: Memory, sample: Path) -> None:
    before = tree_bytes(sample)
    with pytest.raises(Refused) as caught:
        memory.patch("CLAUDE.md#release-process", "ship it\n", expect_rev=1)
    message = caught.value.message
    assert message.startswith("CLAUDE.md#inventory-service/release-process: only human may patch")
    assert "you are 'agent-a'" in message
    assert tree_bytes(sample) == before


def test_a_structure_refusal_writes_nothing_and_records_nothing(
    memory: Memory, sample: Path
) -> None:
    before = tree_bytes(sample)
    with pytest.raises(Refused) as caught:
        memory.patch("CLAUDE.md#testing", "- run it\n# New top level\n", expect_rev=1)
    assert caught.value.reason == "structure"
    assert caught.value.message.startswith("CLAUDE.md#inventory-service/testing: ")
    assert tree_bytes(sample) == before
    assert memory.events() == []
    assert memory.read("CLAUDE.md#testing").rev == 1


def test_a_body_that_only_looks_like_markdown_lands(memory: Memory) -> None:
    body = "- not a heading: `## x`\n\n    # indented code\n\n"
    assert memory.patch("CLAUDE.md#testing", body, expect_rev=1).rev == 2
    assert memory.read("CLAUDE.md#testing").content == body


# -- conflicts -------------------------------------------------------------------------------


def test_a_stale_revision_conflict_carries_current_recover_and_expected(memory: Memory) -> None:
    memory.patch("CLAUDE.md#build", "first\n", expect_rev=1)
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "second\n", expect_rev=1)
    conflict = caught.value
    assert conflict.expected == {"rev": 1}
    assert conflict.recover == (
        "memkeeper patch 'CLAUDE.md#inventory-service/build' --expect-rev 2 --body-file FILE"
    )
    assert "expected rev 1, it is at rev 2" in conflict.message
    assert isinstance(conflict.current, SectionText)
    assert conflict.current == memory.read("CLAUDE.md#build")
    assert conflict.to_json()["current"]["content"] == "first\n"


def test_a_lost_compare_and_swap_leaves_the_file_and_counts_a_conflict(
    memory: Memory, sample: Path
) -> None:
    memory.patch("CLAUDE.md#build", "first\n", expect_rev=1)
    before = tree_bytes(sample)
    with pytest.raises(Conflict):
        memory.patch("CLAUDE.md#build", "second\n", expect_rev=1)
    assert tree_bytes(sample) == before
    assert [e.type for e in memory.events()] == ["section.patched"]
    assert memory.workspace.store.tally_count("conflict", 0.0) == 1


def test_a_stale_file_hash_conflict_expects_both_and_names_the_hashes(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    memory.patch("CLAUDE.md#testing", "changed\n", expect_rev=1)
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "x\n", expect_rev=1, expect_file_hash=sec.file_hash)
    conflict = caught.value
    assert conflict.expected == {"rev": 1, "file_hash": sec.file_hash}
    assert f"expected file hash {sec.file_hash}" in conflict.message
    assert (conflict.current.rev, conflict.current.file_rev) == (1, 2)
    assert "--expect-rev 1" in conflict.recover


def test_a_current_file_hash_lets_the_patch_land(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    result = memory.patch("CLAUDE.md#build", "x\n", expect_rev=1, expect_file_hash=sec.file_hash)
    assert (result.rev, result.file_rev) == (2, 2)


@pytest.mark.parametrize("bad", ["", "sha256:", "sha256:xyz", "f" * 64, "sha256:" + "g" * 64])
def test_a_malformed_file_hash_is_invalid_not_a_conflict(
    memory: Memory, sample: Path, bad: str
) -> None:
    before = tree_bytes(sample)
    with pytest.raises(Invalid) as caught:
        memory.patch("CLAUDE.md#build", "x\n", expect_rev=1, expect_file_hash=bad)
    assert caught.value.message == (
        f"--expect-file-hash {bad!r} is not a file hash — pass the file_hash that "
        "`memkeeper read` printed: sha256: followed by 64 hex digits"
    )
    assert tree_bytes(sample) == before
    assert memory.events() == []


def test_a_file_hash_in_capitals_is_the_same_hash(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    shouted = "sha256:" + sec.file_hash.removeprefix("sha256:").upper()
    assert memory.patch("CLAUDE.md#build", "x\n", expect_rev=1, expect_file_hash=shouted).rev == 2


def test_a_stale_revision_wins_over_a_stale_file_hash(memory: Memory) -> None:
    memory.patch("CLAUDE.md#build", "first\n", expect_rev=1)
    old = "sha256:" + "0" * 64
    with pytest.raises(Conflict) as caught:
        memory.patch("CLAUDE.md#build", "x\n", expect_rev=1, expect_file_hash=old)
    assert caught.value.reason == "stale_revision"
    assert caught.value.expected == {"rev": 1, "file_hash": old}


# -- diff-match-patch payloads and no-ops ------------------------------------------------------


def test_a_dmp_patch_records_a_revision_like_a_body(memory: Memory) -> None:
    sec = memory.read("CLAUDE.md#build")
    dmp = diff_match_patch()
    new = sec.content + "- `make docs` builds the docs.\n"
    payload = dmp.patch_toText(dmp.patch_make(sec.content, new))
    result = memory.patch("CLAUDE.md#build", dmp=payload, expect_rev=1)
    assert result.rev == 2
    assert result.hash == digest((sec.heading + new).encode())
    assert memory.events()[-1].data["rev"] == 2


def test_an_empty_dmp_payload_is_a_no_op(memory: Memory, sample: Path) -> None:
    before = tree_bytes(sample)
    result = memory.patch("CLAUDE.md#build", dmp="", expect_rev=1)
    assert (result.rev, result.event_id) == (1, 0)
    assert tree_bytes(sample) == before


def test_a_patch_with_the_same_body_returns_the_same_revision(memory: Memory, sample: Path) -> None:
    sec = memory.read("CLAUDE.md#build")
    path = sample / "CLAUDE.md"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    result = memory.patch("CLAUDE.md#build", sec.content, expect_rev=1)
    assert (result.rev, result.hash, result.file_rev, result.file_hash) == (
        sec.rev,
        sec.hash,
        sec.file_rev,
        sec.file_hash,
    )
    assert result.event_id == 0
    assert memory.events() == []
    assert path.stat().st_mtime_ns == 1_000_000_000


def test_a_patch_by_last_segment_reports_the_full_key(memory: Memory) -> None:
    result = memory.patch("CLAUDE.md#conventions", "- cents\n\n", expect_rev=1)
    assert result.key == "inventory-service/conventions"
    assert result.path == "CLAUDE.md"


def test_a_fenced_body_is_checked_without_parsing_the_file(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = "".join(f"## Note {n}\n\nfact {n}\n\n" for n in range(300))
    (sample / "memory/notes.md").write_text(notes)
    rev = memory.read("memory/notes.md#note-150").rev
    monkeypatch.setattr("memkeeper.markdown.sections.split", lambda *a: pytest.fail("whole"))
    body = "Text.\n\n```python\n# not a heading\n```\n"
    done = memory.patch("memory/notes.md#note-150", body, expect_rev=rev)
    assert done.rev == rev + 1
    monkeypatch.undo()
    assert [s.key for s in memory.sections("memory/notes.md")][149:152] == [
        "note-149", "note-150", "note-151"
    ]  # fmt: skip

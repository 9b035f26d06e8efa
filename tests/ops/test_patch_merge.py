"""``patch(merge=True)``: a stale patch merged three ways into the current body, the bodies kept
as bases, and the proposal that keeps a body whose merge did not land."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from diff_match_patch import diff_match_patch

from memkeeper import Conflict, Invalid, Memory, Refused
from memkeeper.store import bodies
from tests.conftest import tree_bytes

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

REF = "CLAUDE.md#build"
WHEEL = "- `make build` produces the wheel in `dist/`.\n"


def add_line(body: str, line: str) -> str:
    """``body`` with ``line`` after its last non-blank line, as an agent appending would."""
    stripped = body.rstrip("\n")
    return stripped + "\n" + line + "\n" + body[len(stripped) + 1 :]


@pytest.mark.peer("git")
def test_a_stale_patch_that_touches_other_lines_merges(memory: Memory) -> None:
    read = memory.read(REF)
    theirs = memory.patch(REF, read.content.replace("3.11", "3.12"), expect_rev=read.rev)
    mine = add_line(read.content, "- `make docs` builds the docs.")
    done = memory.patch(REF, mine, expect_rev=read.rev, merge=True)
    assert done.merged
    assert done.base_rev == read.rev
    assert done.rev == theirs.rev + 1
    content = memory.read(REF).content
    assert "3.12" in content
    assert content.endswith("- `make docs` builds the docs.\n\n")
    last = memory.events()[-1]
    assert (last.type, last.id) == ("section.merged", done.event_id)
    assert last.data["base_rev"] == read.rev
    assert last.data["merged_into"] == theirs.rev
    assert done.to_json()["merged"] is True
    assert done.to_json()["base_rev"] == read.rev


def test_appends_at_the_same_place_both_land_theirs_first(memory: Memory) -> None:
    read = memory.read(REF)
    memory.patch(REF, add_line(read.content, "- theirs"), expect_rev=read.rev)
    memory.patch(REF, add_line(read.content, "- mine"), expect_rev=read.rev, merge=True)
    assert memory.read(REF).content.endswith(WHEEL + "- theirs\n- mine\n\n")


def test_without_merge_a_stale_patch_is_the_plain_conflict(memory: Memory) -> None:
    read = memory.read(REF)
    memory.patch(REF, add_line(read.content, "- theirs"), expect_rev=read.rev)
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, add_line(read.content, "- mine"), expect_rev=read.rev)
    assert "merge" not in caught.value.fields
    assert "proposal" not in caught.value.fields


def test_a_patch_at_the_current_rev_is_no_merge(memory: Memory) -> None:
    read = memory.read(REF)
    done = memory.patch(REF, add_line(read.content, "- x"), expect_rev=read.rev, merge=True)
    assert not done.merged
    assert "merged" not in done.to_json()
    assert memory.events()[-1].type == "section.patched"


@pytest.mark.peer("git")
def test_an_overlapping_change_is_a_conflict_that_keeps_the_body(
    memory: Memory, sample: Path
) -> None:
    read = memory.read(REF)
    memory.patch(REF, read.content.replace("3.11", "3.12"), expect_rev=read.rev)
    before = tree_bytes(sample)
    mine = read.content.replace("3.11", "3.13")
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, mine, expect_rev=read.rev, merge=True)
    conflict = caught.value
    assert conflict.reason == "stale_revision"
    assert conflict.fields["merge"] == "overlap"
    proposal_id = conflict.fields["proposal"]
    assert f"proposals apply {proposal_id} --expect-rev 2" in conflict.message
    assert conflict.current.rev == 2
    assert "3.12" in conflict.current.content
    assert tree_bytes(sample) == before  # nothing written to the file
    (kept,) = memory.proposals()
    ref = f"CLAUDE.md#{read.key}"
    assert (kept.id, kept.ref, kept.base_rev, kept.text) == (proposal_id, ref, read.rev, mine)
    assert kept.agent == memory.agent
    assert kept.state == "open"
    opened = memory.events()[-1]
    assert (opened.type, opened.section, opened.data["proposal"]) == (
        "proposal.opened",
        read.key,
        proposal_id,
    )
    assert conflict.to_json()["proposal"] == proposal_id


def test_a_base_no_longer_kept_is_a_plain_conflict(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bodies, "KEEP_BODIES", 2)
    monkeypatch.setattr(bodies, "PRUNE_EVERY", 1)
    read = memory.read(REF)
    for n in range(3):
        now = memory.read(REF)
        memory.patch(REF, add_line(now.content, f"- step {n}"), expect_rev=now.rev)
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, add_line(read.content, "- mine"), expect_rev=read.rev, merge=True)
    assert caught.value.fields["merge"] == "base_unknown"
    assert "not kept" in caught.value.message
    assert memory.proposals() == []


def test_bodies_are_kept_for_the_last_revs_only(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bodies, "KEEP_BODIES", 3)
    monkeypatch.setattr(bodies, "PRUNE_EVERY", 1)
    for n in range(5):
        now = memory.read(REF)
        memory.patch(REF, add_line(now.content, f"- step {n}"), expect_rev=now.rev)
    store = memory.workspace.store
    key = memory.read(REF).key
    assert key is not None
    kept = [rev for rev in range(1, 7) if store.body_at("CLAUDE.md", key, rev)]
    assert kept == [4, 5, 6]


def test_old_bodies_are_pruned_in_steps_never_below_the_kept_count(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bodies, "KEEP_BODIES", 5)
    monkeypatch.setattr(bodies, "PRUNE_EVERY", 4)
    store, counts = memory.workspace.store, []
    for n in range(20):
        now = memory.read(REF)
        memory.patch(REF, add_line(now.content, f"- step {n}"), expect_rev=now.rev)
        key = memory.read(REF).key
        assert key is not None
        counts.append(sum(bool(store.body_at("CLAUDE.md", key, r)) for r in range(1, 30)))
    assert min(counts[5:]) >= 5
    assert max(counts) <= 5 + 4 - 1 + 1  # the kept ones, those awaiting a prune, and the new


def test_a_rev_from_the_future_is_no_base(memory: Memory) -> None:
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, "x\n", expect_rev=7, merge=True)
    assert caught.value.fields["merge"] == "base_unknown"


@pytest.mark.peer("git")
def test_a_dmp_patch_merges_against_the_body_it_was_made_on(memory: Memory) -> None:
    read = memory.read(REF)
    memory.patch(REF, add_line(read.content, "- theirs"), expect_rev=read.rev)
    dmp = diff_match_patch()
    payload = dmp.patch_toText(dmp.patch_make(read.content, read.content.replace("3.11", "3.12")))
    done = memory.patch(REF, dmp=payload, expect_rev=read.rev, merge=True)
    assert done.merged
    content = memory.read(REF).content
    assert "3.12" in content
    assert "- theirs" in content


def test_a_dmp_patch_that_does_not_apply_to_its_base_is_invalid(memory: Memory) -> None:
    read = memory.read(REF)
    memory.patch(REF, add_line(read.content, "- theirs"), expect_rev=read.rev)
    dmp = diff_match_patch()
    payload = dmp.patch_toText(dmp.patch_make("nothing like it\n", "something else\n"))
    with pytest.raises(Invalid) as caught:
        memory.patch(REF, dmp=payload, expect_rev=read.rev, merge=True)
    assert caught.value.fields.get("reason") == "patch_does_not_apply"


def test_merge_and_a_file_hash_cannot_be_asked_together(memory: Memory, sample: Path) -> None:
    read = memory.read(REF)
    before = tree_bytes(sample)
    with pytest.raises(Invalid, match="opposite"):
        memory.patch(REF, "x\n", expect_rev=read.rev, expect_file_hash=read.file_hash, merge=True)
    assert tree_bytes(sample) == before


@pytest.mark.peer("git")
def test_the_structure_rule_applies_to_the_merged_body(memory: Memory, sample: Path) -> None:
    read = memory.read(REF)
    memory.patch(REF, read.content.replace("3.11", "3.12"), expect_rev=read.rev)
    before = tree_bytes(sample)
    with pytest.raises(Refused) as caught:
        memory.patch(REF, add_line(read.content, "## Sneaky"), expect_rev=read.rev, merge=True)
    assert caught.value.reason == "structure"
    assert tree_bytes(sample) == before


def test_owners_apply_before_any_merge(memory: Memory, sample: Path) -> None:
    ref = "CLAUDE.md#release-process"
    read = memory.read(ref)
    with pytest.raises(Refused) as caught:
        memory.patch(ref, "x\n", expect_rev=read.rev + 1, merge=True)
    assert caught.value.reason == "owner"
    assert memory.proposals() == []


@pytest.mark.peer("git")
def test_no_git_keeps_the_body_as_a_proposal(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    read = memory.read(REF)
    memory.patch(REF, add_line(read.content, "- theirs"), expect_rev=read.rev)
    monkeypatch.setenv("PATH", str(tmp_path))
    mine = read.content.replace("Python 3.11", "Python 3.12")  # not only insertions: git's
    assert mine != read.content
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, mine, expect_rev=read.rev, merge=True)
    assert caught.value.fields["merge"] == "unavailable"
    assert "git" in caught.value.message
    assert [p.id for p in memory.proposals()] == [caught.value.fields["proposal"]]


def test_lf_bodies_merge_into_a_crlf_file_as_a_plain_patch_lands_there(
    memory: Memory, sample: Path
) -> None:
    path = sample / "CLAUDE.md"
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    read = memory.read(REF)
    assert "\r\n" in read.content
    lf = read.content.replace("\r\n", "\n")
    memory.patch(REF, add_line(lf, "- theirs"), expect_rev=read.rev)
    done = memory.patch(REF, add_line(lf, "- mine"), expect_rev=read.rev, merge=True)
    assert done.merged
    content = memory.read(REF).content
    assert content.endswith("- theirs\r\n- mine\r\n\r\n")
    assert "\n" not in content.replace("\r\n", "")


def conflicting(memory: Memory) -> tuple[str, int]:
    """A body whose merge cannot land (the same line changed on both sides), and its base."""
    read = memory.read(REF)
    memory.patch(REF, read.content.replace("3.11", "3.12"), expect_rev=read.rev)
    return read.content.replace("3.11", "3.13"), read.rev


@pytest.mark.peer("git")
def test_identical_retries_of_a_failed_merge_keep_one_proposal(memory: Memory) -> None:
    mine, base = conflicting(memory)
    ids = set()
    for _ in range(40):
        with pytest.raises(Conflict) as caught:
            memory.patch(REF, mine, expect_rev=base, merge=True)
        ids.add(caught.value.fields["proposal"])
    assert len(ids) == 1
    assert len(memory.proposals()) == 1
    assert [e.type for e in memory.events()].count("proposal.opened") == 1


@pytest.mark.peer("git")
def test_a_section_keeps_a_bounded_number_of_open_proposals(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.ops import patch as patch_module

    monkeypatch.setattr(patch_module, "MAX_OPEN_PROPOSALS", 3)
    mine, base = conflicting(memory)
    for n in range(3):
        with pytest.raises(Conflict):
            memory.patch(REF, mine + f"v{n}\n", expect_rev=base, merge=True)
    with pytest.raises(Conflict) as caught:
        memory.patch(REF, mine + "one too many\n", expect_rev=base, merge=True)
    assert caught.value.fields["proposal"] is None
    assert "3 open proposals" in caught.value.message
    assert "3.12" in caught.value.current.content
    assert len(memory.proposals()) == 3

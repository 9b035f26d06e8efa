"""Regenerating regions through the API: rendering, hand edits, reconciliation, patches."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memkeeper import Invalid, Memory, Refused
from memkeeper.clock import FakeClock
from memkeeper.regions.gitform import PLACEHOLDER, stored
from memkeeper.regions.markers import parse

STATUS = "memory/status.md"


def region_text(sample: Path, region_id: str) -> str:
    data = (sample / STATUS).read_bytes()
    (region,) = [r for r in parse(data, STATUS) if r.id == region_id]
    return region.text(data).decode()


def types(memory: Memory) -> list[str]:
    return [e.type for e in memory.events()]


def test_regen_renders_claims_and_events_between_the_markers(memory: Memory, sample: Path) -> None:
    memory.claim(["src/api/"], ttl=600)
    memory.append("memory/decisions.md", "Use etcd.")
    (result,) = memory.regen()
    rendered = ("claims", "events", "decisions-feed")
    assert (result.path, result.rendered, result.written) == (STATUS, rendered, True)
    assert "| agent-a | write | src/api/ |" in region_text(sample, "claims")
    assert "entry.appended memory/decisions.md: Use etcd." in region_text(sample, "events")
    assert re.fullmatch(
        r"- \d{4}-\d\d-\d\d agent-a: Use etcd\.\n", region_text(sample, "decisions-feed")
    )
    assert types(memory)[-1] == "region.regenerated"


def test_a_claim_marked_idle_shows_since_when_in_the_claims_region(
    memory: Memory, sample: Path
) -> None:
    from memkeeper.ops import idleclaims

    claim = memory.claim(["src/api/"], ttl=600)
    memory.regen()
    assert "idle since" not in region_text(sample, "claims")
    mark = idleclaims.mark_idle(memory.workspace, claim, 1200.0, claim.granted_at)
    assert mark is not None
    memory.regen()
    assert f"| agent-a (idle since {mark.ts[11:16]}) | write | src/api/ |" in region_text(
        sample, "claims"
    )
    idleclaims.mark_active(memory.workspace, claim, 5.0)
    memory.regen()
    assert "idle since" not in region_text(sample, "claims")


def test_a_second_regen_with_nothing_new_writes_nothing(memory: Memory, sample: Path) -> None:
    memory.regen()
    path = sample / STATUS
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = (path.read_bytes(), len(memory.events()))
    (again,) = memory.regen(STATUS)
    assert (again.written, again.rendered) == (False, ())
    assert (path.read_bytes(), len(memory.events())) == before
    assert path.stat().st_mtime_ns == 1_000_000_000


def test_manual_text_around_regions_stays_byte_for_byte(memory: Memory, sample: Path) -> None:
    path = sample / STATUS
    before = path.read_bytes()
    memory.regen()
    after = path.read_bytes()
    for old, new in zip(parse(before, STATUS), parse(after, STATUS), strict=True):
        assert before[: old.text_start].endswith(after[new.start : new.text_start])
    first_old, first_new = parse(before, STATUS)[0], parse(after, STATUS)[0]
    assert before[: first_old.start] == after[: first_new.start]
    assert before.endswith(after[parse(after, STATUS)[-1].end :])


def test_a_hand_edit_is_kept_and_opens_one_reconciliation(memory: Memory, sample: Path) -> None:
    memory.regen()
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", "agent-z is on it"))
    (result,) = memory.regen()
    assert result.edited == ("claims",)
    assert "agent-z is on it" in region_text(sample, "claims")
    (rec,) = memory.reconciliations()
    assert (rec.path, rec.region, rec.opened_by) == (STATUS, "claims", "agent-a")
    assert rec.human == "agent-z is on it\n"
    assert rec.generated == "_No live claims._\n"
    memory.regen()
    memory.regen()
    assert types(memory).count("reconcile.opened") == 1
    assert len(memory.reconciliations()) == 1


def test_keep_human_moves_the_edit_above_the_region(memory: Memory, sample: Path) -> None:
    memory.regen()
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", "agent-z is on it"))
    memory.regen()
    (rec,) = memory.reconciliations()
    done = memory.resolve(rec.id, "keep-human")
    assert (done.resolution, done.resolved_by) == ("keep-human", "agent-a")
    text = path.read_text()
    assert (
        "agent-z is on it\n\n<!-- memkeeper:generated source=claims -->\n_No live claims._" in text
    )
    assert memory.reconciliations() == []
    assert types(memory)[-1] == "reconcile.resolved"
    assert not any(r.edited(path.read_bytes()) for r in parse(path.read_bytes(), STATUS))


def test_take_generated_renders_over_the_edit(memory: Memory, sample: Path) -> None:
    memory.regen()
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", "agent-z is on it"))
    memory.regen()
    (rec,) = memory.reconciliations()
    memory.resolve(rec.id, "take-generated")
    assert "agent-z" not in path.read_text()
    assert region_text(sample, "claims") == "_No live claims._\n"


def test_resolving_twice_or_an_unknown_id_is_invalid(memory: Memory, sample: Path) -> None:
    memory.regen()
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", "mine"))
    memory.regen()
    (rec,) = memory.reconciliations()
    memory.resolve(rec.id, "take-generated")
    with pytest.raises(Invalid, match="already resolved"):
        memory.resolve(rec.id, "keep-human")
    with pytest.raises(Invalid, match="no reconciliation 99"):
        memory.resolve(99, "keep-human")
    assert memory.reconciliations(resolved=True)[0].status == "resolved"


def test_regen_refuses_files_that_are_not_generated(memory: Memory) -> None:
    with pytest.raises(Refused) as caught:
        memory.regen("CLAUDE.md")
    assert caught.value.reason == "class"
    with pytest.raises(Refused) as unmanaged:
        memory.regen("README.md")
    assert unmanaged.value.reason == "unmanaged"


def test_bad_markers_anywhere_stop_the_whole_regen(memory: Memory, sample: Path) -> None:
    second = sample / "memory" / "board.md"
    second.write_text("<!-- memkeeper:generated source=nope -->\n<!-- memkeeper:end -->\n")
    policy = sample / ".memkeeper.yaml"
    rule = "  - path: memory/status.md\n"
    board = "  - path: memory/board.md\n    class: generated\n"
    policy.write_text(policy.read_text().replace(rule, board + rule))
    before = (sample / STATUS).read_bytes()
    with pytest.raises(Invalid, match=r"memory/board\.md:1: unknown source 'nope'"):
        memory.regen()
    assert (sample / STATUS).read_bytes() == before


def test_private_files_never_reach_a_region(memory: Memory, sample: Path) -> None:
    memory.claim(["memory/scratch/agent-a.md"], ttl=600)
    memory.claim(["src/", "memory/scratch/"], ttl=600)
    scratch = sample / "memory" / "scratch" / "agent-a.md"
    memory.read("memory/scratch/agent-a.md")
    scratch.write_text("# secret plans\n")
    memory.read("memory/scratch/agent-a.md")
    memory.regen()
    text = (sample / STATUS).read_text()
    assert "scratch" not in text
    assert "| agent-a | write | src/ |" in text
    assert all(e.path != "memory/scratch/agent-a.md" for e in memory.events())


def test_a_patch_outside_the_regions_of_a_generated_file_lands(memory: Memory) -> None:
    memory.regen()
    notes = memory.read(f"{STATUS}#status/notes")
    done = memory.patch(f"{STATUS}#status/notes", "\nFreeze lifted.\n", expect_rev=notes.rev)
    assert done.rev == notes.rev + 1


def test_a_patch_that_keeps_a_region_intact_in_its_section_lands(
    memory: Memory, sample: Path
) -> None:
    memory.regen()
    sec = memory.read(f"{STATUS}#status/live-claims")
    body = "\nWho holds what:\n" + sec.content
    memory.patch(f"{STATUS}#status/live-claims", body, expect_rev=sec.rev)
    assert "Who holds what:\n\n<!-- memkeeper:generated" in (sample / STATUS).read_text()


def test_a_patch_into_a_region_is_refused_with_the_region_named(memory: Memory) -> None:
    memory.regen()
    sec = memory.read(f"{STATUS}#status/live-claims")
    body = sec.content.replace("_No live claims._", "forged")
    with pytest.raises(Refused) as caught:
        memory.patch(f"{STATUS}#status/live-claims", body, expect_rev=sec.rev)
    assert caught.value.reason == "class"
    assert "region 'claims' (lines 8-10)" in caught.value.message


def test_events_carry_the_clock(sample: Path) -> None:
    memory = Memory.open(sample, agent="agent-z", clock=FakeClock(1_800_000_000.0))
    memory.regen()
    assert memory.events()[-1].ts == "2027-01-15T08:00:00.000Z"


@pytest.mark.peer("git")
def test_undoing_a_hand_edit_closes_its_reconciliation_on_the_next_regen(
    memory: Memory, sample: Path
) -> None:
    memory.regen()
    path = sample / STATUS
    original = path.read_text()
    path.write_text(original.replace("_No live claims._", "agent-z is on it"))
    memory.regen()
    (rec,) = memory.reconciliations()
    path.write_text(original)  # the human thinks better of it
    (result,) = memory.regen()
    assert result.edited == ()
    assert memory.reconciliations() == []
    (closed,) = memory.reconciliations(resolved=True)
    assert (closed.id, closed.resolution, closed.resolved_by) == (rec.id, "undone", "external")
    (event,) = [e for e in memory.events() if e.type == "reconcile.resolved"]
    assert (event.actor, event.path) == ("external", STATUS)
    assert event.data == {
        "id": rec.id,
        "region": "claims",
        "resolution": "undone",
        "reason": "the hand edit is gone: the region holds what memkeeper rendered",
        "noticed_by": "agent-a",
    }
    memory.regen()
    assert types(memory).count("reconcile.resolved") == 1


def test_a_hand_edit_that_became_the_rendered_text_closes_and_is_rendered(
    memory: Memory, sample: Path
) -> None:
    memory.regen()
    path = sample / STATUS
    path.write_text(path.read_text().replace("_No live claims._", "agent-a holds src/"))
    memory.claim(["src/"], ttl=600)
    memory.regen()
    (rec,) = memory.reconciliations()
    assert "| agent-a | write | src/ |" in rec.generated
    path.write_text(path.read_text().replace("agent-a holds src/\n", rec.generated))
    (result,) = memory.regen()
    assert memory.reconciliations() == []
    assert result.edited == ()
    assert not any(r.edited(path.read_bytes()) for r in parse(path.read_bytes(), STATUS))
    assert region_text(sample, "claims") == rec.generated


def test_a_howto_region_shows_the_policy_and_follows_its_edits(
    memory: Memory, sample: Path
) -> None:
    path = sample / STATUS
    markers = "<!-- memkeeper:generated source=howto -->\n<!-- memkeeper:end -->\n"
    path.write_text(path.read_text() + "\n## How to\n\n" + markers)
    (result,) = memory.regen()
    assert "howto" in result.rendered
    assert "| `memory/decisions.md` | append-only |" in region_text(sample, "howto")
    assert "GEMINI.md" not in region_text(sample, "howto")
    policy = sample / ".memkeeper.yaml"
    rule = "  - path: GEMINI.md\n    class: section-owned\n"
    policy.write_text(policy.read_text().replace("leases:", rule + "leases:", 1))
    (again,) = memory.regen()
    assert again.rendered == ("howto",)
    assert "| `GEMINI.md` | section-owned |" in region_text(sample, "howto")


def conflicted(page: str) -> str:
    """``page`` as a merge leaves it when both sides re-rendered the claims region."""
    start = page.index("<!-- memkeeper:generated source=claims")
    end = page.index("\n", page.index("<!-- memkeeper:end", start)) + 1
    region = page[start:end]
    theirs = region.replace("_No live claims._", "| a | write | x/ | 2026 |")
    return page[:start] + f"<<<<<<< HEAD\n{region}=======\n{theirs}>>>>>>> other\n" + page[end:]


@pytest.mark.parametrize("shape", ["both sides", "inside the region"])
def test_regen_of_a_page_with_conflict_markers_names_the_conflict_and_writes_nothing(
    memory: Memory, sample: Path, shape: str
) -> None:
    status = sample / "memory/status.md"
    page = status.read_text()
    if shape == "both sides":
        status.write_text(conflicted(page))
    else:
        end = page.index("<!-- memkeeper:end")
        status.write_text(
            page[:end] + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> o\n" + page[end:]
        )
    before = status.read_bytes()
    with pytest.raises(Invalid, match=r"memory/status\.md:\d+: unresolved merge conflict"):
        memory.regen("memory/status.md")
    assert status.read_bytes() == before


def test_a_page_git_wrote_in_its_stored_form_gets_its_regions_back_with_no_edit_recorded(
    memory: Memory, sample: Path
) -> None:
    memory.claim(["src/api/"], ttl=600)
    memory.regen()
    path = sample / STATUS
    live = path.read_bytes()
    before = len(memory.events())
    path.write_bytes(stored(live, STATUS))  # a checkout, with the clean filter
    (result,) = memory.regen(STATUS)
    assert path.read_bytes() == live
    assert result.written is False  # put back as it was: nothing to render
    assert len(memory.events()) == before  # nobody's words changed: no event


def test_a_page_git_also_changed_outside_its_regions_is_indexed_and_rendered(
    memory: Memory, sample: Path
) -> None:
    memory.claim(["src/api/"], ttl=600)
    memory.regen()
    path = sample / STATUS
    branch = stored(path.read_bytes(), STATUS).replace(b"deploy freeze", b"deploy thaw")
    path.write_bytes(branch)
    memory.regen(STATUS)
    text = path.read_text()
    assert "deploy thaw" in text
    assert PLACEHOLDER not in text
    assert "| agent-a | write | src/api/ |" in text
    assert "section.external_edit" in types(memory)

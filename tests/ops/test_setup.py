"""``init`` and ``status``: writing a preset policy only when there is none, creating the
memory home, indexing every managed file, and describing the files with their classes;
``init --howto`` and the howto section of the agents' instruction files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memkeeper import Invalid, Memory
from memkeeper.ops.setup import HOWTO_HEADING, init
from memkeeper.ops.views import status
from memkeeper.policy.presets import preset_bytes
from memkeeper.regions.markers import parse
from tests.conftest import tree_bytes

POLICY = ".memkeeper.yaml"

SAMPLE_FILES: list[dict[str, Any]] = [
    {"path": "AGENTS.md", "class": "section-owned", "sections": 3},
    {"path": "CLAUDE.md", "class": "section-owned", "sections": 5},
    {"path": "memory/architecture.md", "class": "section-owned", "sections": 4},
    {"path": "memory/decisions.md", "class": "append-only", "sections": 2},
    {"path": "memory/risks.md", "class": "append-only", "sections": 2},
    {"path": "memory/scratch/agent-a.md", "class": "private"},
    {"path": "memory/status.md", "class": "generated", "sections": 5},
]


def paths(payload: dict[str, Any]) -> list[str]:
    return [entry["path"] for entry in payload["files"]]


def test_init_keeps_an_existing_policy_byte_for_byte(memory: Memory, sample: Path) -> None:
    before = (sample / POLICY).read_bytes()
    payload = init(memory.workspace, None)
    assert (sample / POLICY).read_bytes() == before
    assert payload["policy_created"] is False
    assert payload["preset"] is None
    assert payload["policy"] == POLICY


def test_init_refuses_a_preset_another_policy_is_in_the_way_of(
    memory: Memory, sample: Path
) -> None:
    before = (sample / POLICY).read_bytes()
    with pytest.raises(Invalid, match="exists and is not the preset 'cline-memory-bank'"):
        init(memory.workspace, "cline-memory-bank")
    assert (sample / POLICY).read_bytes() == before
    assert not (sample / ".memkeeper").exists()


def test_init_with_the_preset_the_policy_already_is_changes_nothing(
    memory: Memory, sample: Path
) -> None:
    (sample / POLICY).unlink()
    init(memory.workspace, "cline-memory-bank")
    again = init(memory.workspace, "cline-memory-bank")
    assert (again["policy_created"], again["preset"]) == (False, None)


def test_init_refuses_an_unknown_preset_also_where_a_policy_exists(
    memory: Memory, sample: Path
) -> None:
    with pytest.raises(Invalid, match="unknown preset 'nosuch'"):
        init(memory.workspace, "nosuch")


def test_a_file_that_is_not_text_is_reported_and_the_rest_described(
    memory: Memory, sample: Path
) -> None:
    (sample / "memory/blob.md").write_bytes(b"\x00\x01 not text")
    files = {f["path"]: f for f in init(memory.workspace, None)["files"]}
    assert "NUL byte" in files["memory/blob.md"]["error"]
    assert "sections" not in files["memory/blob.md"]
    assert files["CLAUDE.md"]["sections"] == 5
    assert "error" in {f["path"]: f for f in status(memory.workspace)["files"]}["memory/blob.md"]


def test_init_describes_every_managed_file_with_class_and_section_count(
    memory: Memory,
) -> None:
    payload = init(memory.workspace, None)
    assert payload["root"] == str(memory.root)
    assert payload["files"] == SAMPLE_FILES


def test_init_indexes_every_managed_file_but_the_private_ones(memory: Memory) -> None:
    init(memory.workspace, None)
    indexed = memory.workspace.store.indexed_paths()
    assert sorted(indexed) == [
        entry["path"] for entry in SAMPLE_FILES if entry["class"] != "private"
    ]
    assert memory.events() == []  # first indexing is no external edit


def test_init_writes_the_default_preset_when_there_is_no_policy(
    memory: Memory, sample: Path
) -> None:
    (sample / POLICY).unlink()
    payload = init(memory.workspace, None)
    assert (sample / POLICY).read_bytes() == preset_bytes("default")
    assert (payload["policy_created"], payload["preset"]) == (True, "default")
    assert "CLAUDE.md" in paths(payload)
    assert (sample / ".memkeeper" / "state.db").is_file()


def test_init_writes_the_named_preset(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    (sample / "memory-bank").mkdir()
    (sample / "memory-bank" / "activeContext.md").write_text("# Active context\n\nNow.\n")
    payload = init(memory.workspace, "cline-memory-bank")
    assert (sample / POLICY).read_bytes() == preset_bytes("cline-memory-bank")
    assert payload["preset"] == "cline-memory-bank"
    assert "memory-bank/activeContext.md" in paths(payload)


def test_init_with_an_unknown_preset_writes_no_policy(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    with pytest.raises(Invalid, match="no-such-preset"):
        init(memory.workspace, "no-such-preset")
    assert not (sample / POLICY).exists()


def test_init_twice_changes_nothing_the_second_time(memory: Memory) -> None:
    first = init(memory.workspace, None)
    states = {p: memory.workspace.store.file_state(p) for p in paths(first)}
    assert init(memory.workspace, None) == first
    assert {p: memory.workspace.store.file_state(p) for p in paths(first)} == states


def test_status_describes_the_files_like_init(memory: Memory) -> None:
    payload = status(memory.workspace)
    listed = {k: payload[k] for k in ("root", "policy", "files")}
    assert listed == {"root": str(memory.root), "policy": POLICY, "files": SAMPLE_FILES}


def test_status_without_a_policy_manages_nothing(memory: Memory, sample: Path) -> None:
    (sample / POLICY).unlink()
    payload = status(memory.workspace)
    listed = {k: payload[k] for k in ("root", "policy", "files")}
    assert listed == {"root": str(memory.root), "policy": None, "files": []}


def test_status_counts_the_sections_of_a_file_changed_on_disk(memory: Memory, sample: Path) -> None:
    assert memory.workspace.store is not None  # a root with a store: status indexes
    status(memory.workspace)
    path = sample / "AGENTS.md"
    path.write_text(path.read_text() + "\n## Extra\n\nMore.\n")
    (agents,) = [f for f in status(memory.workspace)["files"] if f["path"] == "AGENTS.md"]
    assert agents["sections"] == 4
    edits = [e for e in memory.events() if e.type == "section.external_edit"]
    assert edits[-1].section is not None
    assert edits[-1].section.endswith("/extra")


def test_status_follows_an_edited_policy(memory: Memory, sample: Path) -> None:
    status(memory.workspace)
    path = sample / POLICY
    path.write_text(path.read_text().replace("  - path: AGENTS.md\n    class: section-owned\n", ""))
    assert "AGENTS.md" not in paths(status(memory.workspace))


# -- init --howto ----------------------------------------------------------------------------


def howto(payload: dict[str, Any]) -> dict[str, str]:
    return {entry["path"]: entry["state"] for entry in payload["howto"]}


def howto_text(root: Path, rel: str) -> str:
    data = (root / rel).read_bytes()
    (region,) = [r for r in parse(data, rel) if r.source == "howto"]
    return region.text(data).decode()


def edit_policy(root: Path, old: str, new: str) -> None:
    path = root / POLICY
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


GEMINI_RULE = "  - path: GEMINI.md\n    class: section-owned\n"


def test_init_offers_the_howto_and_writes_nothing_without_the_flag(
    memory: Memory, sample: Path
) -> None:
    before = tree_bytes(sample)
    payload = init(memory.workspace, None)
    assert payload["howto"] == [
        {"path": "CLAUDE.md", "state": "absent"},
        {"path": "AGENTS.md", "state": "absent"},
    ]
    assert tree_bytes(sample) == before


def test_init_howto_adds_a_last_section_to_each_agent_file(memory: Memory, sample: Path) -> None:
    old = {rel: (sample / rel).read_bytes() for rel in ("CLAUDE.md", "AGENTS.md")}
    revs = {rel: {s.key: s.rev for s in memory.sections(rel)} for rel in old}
    payload = init(memory.workspace, None, add_howto=True)
    assert howto(payload) == {"CLAUDE.md": "added", "AGENTS.md": "added", "GEMINI.md": "missing"}
    for rel, before in old.items():
        after = (sample / rel).read_bytes()
        assert after.startswith(before)  # nothing above it changes
        added = after[len(before) :].decode()
        assert added.startswith(f"<!-- memkeeper:section id=memkeeper-howto -->\n{HOWTO_HEADING}\n")
        assert "| `memory/decisions.md` | append-only |" in howto_text(sample, rel)
        sections = {s.key: s.rev for s in memory.sections(rel)}
        assert sections == {**revs[rel], "memkeeper-howto": 1}  # the others keep their revs
    patched = [(e.type, e.path, e.section) for e in memory.events()]
    assert patched == [
        ("section.patched", "CLAUDE.md", "memkeeper-howto"),
        ("section.patched", "AGENTS.md", "memkeeper-howto"),
    ]
    assert memory.read("AGENTS.md#memkeeper-howto").content.startswith("\n<!-- memkeeper:")


def test_a_second_init_howto_changes_nothing(memory: Memory, sample: Path) -> None:
    init(memory.workspace, None, add_howto=True)
    before, events = tree_bytes(sample), memory.events()
    states = {p: memory.workspace.store.file_state(p) for p in ("CLAUDE.md", "AGENTS.md")}
    again = init(memory.workspace, None, add_howto=True)
    assert howto(again) == {"CLAUDE.md": "current", "AGENTS.md": "current", "GEMINI.md": "missing"}
    assert tree_bytes(sample) == before
    assert memory.events() == events
    assert {p: memory.workspace.store.file_state(p) for p in states} == states
    assert howto(init(memory.workspace, None)) == {"CLAUDE.md": "current", "AGENTS.md": "current"}


def test_init_howto_brings_a_stale_region_up_to_date_in_place(memory: Memory, sample: Path) -> None:
    init(memory.workspace, None, add_howto=True)
    edit_policy(sample, "leases:", GEMINI_RULE + "leases:")
    assert howto(init(memory.workspace, None))["AGENTS.md"] == "stale"
    before = (sample / "AGENTS.md").read_bytes()
    assert howto(init(memory.workspace, None, add_howto=True))["AGENTS.md"] == "updated"
    after = (sample / "AGENTS.md").read_bytes()
    assert "| `GEMINI.md` | section-owned |" in howto_text(sample, "AGENTS.md")
    assert after.count(HOWTO_HEADING.encode()) == 1
    head = before[: before.index(b"<!-- memkeeper:generated")]
    assert after.startswith(head)
    assert memory.read("AGENTS.md#memkeeper-howto").rev == 2


def test_init_howto_leaves_a_hand_edited_region_alone(memory: Memory, sample: Path) -> None:
    init(memory.workspace, None, add_howto=True)
    path = sample / "CLAUDE.md"
    path.write_text(path.read_text().replace("Several agents share", "We share"))
    edit_policy(sample, "leases:", GEMINI_RULE + "leases:")
    before = path.read_bytes()
    (entry,) = [
        e for e in init(memory.workspace, None, add_howto=True)["howto"] if e["path"] == "CLAUDE.md"
    ]
    assert entry["state"] == "edited"
    assert "edited by hand" in entry["reason"]
    assert path.read_bytes() == before


def test_init_howto_writes_in_the_files_line_endings(memory: Memory, sample: Path) -> None:
    path = sample / "AGENTS.md"
    path.write_bytes(b"# Agents\r\n\r\nBe kind.")  # CRLF, no final newline
    init(memory.workspace, None, add_howto=True)
    data = path.read_bytes()
    assert data.startswith(b"# Agents\r\n\r\nBe kind.\r\n<!-- memkeeper:section id=memkeeper-howto")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert howto(init(memory.workspace, None, add_howto=True))["AGENTS.md"] == "current"


def test_init_howto_writes_an_unmanaged_file_and_skips_a_symlink(
    memory: Memory, sample: Path
) -> None:
    (sample / "GEMINI.md").write_text("# Gemini\n")
    (sample / "CLAUDE.md").unlink()
    (sample / "CLAUDE.md").symlink_to("AGENTS.md")
    payload = init(memory.workspace, None, add_howto=True)
    assert howto(payload) == {"CLAUDE.md": "skipped", "AGENTS.md": "added", "GEMINI.md": "added"}
    assert "symlink" in payload["howto"][0]["reason"]
    assert HOWTO_HEADING in (sample / "GEMINI.md").read_text()
    assert (sample / "CLAUDE.md").read_text().count(HOWTO_HEADING) == 1  # through the link
    assert all(e.path != "GEMINI.md" for e in memory.events())  # unmanaged: no events


def test_init_howto_skips_a_file_whose_markers_are_broken(memory: Memory, sample: Path) -> None:
    path = sample / "AGENTS.md"
    path.write_text("# Agents\n\n<!-- memkeeper:generated source=claims -->\n")
    before = path.read_bytes()
    (entry,) = [
        e for e in init(memory.workspace, None, add_howto=True)["howto"] if e["path"] == "AGENTS.md"
    ]
    assert entry["state"] == "skipped"
    assert entry["reason"].startswith("AGENTS.md:3: start marker without an end marker")
    assert path.read_bytes() == before


def test_init_howto_in_a_generated_file_is_what_regen_renders(memory: Memory, sample: Path) -> None:
    edit_policy(sample, "/CLAUDE.md\n    class: section-owned", "/CLAUDE.md\n    class: generated")
    init(memory.workspace, None, add_howto=True)
    (result,) = memory.regen("CLAUDE.md")
    assert (result.unchanged, result.written) == (("howto",), False)
    edit_policy(sample, "leases:", GEMINI_RULE + "leases:")
    (result,) = memory.regen("CLAUDE.md")
    assert result.rendered == ("howto",)
    assert howto(init(memory.workspace, None))["CLAUDE.md"] == "current"


def test_a_save_to_an_unmanaged_agent_file_during_init_howto_is_kept(
    memory: Memory, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memkeeper.ops import setup

    gemini = sample / "GEMINI.md"  # no rule in the sample's policy: unmanaged
    gemini.write_text("# Gemini\n\nUse the Makefile.\n")
    real, calls = setup.plan_howto, []

    def editor_saves_meanwhile(data: bytes, rel: str, *args: Any) -> Any:
        planned = real(data, rel, *args)
        if rel == "GEMINI.md":
            calls.append(rel)
            if len(calls) == 2:  # the write's own plan: a human saves between its read and write
                gemini.write_text("# Gemini\n\nUse the Makefile.\nAnd run the linter.\n")
        return planned

    monkeypatch.setattr(setup, "plan_howto", editor_saves_meanwhile)
    init(memory.workspace, None, add_howto=True)
    text = gemini.read_text()
    assert text.startswith("# Gemini\n\nUse the Makefile.\nAnd run the linter.\n")  # theirs
    assert HOWTO_HEADING in text  # and the section, added on top of their save
    assert calls == ["GEMINI.md"] * 3  # planned, raced, planned again on the saved file

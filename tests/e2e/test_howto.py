"""The howto region through the installed CLI on the sample repository: ``init --howto``
writes it into the agents' files, ``regen`` renders it (and again after a policy edit) where
the file is ``generated``, and ``check`` and ``verify`` pass throughout."""

from __future__ import annotations

from pathlib import Path

from memkeeper.regions.markers import parse
from tests.conftest import run_cli, tree_bytes

POLICY = ".memkeeper.yaml"
GEMINI_RULE = "  - path: GEMINI.md\n    class: section-owned\n"


def ok(root: Path, *args: str) -> str:
    done = run_cli(root, *args)
    assert done.code == 0, done.stdout + done.stderr
    return done.stdout


def howto_text(root: Path, rel: str) -> str:
    data = (root / rel).read_bytes()
    (region,) = [r for r in parse(data, rel) if r.source == "howto"]
    return region.text(data).decode()


def edit_policy(root: Path, old: str, new: str) -> None:
    path = root / POLICY
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_init_howto_then_check_and_verify_pass_and_a_second_init_changes_nothing(
    sample: Path,
) -> None:
    assert "tip: `memkeeper init --howto`" in ok(sample, "init")
    ok(sample, "init", "--howto")
    for rel in ("CLAUDE.md", "AGENTS.md"):
        assert "| `/CLAUDE.md` | section-owned |" in howto_text(sample, rel)
    ok(sample, "regen")
    ok(sample, "check")
    ok(sample, "verify")
    before = tree_bytes(sample)
    again = run_cli(sample, "init", "--howto", "--json").json["howto"]
    assert [(h["path"], h["state"]) for h in again] == [
        ("CLAUDE.md", "current"),
        ("AGENTS.md", "current"),
        ("GEMINI.md", "missing"),
    ]
    assert tree_bytes(sample) == before


def test_regen_renders_the_howto_of_a_generated_file_after_a_policy_edit(sample: Path) -> None:
    edit_policy(sample, "/CLAUDE.md\n    class: section-owned", "/CLAUDE.md\n    class: generated")
    ok(sample, "init", "--howto")
    done = run_cli(sample, "regen", "CLAUDE.md", "--json")
    assert done.code == 0, done.stdout
    assert done.json["files"][0]["unchanged"] == ["howto"]  # init rendered what regen does
    edit_policy(sample, "leases:", GEMINI_RULE + "leases:")
    done = run_cli(sample, "regen", "--json")
    rendered = {f["path"]: f["rendered"] for f in done.json["files"]}
    assert "howto" in rendered["CLAUDE.md"]
    assert "| `GEMINI.md` | section-owned |" in howto_text(sample, "CLAUDE.md")
    assert "| `/CLAUDE.md` | generated |" in howto_text(sample, "CLAUDE.md")
    ok(sample, "check")
    ok(sample, "verify")
    path = sample / "CLAUDE.md"  # the region is guarded: a hand edit fails check
    path.write_text(path.read_text().replace("Several agents share", "We share"))
    done = run_cli(sample, "check", "--json")
    assert done.code == 6
    assert [v["rule"] for v in done.json["violations"]] == ["region-edited"]


def test_a_howto_region_written_by_hand_into_a_generated_page_renders(sample: Path) -> None:
    ok(sample, "init")
    page = sample / "memory" / "status.md"
    markers = "<!-- memkeeper:generated source=howto -->\n<!-- memkeeper:end -->\n"
    page.write_text(page.read_text() + "\n## How to change memory\n\n" + markers)
    assert "rendered claims, events, decisions-feed, howto" in ok(sample, "regen")
    assert "| `memory/status.md` | generated |" in howto_text(sample, "memory/status.md")
    ok(sample, "check")
    assert "already current" in ok(sample, "regen", "memory/status.md")

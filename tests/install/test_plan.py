"""The plan behind ``install-hooks`` / ``uninstall-hooks``, on hand-made edits in a temp
directory (no agent's file format involved): what ``Plan.read`` refuses, how ``edit``
composes the changes to one file and records what each step did, what ``prune`` deletes,
what ``apply`` writes, moves aside, restores and removes — and that a file changed on disk
since it was read stops every write — and what ``report`` tells the CLI."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.install.plan import Edit, Plan, report

SKELETON = b"{}\n"  # what memkeeper starts a JSON settings file with
VERSIONED = b'{\n  "version": 1\n}\n'  # the same for a file that carries a version (Cursor)


def put(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def directories(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())


Change = Callable[[str | None], str]


def becomes(text: str) -> Change:
    """A change that ignores what the file holds and leaves ``text``."""
    return lambda before: text


def recording(seen: list[str | None], then: Change) -> Change:
    """``then``, noting in ``seen`` the text it was handed."""

    def change(before: str | None) -> str:
        seen.append(before)
        return then(before)

    return change


# -- reading ---------------------------------------------------------------------------------------


def test_read_gives_the_files_bytes_or_none_when_it_is_missing(tmp_path: Path) -> None:
    put(tmp_path, ".codex/hooks.json", b'{"hooks": {}}\n')
    plan = Plan(tmp_path)
    assert plan.read(".codex/hooks.json") == b'{"hooks": {}}\n'
    assert plan.read(".cursor/hooks.json") is None


@pytest.mark.parametrize("target", ["settings.real.json", "nowhere.json"], ids=["live", "dangling"])
def test_a_symlink_in_a_files_place_is_refused_not_written_through(
    tmp_path: Path, target: str
) -> None:
    put(tmp_path, "settings.real.json", b"{}\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").symlink_to(tmp_path / target)
    with pytest.raises(Invalid) as caught:
        Plan(tmp_path).read(".claude/settings.json")
    assert caught.value.message.startswith(
        ".claude/settings.json: is a symlink — memkeeper does not write through it"
    )
    assert caught.value.fields == {"path": ".claude/settings.json"}


def test_a_directory_in_a_files_place_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").mkdir()
    with pytest.raises(Invalid) as caught:
        Plan(tmp_path).read(".mcp.json")
    assert caught.value.message == ".mcp.json: is a directory — move it away, then try again"


# -- planning edits --------------------------------------------------------------------------------


def test_the_first_edit_of_a_missing_file_is_handed_none(tmp_path: Path) -> None:
    seen: list[str | None] = []
    plan = Plan(tmp_path)
    plan.edit(".mcp.json", "mcp", recording(seen, becomes("{}\n")))
    assert seen == [None]
    edit = plan.edits[".mcp.json"]
    assert (edit.old, edit.new, edit.steps) == (None, b"{}\n", {"mcp": True})
    assert files(tmp_path) == {}  # planned, not written


def test_edits_of_one_file_see_what_was_planned_not_the_disk(tmp_path: Path) -> None:
    settings = put(tmp_path, ".gemini/settings.json", b"theirs\n")
    seen: list[str | None] = []

    def append(line: str) -> Change:
        return recording(seen, lambda before: (before or "") + line)

    plan = Plan(tmp_path)
    plan.edit(".gemini/settings.json", "hooks", append("gate\n"))
    settings.write_bytes(b"saved meanwhile\n")  # the file is read once, by the first edit
    plan.edit(".gemini/settings.json", "mcp", append("server\n"))
    assert seen == ["theirs\n", "theirs\ngate\n"]
    edit = plan.edits[".gemini/settings.json"]
    assert (edit.old, edit.new) == (b"theirs\n", b"theirs\ngate\nserver\n")
    assert edit.steps == {"hooks": True, "mcp": True}


@pytest.mark.parametrize(
    ("holds", "leaves", "changed"),
    [
        (b"same\n", "same\n", False),
        (b"same\n", "other\n", True),
        (None, "", False),  # nothing there and nothing added: no change either
        (None, "{}\n", True),
    ],
)
def test_a_step_records_whether_it_changed_the_text(
    tmp_path: Path, holds: bytes | None, leaves: str, changed: bool
) -> None:
    if holds is not None:
        put(tmp_path, "a.json", holds)
    plan = Plan(tmp_path)
    plan.edit("a.json", "hooks", becomes(leaves))
    assert plan.edits["a.json"].steps == {"hooks": changed}


def test_a_step_that_changed_the_file_once_stays_changed(tmp_path: Path) -> None:
    plan = Plan(tmp_path)
    plan.edit("a.json", "hooks", becomes("{}\n"))
    plan.edit("a.json", "hooks", lambda before: before or "")  # a no-op the second time
    plan.edit("a.json", "mcp", lambda before: before or "")
    assert plan.edits["a.json"].steps == {"hooks": True, "mcp": False}


def test_a_file_that_is_not_utf8_is_refused_when_it_is_edited(tmp_path: Path) -> None:
    put(tmp_path, ".cursor/hooks.json", b'{"x": "\xff"}\n')
    plan = Plan(tmp_path)
    assert plan.read(".cursor/hooks.json") == b'{"x": "\xff"}\n'  # reading bytes is fine
    with pytest.raises(Invalid) as caught:
        plan.edit(".cursor/hooks.json", "hooks", becomes("{}\n"))
    assert caught.value.message == ".cursor/hooks.json: not UTF-8 text — fix it, then try again"


def test_an_edit_after_a_planned_deletion_starts_from_nothing(tmp_path: Path) -> None:
    put(tmp_path, "a.json", b"old\n")
    plan = Plan(tmp_path)
    plan.put(Edit("a.json", b"old\n", None))
    seen: list[str | None] = []
    plan.edit("a.json", "mcp", recording(seen, becomes("new\n")))
    assert seen == [None]
    assert plan.edits["a.json"].new == b"new\n"


@pytest.mark.parametrize(
    ("edit", "changed"),
    [
        (None, False),
        (Edit("a.json", b"x\n", b"x\n"), False),
        (Edit("a.json", b"x\n", b"y\n"), True),
        (Edit("a.json", None, b"y\n"), True),
        (Edit("a.json", b"x\n", None), True),
        (Edit("a.json", None, None), False),
        (Edit("a.json", None, b"x\n", keep_as="a.json.legacy"), True),  # moved aside: a change
    ],
    ids=["unplanned", "same", "rewritten", "created", "deleted", "absent", "kept-aside"],
)
def test_changed_says_whether_apply_will_touch_the_file(
    tmp_path: Path, edit: Edit | None, changed: bool
) -> None:
    plan = Plan(tmp_path)
    if edit is not None:
        plan.put(edit)
    assert plan.changed("a.json") is changed


# -- pruning ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("left", [SKELETON, VERSIONED, b""], ids=["empty", "versioned", "blank"])
def test_a_file_left_with_only_what_memkeeper_starts_one_with_is_deleted(
    tmp_path: Path, left: bytes
) -> None:
    plan = Plan(tmp_path)
    plan.put(Edit("a.json", b'{"hooks": {"x": 1}}\n', left))
    plan.prune()
    assert plan.edits["a.json"].new is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'{"hooks": 1, "mine": true}\n', b'{"mine": true}\n'),  # more than the skeleton left
        (SKELETON, SKELETON),  # the user's own empty file, which memkeeper did not change
        (None, b'{\n  "version": 2\n}\n'),  # not memkeeper's skeleton
    ],
    ids=["more-left", "unchanged", "other-skeleton"],
)
def test_a_file_left_with_anything_else_or_not_changed_is_kept(
    tmp_path: Path, old: bytes | None, new: bytes
) -> None:
    plan = Plan(tmp_path)
    plan.put(Edit("a.json", old, new))
    plan.prune()
    assert plan.edits["a.json"].new == new


# -- applying --------------------------------------------------------------------------------------


def test_apply_creates_files_and_the_directories_on_their_way(tmp_path: Path) -> None:
    plan = Plan(tmp_path)
    plan.edit(".github/hooks/memkeeper.json", "hooks", becomes('{"version": 1}\n'))
    plan.edit(".mcp.json", "mcp", becomes("{}\n"))
    plan.apply()
    assert files(tmp_path) == {
        ".github/hooks/memkeeper.json": b'{"version": 1}\n',
        ".mcp.json": b"{}\n",
    }


def test_apply_rewrites_a_changed_file_and_leaves_an_unchanged_one_alone(tmp_path: Path) -> None:
    changed = put(tmp_path, "changed.json", b"old\n")
    same = put(tmp_path, "same.json", b"same\n")
    inode = same.stat().st_ino
    plan = Plan(tmp_path)
    plan.edit("changed.json", "hooks", becomes("new\n"))
    plan.edit("same.json", "hooks", becomes("same\n"))
    plan.apply()
    assert changed.read_bytes() == b"new\n"
    assert same.stat().st_ino == inode  # not even replaced by the same bytes


def test_an_executable_edit_leaves_the_file_mode_755_even_unchanged(tmp_path: Path) -> None:
    script = put(tmp_path, ".clinerules/hooks/PostToolUse", b"#!/bin/sh\n")
    script.chmod(0o600)
    plan = Plan(tmp_path)
    plan.put(Edit(".clinerules/hooks/PreToolUse", None, b"#!/bin/sh\n", executable=True))
    plan.put(Edit(".clinerules/hooks/PostToolUse", b"#!/bin/sh\n", b"#!/bin/sh\n", True))
    plan.apply()
    for event in ("PreToolUse", "PostToolUse"):
        assert (tmp_path / ".clinerules/hooks" / event).stat().st_mode & 0o777 == 0o755


def test_a_deleted_file_takes_the_directories_it_was_alone_in(tmp_path: Path) -> None:
    put(tmp_path, ".vscode/mcp/servers/memkeeper.json", b"{}\n")
    put(tmp_path, ".vscode/settings.json", b"{}\n")
    plan = Plan(tmp_path)
    plan.put(Edit(".vscode/mcp/servers/memkeeper.json", b"{}\n", None))
    plan.apply()
    assert files(tmp_path) == {".vscode/settings.json": b"{}\n"}
    assert directories(tmp_path) == [".vscode"]  # the user's file keeps its directory


def test_deleting_a_file_at_the_top_leaves_the_root_itself(tmp_path: Path) -> None:
    root = tmp_path / "project"
    put(root, ".mcp.json", b"{}\n")
    plan = Plan(root)
    plan.put(Edit(".mcp.json", b"{}\n", None))
    plan.apply()
    assert root.is_dir()
    assert list(root.iterdir()) == []


def test_a_file_kept_aside_is_moved_first_then_written_new(tmp_path: Path) -> None:
    hooks = ".clinerules/hooks/PreToolUse"
    put(tmp_path, hooks, b"#!/bin/sh\necho theirs\n")
    plan = Plan(tmp_path)
    plan.put(Edit(hooks, None, b"#!/bin/sh\necho ours\n", True, keep_as=hooks + ".legacy"))
    plan.apply()
    assert files(tmp_path) == {
        hooks: b"#!/bin/sh\necho ours\n",
        hooks + ".legacy": b"#!/bin/sh\necho theirs\n",
    }


def test_a_file_kept_aside_keeps_whatever_it_holds_by_then(tmp_path: Path) -> None:
    hooks = ".clinerules/hooks/PreToolUse"
    plan = Plan(tmp_path)
    plan.put(Edit(hooks, None, b"ours\n", keep_as=hooks + ".legacy"))
    put(tmp_path, hooks, b"theirs, saved after the plan was made\n")
    plan.apply()  # nothing is overwritten: what is there is moved
    assert files(tmp_path)[hooks + ".legacy"] == b"theirs, saved after the plan was made\n"


def test_a_deleted_file_is_replaced_by_the_one_it_restores(tmp_path: Path) -> None:
    hooks = ".clinerules/hooks/PreToolUse"
    put(tmp_path, hooks, b"ours\n")
    put(tmp_path, hooks + ".legacy", b"theirs\n")
    plan = Plan(tmp_path)
    plan.put(Edit(hooks, b"ours\n", None, restore_from=hooks + ".legacy"))
    plan.apply()
    assert files(tmp_path) == {hooks: b"theirs\n"}


def _modified(path: Path) -> None:
    path.write_bytes(b"saved by an editor\n")


def _deleted(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize("meanwhile", [_modified, _deleted], ids=["modified", "deleted"])
def test_a_file_changed_since_it_was_read_stops_every_write(
    tmp_path: Path, meanwhile: Callable[[Path], None]
) -> None:
    settings = put(tmp_path, ".claude/settings.json", b"{}\n")
    plan = Plan(tmp_path)
    plan.edit(".mcp.json", "mcp", becomes("{}\n"))  # planned first: checked before it is written
    plan.edit(".claude/settings.json", "hooks", becomes('{"hooks": {}}\n'))
    meanwhile(settings)
    before = files(tmp_path)
    with pytest.raises(EnvironmentFailure) as caught:
        plan.apply()
    assert caught.value.message == (
        ".claude/settings.json: changed on disk while memkeeper was installing — it was not "
        "overwritten; run the command again"
    )
    assert files(tmp_path) == before


def test_a_file_created_since_it_was_read_as_missing_stops_every_write(tmp_path: Path) -> None:
    plan = Plan(tmp_path)
    plan.edit(".mcp.json", "mcp", becomes("{}\n"))
    plan.edit(".cursor/mcp.json", "mcp", becomes("{}\n"))
    put(tmp_path, ".cursor/mcp.json", b'{"mcpServers": {"theirs": {}}}\n')
    with pytest.raises(EnvironmentFailure, match=r"^\.cursor/mcp\.json: changed on disk"):
        plan.apply()
    assert files(tmp_path) == {".cursor/mcp.json": b'{"mcpServers": {"theirs": {}}}\n'}


class EditorSavesAfterTheCheck(Plan):
    """A plan whose file ``rel`` someone saves right after ``apply`` has checked it (the
    check reads it last), before memkeeper writes or deletes it."""

    def __init__(self, root: Path, rel: str, saved: bytes) -> None:
        super().__init__(root)
        self.saved = (rel, saved)
        self.armed = False

    def read(self, rel: str) -> bytes | None:
        found = super().read(rel)
        if self.armed and rel == self.saved[0]:
            self.armed = False
            (self.root / rel).write_bytes(self.saved[1])
        return found


@pytest.mark.parametrize("old", [None, b"ours\n"], ids=["created", "deleted"])
def test_a_save_after_the_check_is_not_overwritten_or_deleted(
    tmp_path: Path, old: bytes | None
) -> None:
    if old is not None:
        put(tmp_path, "a.json", old)
    plan = EditorSavesAfterTheCheck(tmp_path, "a.json", b"theirs\n")
    if old is None:
        plan.edit("a.json", "mcp", becomes("ours\n"))
    else:
        plan.put(Edit("a.json", old, None))
    plan.armed = True
    with pytest.raises(EnvironmentFailure, match="changed on disk"):
        plan.apply()
    assert files(tmp_path) == {"a.json": b"theirs\n"}


# -- reporting -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "what", "expected"),
    [
        (None, "hooks", {"changed": False}),
        (Edit("a", b"x", b"y", steps={"hooks": True}), "hooks", {"changed": True}),
        (Edit("a", b"x", b"x", steps={"hooks": False}), "hooks", {"changed": False}),
        (Edit("a", b"x", b"y", steps={"hooks": True}), "mcp", {"changed": False}),
        (Edit("a", None, b"y", steps={"mcp": True}), "mcp", {"changed": True, "created": True}),
        (Edit("a", b"x", None, steps={"hooks": True}), "hooks", {"changed": True, "deleted": True}),
        (
            Edit("a", None, b"y", keep_as="a.legacy", steps={"hooks": True}),
            "hooks",
            {"changed": True, "kept": "a.legacy"},  # moved aside: not created
        ),
        (
            Edit("a", b"y", None, restore_from="a.legacy", steps={"hooks": True}),
            "hooks",
            {"changed": True, "deleted": True, "restored": "a.legacy"},
        ),
    ],
    ids=[
        "unplanned",
        "rewritten",
        "unchanged",
        "other-step",
        "created",
        "deleted",
        "kept",
        "restored",
    ],
)
def test_the_report_says_what_happened_to_the_file(
    tmp_path: Path, edit: Edit | None, what: str, expected: dict[str, Any]
) -> None:
    plan = Plan(tmp_path)
    if edit is not None:
        plan.put(edit)
    assert report(plan, "a", what) == {"path": "a", **expected}


def test_the_report_of_a_pruned_file_says_deleted(tmp_path: Path) -> None:
    put(tmp_path, "a.json", b'{"hooks": 1}\n')
    plan = Plan(tmp_path)
    plan.edit("a.json", "hooks", becomes("{}\n"))
    plan.prune()
    plan.apply()
    assert report(plan, "a.json", "hooks") == {"path": "a.json", "changed": True, "deleted": True}
    assert not os.path.lexists(tmp_path / "a.json")


def test_a_save_between_the_plan_and_its_writes_is_never_overwritten(tmp_path: Path) -> None:
    """An editor (or another install) saving a settings file memkeeper planned to change,
    taking no lock: nothing is written, not even the other files, and the save stays."""
    settings = put(tmp_path, ".claude/settings.local.json", b'{"a": 1}\n')
    other = put(tmp_path, ".codex/hooks.json", b"{}\n")
    plan = Plan(tmp_path)
    plan.edit(".claude/settings.local.json", "served", becomes('{"hooks": {}}\n'))
    plan.edit(".codex/hooks.json", "hooks", becomes('{"hooks": {}}\n'))
    settings.write_bytes(b'{"a": 2}\n')  # the save, after memkeeper read the file
    with pytest.raises(EnvironmentFailure, match="changed on disk while memkeeper was installing"):
        plan.apply()
    assert settings.read_bytes() == b'{"a": 2}\n'
    assert other.read_bytes() == b"{}\n"

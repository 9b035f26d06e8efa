"""The agents' files as ``install-hooks`` / ``uninstall-hooks`` will leave them: every edit
computed — and refused — before any file is written, then applied (docs/reference.md §4.20,
§4.22).

An edit is text in, text out, applied to what the file holds as planned so far (Gemini's
settings take both the gate and the MCP server). A file left with nothing but what memkeeper
starts a file with is deleted, with the directories it was alone in. A symlink in a file's
place is refused: writing would replace it, and writing through it would edit a file outside
the project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.fs import atomic
from memkeeper.fs import files as fsio
from memkeeper.install.jsonhooks import start
from memkeeper.names import temp_name

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


@dataclass(slots=True)
class Edit:
    """One file's change: what it holds now (``old``) and what it will (``new``; None:
    deleted), and what each step on it did."""

    rel: str
    old: bytes | None
    new: bytes | None
    executable: bool = False
    keep_as: str | None = None  # move what is there to this name first
    restore_from: str | None = None  # once deleted, move this file back in its place
    steps: dict[str, bool] = field(default_factory=dict)  # "hooks"/"mcp" → changed


class Plan:
    """The agents' files as they will be: every edit computed (and refused) before any
    file is written."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.edits: dict[str, Edit] = {}

    def read(self, rel: str) -> bytes | None:
        path = self.root / rel
        if path.is_symlink():
            raise Invalid(
                f"{rel}: is a symlink — memkeeper does not write through it; add its entries "
                "by hand (docs/reference.md §4.20)",
                path=rel,
            )
        if path.is_dir():
            raise Invalid(f"{rel}: is a directory — move it away, then try again", path=rel)
        return path.read_bytes() if path.exists() else None

    def edit(self, rel: str, what: str, change: Callable[[str | None], str]) -> None:
        """Apply ``change`` (text in, text out) to ``rel`` as planned so far."""
        if rel not in self.edits:
            old = self.read(rel)
            self.edits[rel] = Edit(rel, old, old)
        edit = self.edits[rel]
        before = None if edit.new is None else _text(edit.new, rel)
        after = change(before)
        edit.new = after.encode("utf-8")
        edit.steps[what] = edit.steps.get(what, False) or after != (before or "")

    def put(self, edit: Edit) -> None:
        self.edits[edit.rel] = edit

    def changed(self, rel: str) -> bool:
        edit = self.edits.get(rel)
        return edit is not None and (edit.new != edit.old or edit.keep_as is not None)

    def prune(self) -> None:
        """Files left with nothing but what memkeeper starts a file with are deleted."""
        for edit in self.edits.values():
            if edit.new is not None and edit.new != edit.old and edit.new in _EMPTY:
                edit.new = None

    def apply(self) -> None:
        """Write every edit. A file someone else changed since it was read (an editor saving
        the settings, another install) is never overwritten: each one is checked first,
        before anything is written, and again at its own replace."""
        for edit in self.edits.values():  # (a file moved aside keeps whatever it holds)
            if edit.keep_as is None and self.changed(edit.rel) and self.read(edit.rel) != edit.old:
                raise _raced(edit.rel)
        for edit in self.edits.values():
            try:
                _apply(self.root, edit)
            except fsio.Raced:
                raise _raced(edit.rel) from None


def _raced(rel: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        f"{rel}: changed on disk while memkeeper was installing — it was not overwritten; "
        "run the command again",
        path=rel,
    )


_EMPTY = {
    start(None, {}).encode(),
    start(None, {"version": 1}).encode(),
    b"",
}


def _text(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"{rel}: not UTF-8 text — fix it, then try again", path=rel) from None


def _apply(root: Path, edit: Edit) -> None:
    path = root / edit.rel
    if edit.keep_as is not None:
        os.replace(path, root / edit.keep_as)
    if edit.new is None:
        if edit.old is not None:
            _delete(path, edit.old)
        if edit.restore_from is not None:
            os.replace(root / edit.restore_from, path)
        else:
            _remove_empty_directories(root, path.parent)
        return
    if edit.new != edit.old or edit.keep_as is not None:
        fsio.make_directories(root, edit.rel)
        if edit.old is None or edit.keep_as is not None:  # a new file (or one moved away):
            atomic.stage(root, edit.rel, edit.new, sync=True, create=True).finish()  # if absent
        else:
            atomic.atomic_write(root, edit.rel, edit.new, expected=edit.old)
    if edit.executable:
        path.chmod(0o755)


def _delete(path: Path, old: bytes) -> None:
    """Delete the file at ``path`` if it still holds ``old``: moved aside first (a save
    landing after that lands in the moved file), read there, and put back if it holds anything
    else (``Raced``) — beside the file, named ``.NAME.memkeeper-raced-PID``, if a new file
    took its name meanwhile."""
    aside = path.with_name(temp_name(path.name, os.getpid()))
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return  # gone already: what the plan wanted
    if aside.read_bytes() == old:
        aside.unlink()
        return
    try:
        os.link(aside, path)  # back, never over a file created since
    except FileExistsError:
        os.rename(aside, path.with_name(f".{path.name}.memkeeper-raced-{os.getpid()}"))
    else:
        aside.unlink()
    raise fsio.Raced(str(path), None)


def _remove_empty_directories(root: Path, directory: Path) -> None:
    """Directories memkeeper's files were alone in (git keeps no empty directory anyway)."""
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def report(plan: Plan, rel: str, what: str) -> dict[str, Any]:
    """What happened to ``rel`` (its ``what`` step), for the CLI."""
    edit = plan.edits.get(rel)
    if edit is None:
        return {"path": rel, "changed": False}
    found: dict[str, Any] = {"path": rel, "changed": edit.steps.get(what, False)}
    if edit.new is None:
        found["deleted"] = True
    elif edit.old is None and edit.keep_as is None:
        found["created"] = True
    if edit.keep_as is not None:
        found["kept"] = edit.keep_as
    if edit.restore_from is not None:
        found["restored"] = edit.restore_from
    return found

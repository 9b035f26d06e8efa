"""What the parts of a ``Workspace`` use of one another: declared once for the type checker,
provided by every ``Workspace``, and never loaded at run time."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.ops.indexing import Indexing
from memkeeper.ops.keptlinks import KeptLinks
from memkeeper.ops.shape import WorkspaceShape
from memkeeper.ops.verdicts import Verdicts
from memkeeper.ops.workspace import Workspace
from memkeeper.ops.writeahead import WriteAhead

PARTS = (Verdicts, Indexing, WriteAhead, KeptLinks)


def methods() -> set[str]:
    """The methods and properties the shape declares."""
    found = vars(WorkspaceShape).items()
    return {
        name
        for name, value in found
        if not name.startswith("__") and (callable(value) or isinstance(value, property))
    }


def attributes() -> set[str]:
    """The attributes the shape declares."""
    return set(WorkspaceShape.__annotations__)


def declared() -> set[str]:
    return methods() | attributes()


def test_the_shape_declares_the_context_and_each_parts_calls() -> None:
    assert {"top", "store", "writing", "replace_file", "index_file", "rule"} <= declared()
    assert {"keep_path", "settle_pending", "look_shared", "agreed"} <= declared()


def test_a_workspace_provides_every_member_the_shape_declares(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, "agent-a")
    ws.close()
    missing = [name for name in methods() if not hasattr(Workspace, name)]
    missing += [name for name in attributes() if name not in vars(ws)]
    assert sorted(missing) == []


@pytest.mark.parametrize("part", PARTS, ids=lambda part: part.__name__)
def test_at_run_time_each_part_is_a_plain_class_and_a_base_of_workspace(part: type) -> None:
    assert part.__mro__ == (part, object)
    assert part in Workspace.__mro__

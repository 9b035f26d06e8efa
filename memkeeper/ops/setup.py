"""``init``: setting up a memory home and describing its files (``describe``, which
``status`` shows too: ``ops.views``).

``init --howto`` also gives the agents' instruction files at the root (``CLAUDE.md``,
``AGENTS.md``, ``GEMINI.md``) a last section holding a ``howto`` region, rendered at once from
the policy: which memory files are which class and how to change each. A file that has the
region keeps it where it is; a later ``init --howto`` renders it again when the policy
changed (``regen`` does too, in a ``generated`` file) and leaves a hand-edited one alone.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs import atomic
from memkeeper.fs import files as fsio
from memkeeper.fs.walk import managed_files
from memkeeper.markdown.lines import LINE_END, detect_newline
from memkeeper.names import POLICY_FILE
from memkeeper.ops.bulkindex import index_files
from memkeeper.ops.regen import rule_views
from memkeeper.policy.loader import load_policy, parse_policy
from memkeeper.policy.presets import preset_bytes
from memkeeper.regions import markers
from memkeeper.regions.render import HOWTO, howto

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.ops.workspace import Workspace
    from memkeeper.policy.model import Policy


HOWTO_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md")
HOWTO_HEADING = "## Working with memory files (memkeeper)"
HOWTO_ID = "memkeeper-howto"  # the section's stable id: its key wherever the heading sits


def init(ws: Workspace, preset: str | None, *, add_howto: bool = False) -> dict[str, Any]:
    """Write the policy if absent, create ``.memkeeper/``, index every managed file; with
    ``add_howto``, add (or bring up to date) the ``howto`` region of the agents' files."""

    created = not os.path.exists(os.path.join(ws.root, POLICY_FILE))
    # An unknown preset is refused whether or not there is a policy already (preset_bytes).
    chosen = preset_bytes(preset or "default")
    if created:
        parse_policy(chosen, f"preset {preset or 'default'}")
        atomic.atomic_write(ws.root, POLICY_FILE, chosen)
    elif preset is not None and fsio.read_bytes(ws.root, POLICY_FILE) != chosen:
        raise Invalid(
            f"{POLICY_FILE} exists and is not the preset {preset!r}: --preset only writes a "
            f"policy where there is none — leave --preset out to keep yours, or move "
            f"{POLICY_FILE} aside first to start from the preset"
        )
    policy = load_policy(ws.root)
    _ = ws.store  # create the store first: files are indexed into it, not read statelessly
    guides = howto_files(ws, policy, write=add_howto)
    payload = {
        "root": str(ws.root),
        "policy": POLICY_FILE,
        "policy_created": created,
        "preset": (preset or "default") if created else None,
        "files": describe(ws, policy),
        "howto": guides,
    }
    ws.store.trim_log(0)  # indexing every file leaves a big WAL for the next command
    return payload


def describe(ws: Workspace, policy: Policy) -> list[dict[str, Any]]:
    """Managed files with class and section count, indexing any that changed (not private),
    in batches (``bulkindex``). One file that is not text (a binary the policy's glob
    reaches) is reported on its line; the rest of the repository is still described."""

    managed = list(managed_files(policy, ws.root))
    indexed = index_files(ws, [rel for rel, rule in managed if rule.file_class != "private"])
    files = []
    for rel, rule in managed:
        entry: dict[str, Any] = {"path": rel, "class": rule.file_class}
        found = indexed.get(rel)
        if isinstance(found, int):
            entry["sections"] = found
        elif found is not None:
            entry["error"] = found
        files.append(entry)
    return files


# -- the howto region in the agents' instruction files --------------------------------------


def howto_files(ws: Workspace, policy: Policy, *, write: bool) -> list[dict[str, Any]]:
    """``{path, state[, reason]}`` for each of ``HOWTO_FILES`` at the root (with ``write``,
    also those missing). States: ``added``, ``updated`` (rendered again), ``current``,
    ``stale`` and ``absent`` (without ``write``), ``edited`` (by hand: left alone),
    ``skipped`` (with ``reason``), ``missing``."""
    text = howto(rule_views(policy))
    out: list[dict[str, Any]] = []
    for rel in HOWTO_FILES:
        full = os.path.join(ws.root, rel)
        if os.path.islink(full):
            reason = "a symlink: memkeeper writes the file it points to, if that is one of these"
            out.append({"path": rel, "state": "skipped", "reason": reason})
        elif os.path.isfile(full):
            out.append(_howto_file(ws, policy, rel, text, write))
        elif write:
            out.append({"path": rel, "state": "missing"})
    return out


def _howto_file(ws: Workspace, policy: Policy, rel: str, text: str, write: bool) -> dict[str, Any]:
    state, reason, new = plan_howto(fsio.read_bytes(ws.root, rel), rel, text, write)
    if new is not None:
        state = _write_howto(ws, policy, rel, text)
    return {"path": rel, "state": state, **({"reason": reason} if reason else {})}


def plan_howto(
    data: bytes, rel: str, text: str, write: bool
) -> tuple[str, str | None, bytes | None]:
    """``(state, reason, new bytes or None)`` for a file holding ``data``: the howto region
    ``text`` filled in where one is, or a new last section holding it (with ``write``)."""
    try:
        found = [r for r in markers.parse(data, rel) if r.source == HOWTO]
    except Invalid as exc:
        return "skipped", f"{exc.message}; fix the markers, then run init --howto again", None
    if any(region.edited(data) for region in found):
        return "edited", "the region was edited by hand: memkeeper leaves it alone", None
    if not found and not write:
        return "absent", None, None
    if not found:
        return "added", None, data + _section(data, rel, text)
    new = markers.fill(data, found, {region.id: text for region in found})
    if new == data:
        return "current", None, None
    return ("updated", None, new) if write else ("stale", None, None)


def _section(data: bytes, rel: str, text: str) -> bytes:
    """The new last section, in the file's line endings: a stable id (so its key is
    ``memkeeper-howto`` at any depth), the heading and the rendered region. It follows the
    last line directly, so the section above keeps its bytes and its rev; the id marker line
    keeps the two apart (and, an HTML comment, is stripped by Claude Code)."""
    newline = detect_newline(data)
    lines = [
        f"<!-- memkeeper:section id={HOWTO_ID} -->",
        HOWTO_HEADING,
        "",
        f"<!-- memkeeper:generated source={HOWTO} -->",
        "<!-- memkeeper:end -->",
    ]
    empty = ("\n".join(lines) + "\n").encode()
    section = markers.fill(empty, markers.parse(empty, rel), {HOWTO: text})
    gap = newline if data and not data.endswith((b"\n", b"\r")) else b""
    return gap + LINE_END.sub(newline, section)


def _write_howto(ws: Workspace, policy: Policy, rel: str, text: str) -> str:
    """Write the planned change: a managed file under its lock, indexed, one
    ``section.patched`` per section it changed; any other file in place."""
    rule = policy.classify(rel)
    if rule is None or rule.file_class == "private":
        return ws.retrying(rel, lambda: _write_unmanaged(ws, rel, text))
    return ws.retrying(rel, lambda: _write_managed(ws, rel, text))


def _write_unmanaged(ws: Workspace, rel: str, text: str) -> str:
    """A file memkeeper does not index, replaced only if it still holds what was read (a
    save since is ``Raced``: ``retrying`` starts over on it)."""
    data = fsio.read_bytes(ws.root, rel)
    state, _, new = plan_howto(data, rel, text, True)
    if new is not None:
        atomic.atomic_write(ws.root, rel, new, expected=data)
    return state


def _write_managed(ws: Workspace, rel: str, text: str) -> str:
    with ws.locked(rel), ws.editing(rel) as data:
        assert data is not None
        state, _, new = plan_howto(data, rel, text, True)
        if new is None:
            return state
        before = {row.key: row.rev for row in ws.store.sections(rel)}
        ws.replace_file(rel, data, new)
        file_state = ws.store.file_state(rel)
        assert file_state is not None
        for row in ws.store.sections(rel):
            if before.get(row.key) != row.rev:
                data_ = {"rev": row.rev, "hash": row.hash, "file_rev": file_state.file_rev}
                ws.record("section.patched", rel, row.key, data_)
        return state

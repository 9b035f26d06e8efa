"""An agent's JSON hook file, edited as text: memkeeper's entries added (or their commands
updated where they are) and taken out again, every other byte kept (docs/reference.md
§4.20). What goes in is the agent's ``Setup`` (``gate.agents``): its file, its events and
the entry each gets, built around the gate's command (``install.command``). memkeeper's
entries are told from the user's by that command.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memkeeper.errors import Invalid
from memkeeper.fs.agentfiles import gate_pattern
from memkeeper.gate.agents import setup as setup_of
from memkeeper.install import jsonedit
from memkeeper.install.command import gate_command

if TYPE_CHECKING:
    from typing import Any

    from memkeeper.install.jsonedit import Child, Node

    Path = list[tuple[Node, Child]]  # containers from the file's top down to one entry


# -- JSON hooks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JsonHooks:
    """One agent's JSON hook file: the entries memkeeper adds, one per event, and the
    members a file it creates starts with."""

    agent: str
    rel: str
    events: tuple[tuple[str, dict[str, Any]], ...]
    skeleton: dict[str, Any]
    # memkeeper's handlers are those whose ``command`` (Copilot: ``bash``) runs the gate — or,
    # with a ``pattern``, whose ``key`` matches it (the served gate's ``url``)
    key: str = "command"
    pattern: str = ""

    def command(self, event: str) -> str:
        entry = dict(self.events)[event]
        handler = entry["hooks"][0] if "hooks" in entry else entry
        found: str = handler.get(self.key) or handler["bash"]
        return found

    def ours(self) -> re.Pattern[str]:
        return re.compile(self.pattern) if self.pattern else gate_pattern(self.agent)


def json_hooks(agent: str) -> JsonHooks:
    """What memkeeper adds to ``agent``'s hook file: one entry per event, each running the
    gate (with the event on the command line where the agent wants it there)."""
    setup = setup_of(agent)
    if setup.entry is None:
        raise ValueError(f"{agent}: its hooks are executable files, not JSON")
    events = tuple(
        (event, setup.entry(event, _command(agent, event, setup.on_argv, setup.served)))
        for event in setup.events
    )
    return JsonHooks(agent, setup.hook_files[0], events, setup.skeleton)


def _command(agent: str, event: str, on_argv: bool, served: tuple[str, ...]) -> str:
    return gate_command(agent, event if on_argv else None, guarded=event in served)


def start(text: str | None, skeleton: dict[str, Any]) -> str:
    """The text to edit: the file's, or for a missing or blank file the one memkeeper
    creates (also what is left of it once everything memkeeper added is taken out)."""
    if text is not None and text.strip():
        return text
    return json.dumps(skeleton, indent=2) + "\n"


def add_hooks(text: str | None, spec: JsonHooks) -> str:
    """``text`` with the agent's entries added, or their commands updated where they are."""
    text = start(text, spec.skeleton)
    for event, entry in spec.events:
        text = _add_hook(text, spec, event, entry)
    return text


def _add_hook(text: str, spec: JsonHooks, event: str, entry: dict[str, Any]) -> str:
    top = top_object(text, spec.rel)
    hooks = top.member("hooks")
    if hooks is None:
        return jsonedit.insert(text, top, {event: [entry]}, "hooks")
    if not isinstance(hooks.node.value, dict):
        raise Invalid(f'{spec.rel}: "hooks" is not an object — fix it, then try again')
    groups = hooks.node.member(event)
    if groups is None:
        return jsonedit.insert(text, hooks.node, [entry], event)
    if not isinstance(groups.node.value, list):
        raise Invalid(f'{spec.rel}: "hooks".{event} is not a list — fix it, then try again')
    found = _our_handler(groups.node, spec)
    if found is None:
        return jsonedit.insert(text, groups.node, entry)
    command, wanted = found[1], spec.command(event)
    return text if command.node.value == wanted else jsonedit.replace(text, command.node, wanted)


def remove_hooks(text: str, spec: JsonHooks) -> str:
    """``text`` without the agent's entries (in any event), and without the lists and
    objects that held nothing else."""
    while True:
        path = _hook_path(top_object(text, spec.rel), spec)
        if path is None:
            return text
        text = remove_path(text, path)


def top_object(text: str, where: str) -> Node:
    top = jsonedit.parse(text, where)
    if not isinstance(top.value, dict):
        raise Invalid(f"{where}: not a JSON object — fix it, then try again", path=where)
    return top


def _hook_path(top: Node, spec: JsonHooks) -> Path | None:
    hooks = top.member("hooks")
    if hooks is None or not isinstance(hooks.node.value, dict):
        return None
    for event in hooks.node.children:
        if isinstance(event.node.value, list):
            found = _our_handler(event.node, spec)
            if found is not None:
                return [(top, hooks), (hooks.node, event), *found[0]]
    return None


def _our_handler(groups: Node, spec: JsonHooks) -> tuple[Path, Child] | None:
    """The path to memkeeper's handler in an event's list (the group, then the handler in
    it when groups nest handlers) and its command member."""
    pattern = spec.ours()
    keys = ("command", "bash") if spec.key == "command" else (spec.key,)
    for group in groups.children:
        if not isinstance(group.node.value, dict):
            continue
        inner = group.node.member("hooks")
        nested = inner is not None and isinstance(inner.node.value, list)
        handlers = inner.node.children if inner is not None and nested else (group,)
        for handler in handlers:
            for key in keys:
                field = handler.node.member(key) if handler.node.keys else None
                if field is not None and pattern.search(str(field.node.value)):
                    path: Path = [(groups, group)]
                    if inner is not None and nested:
                        path.append((inner.node, handler))
                    return path, field
    return None


def remove_path(text: str, path: Path) -> str:
    """Remove the path's last child, or the outermost container that holds nothing else
    (never the file's top object itself)."""
    level = len(path) - 1
    while level > 0 and len(path[level][0].children) == 1:
        level -= 1
    container, child = path[level]
    return jsonedit.remove(text, container, child)

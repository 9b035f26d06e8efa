"""The channel back to an agent, through its own hooks (docs/reference.md §4.28): when its
session starts, what it is told (``ops.mail.start``); before a prompt and after a tool call,
what has come for it since (``ops.mail.deliver``) — each thing once. Text for the model's
context only: it never answers a permission.

Quiet where there is nothing to say, and where the session's directory is in no memory root
with a store; a failure here is the gate's (it fails open).
"""

from __future__ import annotations

import os
import sys

from memkeeper import names
from memkeeper.fs import root as roots
from memkeeper.ops import mail
from memkeeper.ops.workspace import Workspace

TYPE_CHECKING = False  # start-up idiom: agents run this path on every tool call
if TYPE_CHECKING:
    from memkeeper.gate.agents.base import Phase


def said(phase: Phase, cwd: str, root: str | None, who: str, kind: str) -> str:
    """What to add to the context of agent ``kind``'s model at ``phase`` ("" for nothing)."""
    top = roots.find_root(root, cwd or None)
    if not os.path.isfile(os.path.join(top, names.POLICY_FILE)):
        return ""  # not a memory root: nothing to say, nothing created
    ws = Workspace(top, who)
    try:
        if phase == "start":
            return mail.start(ws, _program(kind, cwd, top), _has_mcp(top, kind), f"hook:{kind}")
        if not ws.has_store:
            return ""
        from memkeeper.mail.messages import notice

        told, notices = mail.deliver(ws, f"hook:{kind}")
        return notice(told, notices)
    finally:
        ws.close()


def _program(kind: str, cwd: str, top: str) -> str:
    from memkeeper.gate import agents

    if not agents.setup(kind).login_shell:
        return "memkeeper"
    from memkeeper.gate.messages import program_for

    return program_for(sys.argv[0], sys.executable, cwd or top, top)


def _has_mcp(top: str, kind: str) -> bool:
    from memkeeper.gate.mcp import registered

    return registered(top, kind)

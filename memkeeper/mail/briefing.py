"""What an agent is told when its session starts (docs/reference.md §4.28): who it is here,
how each class of memory file is changed — with the exact commands, and the MCP tools where
its MCP server is registered — others' live claims, and what is waiting for it. Pure.
"""

from __future__ import annotations

from memkeeper.mail import messages as mail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memkeeper.claims.decisions import Claim
    from memkeeper.coordination import Message

MAX_FILES = 12  # names listed per class; the rest counted
MAX_CLAIMS = 12
HOW = {
    "section-owned": (
        "change one section at a time, never the whole file: {p} read FILE#KEY (it gives the "
        "section's rev), then {p} patch FILE#KEY --expect-rev REV --body-file - (the new "
        "body on stdin); a stale rev answers with the current text to redo your change on"
    ),
    "append-only": "add entries at the end, never rewrite: {p} append FILE --text '…'",
    "generated": (
        "the regions between memkeeper's markers are re-rendered: edit only outside them"
    ),
    "private": "each agent's own: never shared, never shown to others",
}
TOOLS = {
    "section-owned": "memory_read, memory_patch",
    "append-only": "memory_append",
}


def _names(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:MAX_FILES])
    more = len(paths) - MAX_FILES
    return shown + (f" and {more} more" if more > 0 else "")


def _claim(claim: Claim, now: float) -> str:
    mode = "strict" if claim.strict else "advisory"
    objective = f" — {claim.objective}" if claim.objective else ""
    return (
        f"- {claim.agent} holds {', '.join(claim.targets)} ({claim.mode}, {mode}, "
        f"{claim.seconds_left(now)} s left, claim {claim.id}){objective}"
    )


def briefing(
    identity: str,
    program: str,
    mcp: bool,
    files: Mapping[str, Sequence[str]],
    others: Sequence[Claim],
    now: float,
    waiting: Sequence[Message],
    notices: Sequence[str],
) -> str:
    """The session-start context: ``files`` maps each class to its files, ``others`` are
    other identities' live claims, ``waiting`` the messages delivered with it."""
    p = program
    lines = [
        "memkeeper keeps this repository's shared memory files safe for every agent and "
        f"human working here. You act here as {identity}.",
        "Memory files, by class:",
    ]
    for file_class, how in HOW.items():
        paths = files.get(file_class, ())
        if paths:
            tools = f" (MCP: {TOOLS[file_class]})" if mcp and file_class in TOOLS else ""
            lines.append(f"- {file_class}: {_names(paths)} — {how.format(p=p)}{tools}")
    lines.append(
        f"Before changing files others may be changing, claim them: {p} claim PATH… "
        f"--objective '…' (release when done: {p} release ID)"
        + (" — or memory_claim over MCP." if mcp else ".")
    )
    if others:
        lines.append("Live claims of others:")
        lines += [_claim(c, now) for c in others[:MAX_CLAIMS]]
        if len(others) > MAX_CLAIMS:
            lines.append(f"- … and {len(others) - MAX_CLAIMS} more: {p} claims")
    told = mail.notice(waiting, notices)
    if told:
        lines.append(told)
    lines.append(
        f"Messages for you arrive here as they come; {p} inbox lists them, {p} ack ID "
        "acknowledges one" + (" (MCP: memory_inbox)." if mcp else ".")
    )
    return "\n".join(lines)

"""What ``install-hooks`` and ``uninstall-hooks`` say to people: each file they wrote,
kept or put back, and what is left for the user to do (docs/reference.md §4.20, §4.22)."""

from __future__ import annotations

from memkeeper.cli.checkpush import push_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def render(command: str, p: dict[str, Any]) -> str:
    return _installed(p) if command == "install-hooks" else _uninstalled(p)


def _installed(p: dict[str, Any]) -> str:
    done = "installed" if p["git_hook_changed"] else "already installed"
    lines = [f"git pre-commit hook {done}: {p['git_hook']} (runs memkeeper check --staged)"]
    if p["legacy_hook"]:
        kept = "moved the existing hook to" if p["moved_existing_hook"] else "runs first:"
        lines.append(f"  {kept} {p['legacy_hook']}")
    lines += push_lines(p)
    lines += _filter_lines(p.get("git_filter"))
    for agent in p.get("agents", {}).values():
        for found in agent["hooks"]:
            done = "added to" if found["changed"] else "already in"
            lines.append(f"{agent['label']} gate {done} {found['path']}")
            if found.get("kept"):
                lines.append(f"  the hook that was there is kept as {found['kept']} and runs first")
        if agent["mcp"] is not None:
            done = "added to" if agent["mcp"]["changed"] else "already in"
            lines.append(f"{agent['label']} MCP server {done} {agent['mcp']['path']}")
        if (served := p.get("served")) and agent is p["agents"].get("claude-code"):
            done = "added to" if served["hooks"]["changed"] else "already in"
            lines.append(f"served gate ({served['url']}) {done} {served['hooks']['path']}")
        lines += [f"  to do: {todo}" for todo in agent["todo"]]
    return "\n".join(lines) + "\n"


def _filter_lines(live: dict[str, Any] | None) -> list[str]:
    if not live or not live["filtered"]:
        return []
    done = "written to" if live["attributes_changed"] else "already in"
    globs = ", ".join(live["filtered"])
    lines = [f"git stores a placeholder for live regions of {globs} (filter {done} "
             f"{live['attributes']})"]  # fmt: skip
    if live["attributes_changed"]:
        lines.append(
            "  to do: commit .gitattributes, and the pages in their stored form: "
            "git add --renormalize -- PAGE..."
        )
    return lines


def _uninstalled(p: dict[str, Any]) -> str:
    lines = []
    if p["git_hook"] is not None:
        done = "removed:" if p["git_hook_removed"] else "- nothing of memkeeper's at"
        lines.append(f"git pre-commit hook {done} {p['git_hook']}")
        if p["legacy_hook_restored"]:
            lines.append("  put back the hook it had moved to pre-commit.legacy")
        lines += push_lines(p)
    live = p.get("git_filter")
    if live is not None:
        done = "removed from" if live["attributes_changed"] else "- nothing of memkeeper's in"
        lines.append(f"generated pages' git filter {done} {live['attributes']}")
    for agent in p["agents"].values():
        files = [*agent["hooks"], *([agent["mcp"]] if agent["mcp"] else [])]
        changed = list({f["path"]: f for f in files if f["changed"]}.values())
        for found in changed:
            done = "deleted" if found.get("deleted") else "removed memkeeper's entries from"
            lines.append(f"{agent['label']}: {done} {found['path']}")
            if found.get("restored"):
                lines.append(f"  put back {found['restored']} as {found['path']}")
        if not changed:
            lines.append(f"{agent['label']}: nothing of memkeeper's installed")
    served = p.get("served")
    if served and (served["hooks"]["changed"] or served["config_removed"]):
        lines.append(f"served gate removed: {served['hooks']['path']}, .memkeeper/gate.json")
    elif served and not p["agents"]:
        lines.append("served gate: nothing of memkeeper's installed")
    return "\n".join(lines) + "\n"

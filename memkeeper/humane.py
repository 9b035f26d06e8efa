"""Output for people: each verb's payload rendered as short, readable text."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def render(command: str, payload: dict[str, Any]) -> str:
    renderer = _RENDERERS.get(command)
    if renderer is None:
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return renderer(payload)


def _read(p: dict[str, Any]) -> str:
    where = p["path"] + (f"#{p['key']}" if p["key"] else "")
    rev = f"rev {p['rev']}" if p["key"] else f"file rev {p['file_rev']}"
    text = p["heading"] + p["content"]
    tail = "" if not text or text.endswith(("\n", "\r")) else "\n"
    return f"== {where} ({rev}, {p['hash']})\n{text}{tail}"


def _sections(p: dict[str, Any]) -> str:
    lines = [f"{p['path']}: {len(p['sections'])} section(s)"]
    for s in p["sections"]:
        indent = "  " * max(s["level"] - 1, 0)
        lines.append(
            f"  {s['start_line']:>5}-{s['end_line']:<5} rev {s['rev']:<4} {indent}{s['key']}"
        )
    return "\n".join(lines) + "\n"


def _patch(p: dict[str, Any]) -> str:
    out = [f"patched {p['path']}#{p['key']}: now rev {p['rev']} (file rev {p['file_rev']})"]
    out += [f"warning: {w}" for w in p.get("warnings", ())]
    return "\n".join(out) + "\n"


def _events(p: dict[str, Any]) -> str:
    lines = []
    for e in p["events"]:
        where = (e["path"] or "") + (f"#{e['section']}" if e["section"] else "")
        data = json.dumps(e["data"], ensure_ascii=False) if e["data"] else ""
        lines.append(f"{e['id']:>5} {e['ts']} {e['actor']:<14} {e['type']:<22} {where} {data}")
    return "".join(line.rstrip() + "\n" for line in lines)


def _files(p: dict[str, Any]) -> str:
    head = [f"root: {p['root']}", f"policy: {p.get('policy') or '(none: nothing is managed)'}"]
    if p.get("policy_created"):
        head.append(f"created {p['policy']} from preset {p['preset']!r}")
    rows = [
        f"  {f['class']:<14} {f['path']}"
        + (f" ({f['sections']} sections)" if "sections" in f else "")
        for f in p["files"]
    ]
    return "\n".join([*head, f"managed files: {len(rows)}", *rows]) + "\n"


def _verify(p: dict[str, Any]) -> str:
    return f"ok: event chain of {p['events']} event(s) intact, {p['files']} indexed file(s) match\n"


_RENDERERS = {
    "read": _read,
    "sections": _sections,
    "patch": _patch,
    "events": _events,
    "init": _files,
    "status": _files,
    "verify": _verify,
}

"""Output for people: each verb's payload rendered as short, readable text."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def render(command: str, payload: dict[str, Any]) -> str:
    if command in ("send", "inbox", "ack", "request-release", "answer"):
        from memkeeper.cli import mail

        return mail.render(command, payload)
    if command == "meeting":
        from memkeeper.cli import meetings

        return meetings.render(payload)
    if command in ("install-hooks", "uninstall-hooks"):
        from memkeeper.cli import hookoutput

        return hookoutput.render(command, payload)
    if command == "work":
        from memkeeper.cli import work

        return work.render(payload)
    renderer = _RENDERERS.get(command)
    if renderer is None or "history" in payload or "records" in payload:
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return renderer(payload)


def _read(p: dict[str, Any]) -> str:
    if "current_rev" in p:  # read --rev N: an earlier body
        text = p["content"]
        tail = "" if not text or text.endswith(("\n", "\r")) else "\n"
        was = f"rev {p['rev']}; the section is at rev {p['current_rev']}"
        return f"== {p['path']}#{p['key']} ({was})\n{text}{tail}"
    where = p["path"] + (f"#{p['key']}" if p["key"] else "")
    rev = f"rev {p['rev']}" if p["key"] else f"file rev {p['file_rev']}"
    text = p["heading"] + p["content"]
    tail = "" if not text or text.endswith(("\n", "\r")) else "\n"
    stale = (
        "== STALE: the shared store did not answer; this is this root's own copy, which may be "
        "behind other roots' changes (its revs are the last this root knew)\n"
        if p.get("stale")
        else ""
    )
    return f"{stale}== {where} ({rev}, {p['hash']})\n{text}{tail}"


def _sections(p: dict[str, Any]) -> str:
    lines = [f"{p['path']}: {len(p['sections'])} section(s)"]
    for s in p["sections"]:
        indent = "  " * max(s["level"] - 1, 0)
        lines.append(
            f"  {s['start_line']:>5}-{s['end_line']:<5} rev {s['rev']:<4} {indent}{s['key']}"
        )
    return "\n".join(lines) + "\n"


def _patch(p: dict[str, Any]) -> str:
    done = (
        f"merged into {p['path']}#{p['key']} (from rev {p['base_rev']})"
        if p.get("merged")
        else f"patched {p['path']}#{p['key']}"
    )
    out = [f"{done}: now rev {p['rev']} (file rev {p['file_rev']})"]
    if "proposal" in p:
        out.append(f"proposal #{p['proposal']['id']} applied")
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
    if "store" in p:
        head.append(f"store: {p['store']['kind']} ({p['store']['path']})")
    if p.get("policy_created"):
        head.append(f"created {p['policy']} from preset {p['preset']!r}")
    head += _howto(p.get("howto", ()))
    rows = [
        f"  {f['class']:<14} {f['path']}"
        + (f" ({f['sections']} sections)" if "sections" in f else "")
        + (f" — not indexed: {f['error']}" if "error" in f else "")
        for f in p["files"]
    ]
    open_ = [f"  #{r['id']} {r['path']} region {r['region']}" for r in p.get("reconciliations", ())]
    if open_:
        rows += [f"open reconciliations: {len(open_)} (memkeeper reconcile list)", *open_]
    held = [
        f"  {c['id']} {c['agent']} {c['mode']} {' '.join(c['targets'])} ({c['seconds_left']}s left)"
        for c in p.get("claims", ())
    ]
    if held:
        rows += [f"live claims: {len(held)}", *held]
    return "\n".join([*head, f"managed files: {len(p['files'])}", *rows]) + "\n"


_HOWTO_TIPS = (
    ("absent", "adds a section telling agents how to change each memory file to"),
    ("stale", "brings the howto section up to date with the policy in"),
)


def _howto(entries: list[dict[str, Any]]) -> list[str]:
    """init's word on the howto section of the agents' files (docs/reference.md §4.1)."""
    lines = [
        f"howto {h['path']}: {h['state']}" + (f" ({h['reason']})" if h.get("reason") else "")
        for h in entries
        if h["state"] not in ("current", "absent", "stale")
    ]
    for state, what in _HOWTO_TIPS:
        named = [h["path"] for h in entries if h["state"] == state]
        if named:
            lines.append(f"tip: `memkeeper init --howto` {what} {', '.join(named)}")
    return lines


def _append(p: dict[str, Any]) -> str:
    where = f"{p['path']}:{p['start_line']}-{p['end_line']}"
    warnings = "".join(f"warning: {w}\n" for w in p.get("warnings", ()))
    return f"appended {where} (file rev {p['file_rev']}, event {p['event_id']})\n{warnings}"


def _regen(p: dict[str, Any]) -> str:
    lines = []
    for f in p["files"]:
        done = f"rendered {', '.join(f['rendered'])}" if f["rendered"] else "already current"
        kept = f"; left alone (edited by hand): {', '.join(f['edited'])}" if f["edited"] else ""
        lines.append(f"{f['path']}: {done}{kept}")
    lines += [_reconciliation_line(r) for r in p["reconciliations"]]
    return "".join(line + "\n" for line in lines) or "no generated files\n"


def _reconciliation_line(r: dict[str, Any]) -> str:
    state = "open" if r["resolution"] is None else f"resolved ({r['resolution']})"
    return f"#{r['id']} {state}: {r['path']} region {r['region']}, opened by {r['opened_by']}"


def _reconcile(p: dict[str, Any]) -> str:
    if p["action"] == "list":
        lines = [_reconciliation_line(r) for r in p["reconciliations"]]
        return "".join(line + "\n" for line in lines) or "no open reconciliations\n"
    if p["action"] == "show":
        diff = p["diff"] or "(no difference left)\n"
        return f"{_reconciliation_line(p)} {p['opened_at']}\n{diff}"
    return f"resolved #{p['id']} ({p['resolution']}): {p['path']} region {p['region']}\n"


def _check(p: dict[str, Any]) -> str:
    if p.get("push"):
        return "ok: the push touches nothing under another identity's strict claim\n"
    what = "staged file(s)" if p["staged"] else "managed file(s)"
    warnings = "".join(f"warning: {w}\n" for w in p.get("warnings", ()))
    return f"{warnings}ok: {len(p['checked'])} {what} checked, no violations\n"


def _doctor(p: dict[str, Any]) -> str:
    lines = [
        f"{f['label']} user-level gate: {'added to' if f['changed'] else 'already in'} {f['path']}"
        for f in p["fixed"]
    ]
    for c in p["checks"]:
        lines.append(f"{c['status']:<7} {c['agent']}: {c['message']}")
        if c["fix"]:
            lines.append(f"        fix: {c['fix']}")
    if not p["checks"]:
        lines.append("no agent's gate is installed here (memkeeper install-hooks AGENT...)")
    return "\n".join(lines) + "\n"


def _verify(p: dict[str, Any]) -> str:
    line = f"ok: event chain of {p['events']} event(s) intact, {p['files']} indexed file(s) match"
    if p["since"]:
        line += f"\n  {p['checked']} event(s) checked after the checkpoint at event {p['since']}"
    if p["compacted"]:
        line += f"\n  events up to {p['compacted']} were compacted into a checkpoint"
    if p["unsigned"]:
        line += f"\n  no checkpoint was written: {p['unsigned']}"
    return line + "\n"


def _compact(p: dict[str, Any]) -> str:
    if not p["removed"]:
        return f"nothing to compact: the log starts after event {p['compacted']}\n"
    more = " (more is due: run it again)" if p["more"] else ""
    return f"compacted {p['removed']} event(s): the log starts after event {p['compacted']}{more}\n"


def _claim_line(c: dict[str, Any]) -> str:
    strict = " strict" if c["strict"] else ""
    return (
        f"{c['id']} token {c['token']}: {c['agent']} {c['mode']}{strict} on "
        f"{', '.join(c['targets'])} until {c['expires_at']} ({c['seconds_left']} s left)"
        + (f" idle since {c['idle']['since']}" if c.get("idle") else "")
    )


def _claim(p: dict[str, Any]) -> str:
    return f"granted {_claim_line(p)}\n{_warnings(p)}"


def _renew(p: dict[str, Any]) -> str:
    return f"renewed {_claim_line(p)}\n{_warnings(p)}"


def _warnings(p: dict[str, Any]) -> str:
    return "".join(f"warning: {w}\n" for w in p.get("warnings", ()))


def _release(p: dict[str, Any]) -> str:
    return f"released {p['id']} (token {p['token']}) on {', '.join(p['targets'])}\n"


def _claims(p: dict[str, Any]) -> str:
    if "matches" in p:
        lines = [f"live claims by similarity to {p['search']!r}: {len(p['matches'])}"]
        lines += [f"  {m['score']:.2f} {_claim_line(m)}: {m['objective']}" for m in p["matches"]]
        return "\n".join(lines) + "\n"
    lines = [f"live claims: {len(p['claims'])}"]
    lines += [f"  {_claim_line(c)}" for c in p["claims"]]
    lines.append(f"queued requests: {len(p['waiters'])}")
    lines += [
        f"  {w['id']}: {w['agent']} {w['mode']} on {', '.join(w['targets'])} "
        f"(priority {w['priority']}, gives up in {w['seconds_left']} s)"
        for w in p["waiters"]
    ]
    return "\n".join(lines) + "\n"


def _watch(p: dict[str, Any]) -> str:
    """One daemon outcome: local time, what it did, where, and the event it recorded."""
    import time

    where = (p["path"] or "") + (f"#{p['section']}" if p.get("section") else "")
    event = f" (event {p['event']})" if p.get("event") else ""
    head = f"{time.strftime('%H:%M:%S')} {p['action']:<11}"
    return f"{head} {where}: {p['detail']}{event}\n" if where else f"{head} {p['detail']}{event}\n"


def _emitted(p: dict[str, Any]) -> str:
    data = json.dumps(p["data"], ensure_ascii=False) if p["data"] else ""
    return f"recorded event {p['id']}: {p['type']} {data}".rstrip() + "\n"


def _metrics(p: dict[str, Any]) -> str:
    names = (
        *("claims_held", "queue_depth", "claims_granted"),
        *("deadlocks_broken", "ttl_expirations", "conflicts"),
    )
    head = f"last {p['window_s'] // 60} min (held and queued: now)"
    return "\n".join([head, *(f"  {n.replace('_', ' '):<18} {p[n]}" for n in names)]) + "\n"


def _proposal_line(p: dict[str, Any]) -> str:
    state = "" if p["state"] == "open" else f" [{p['state']} by {p['closed_by']}]"
    return (
        f"#{p['id']} {p['ref']} from rev {p['base_rev']} by {p['agent']}, {p['opened_at']}{state}"
    )


def _proposals(p: dict[str, Any]) -> str:
    if "proposals" in p:
        if not p["proposals"]:
            return "no open proposals\n"
        return "".join(_proposal_line(found) + "\n" for found in p["proposals"])
    if "diff" in p:
        now = p["current"]
        where = "the section is gone" if now is None else f"against rev {now['rev']} (now)"
        diff = p["diff"] or "(the same as the section now)\n"
        return f"{_proposal_line(p)}\n{where}:\n{diff}"
    if "rev" in p and "key" in p:
        return _patch(p)
    return f"dropped {_proposal_line(p['proposal'])}\n"


def _log(p: dict[str, Any]) -> str:
    lines = [f"{p['path']}#{p['key']}: rev {p['rev']}, {len(p['revisions'])} revision(s) logged"]
    if p.get("compacted"):
        lines.append(
            f"  (events up to {p['compacted']} were compacted: revisions before not listed)"
        )
    for r in p["revisions"]:
        lines.append(f"  rev {r['rev']:<4} {r['ts']}  {r['actor']}  {r['type']}")
        if r.get("diff"):
            lines += [f"    {line}" for line in r["diff"].splitlines()]
    return "\n".join(lines) + "\n"


def _keys(p: dict[str, Any]) -> str:
    if p["action"] == "trust":
        return f"trusted {p['name']} ({p['key']}) to sign as {', '.join(p['identities'])}\n"
    if p["action"] == "revoke":
        return f"revoked {p['name']}: verify names the events it signed\n"
    if p["action"] == "init":
        lines = []
        for k in p["keys"]:
            made = "made" if k["created"] else "kept"
            lines.append(f"{made} your {k['role']} key {k['name']} {k['key']} ({k['path']})")
            lines.append(
                f"  trusted here as {k['trusted_as']}"
                if k["trusted_as"]
                else f"  to trust it here: {k['trust']}"
            )
        return "\n".join(lines) + "\n"
    lines = [
        f"{k['role']} key {k['key']}" + (" (signs here)" if k["signing"] else "") for k in p["keys"]
    ]
    lines.append(f"{p['file']}: {len(p['signers'])} signer(s)")
    for s in p["signers"]:
        state = " REVOKED" if s["revoked"] else ""
        mine = f" (your {s['mine']} key)" if s["mine"] else ""
        lines.append(f"  {s['name']}{state} signs as {','.join(s['identities'])}{mine}: {s['key']}")
    return "\n".join(lines) + "\n"


_RENDERERS = {
    "keys": _keys,
    "claim": _claim,
    "renew": _renew,
    "release": _release,
    "claims": _claims,
    "metrics": _metrics,
    "read": _read,
    "sections": _sections,
    "patch": _patch,
    "revert": _patch,
    "log": _log,
    "events": _events,
    "init": _files,
    "status": _files,
    "verify": _verify,
    "compact": _compact,
    "append": _append,
    "regen": _regen,
    "reconcile": _reconcile,
    "check": _check,
    "doctor": _doctor,
    "watch": _watch,
    "emit": _emitted,
    "proposals": _proposals,
}

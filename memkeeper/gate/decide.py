"""The Claude Code gate (docs/reference.md §7): one tool call and the facts about the paths
it touches in, a decision out. Pure: ``gate.hook`` reads the hook's JSON, gathers the facts
through the operations and prints what ``decide`` returns; ``gate.messages`` says why, with
the command to run.

The rules are those of ``patch``, ``append`` and ``check``: a Write of a managed file, an
Edit that rewrites append-only history or touches a generated region, a Bash command that
writes a managed file: deny. A Bash command that deletes or moves away a managed file, or
would lose uncommitted changes of managed files (``git stash``, ``git checkout -- .``…):
deny, naming them. A section owned by someone else: ask the human. Another agent's live
claim: deny when strict, allow with ``WAIT: …`` when advisory. Everything else, private and
unmanaged files included: allow, silently. Creating a managed file that does not exist yet
is allowed (nothing can be lost), except append-only history, which ``append`` creates.
Facts are about one memory root; a call reaching into several is decided once per root and
the answers combined.
"""

from __future__ import annotations

import re

from memkeeper.errors import Invalid
from memkeeper.gate.facts import MANAGED, Decision
from memkeeper.shell.effects import Effect, Sweep, Target

TYPE_CHECKING = False  # start-up idiom: agents run this path (hook, append, emit) often
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memkeeper.gate.facts import Facts, PathFacts, SectionFacts, Verdict
    from memkeeper.gate.payload import ToolCall

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

ALLOW = Decision()


def targets(call: ToolCall) -> tuple[Effect, ...]:
    """What ``decide`` needs facts about (and PostToolUse re-indexes): the paths the call
    writes or discards, and a Bash command's sweeps."""
    if call.command is not None:
        from memkeeper.shell.writes import bash_effects

        return tuple(dict.fromkeys(bash_effects(call.command, call.cwd)))
    if call.file_path is None or call.tool == "Read":  # (a Read writes nothing)
        return ()
    return (Target(call.file_path, call.tool),)


def decide(call: ToolCall, facts: Facts) -> Decision:
    """The PreToolUse answer; ``ALLOW`` (silent) for whatever the gate does not judge."""
    if call.event != "PreToolUse":
        return ALLOW
    if call.command is not None:
        return combine(_bash(call.command, call.cwd, facts))
    found = facts.paths.get(call.file_path or "")
    if found is None:
        return ALLOW
    if call.tool == "Write":
        return combine(_write(call.content or "", found, facts))
    return combine(_edit(call, found, facts))


def combine(found: Sequence[Decision]) -> Decision:
    """Deny beats ask beats a WAIT; reasons of one verdict are joined, each said once."""
    for verdict in ("deny", "ask", "allow"):
        reasons = list(dict.fromkeys(d.reason for d in found if d.verdict == verdict and d.reason))
        if reasons:
            text = "\n".join(reasons)
            return Decision(verdict, text, "" if verdict == "deny" else text)
    return ALLOW


# -- the tools ----------------------------------------------------------------------------------


def _write(content: str, f: PathFacts, facts: Facts) -> list[Decision]:
    if f.kind not in ("file", "missing") or (f.kind == "file" and content == _text(f.data)):
        return []  # the tool fails, or rewrites nothing
    if f.file_class == "append-only" or (f.file_class in MANAGED and f.kind == "file"):
        from memkeeper.gate import messages as words

        changed = _changed_sections(f, _text(f.data), content)
        return [Decision("deny", words.write_refusal(facts, f, changed))]
    return _claims(facts, _file_targets(f))


def _edit(call: ToolCall, f: PathFacts, facts: Facts) -> list[Decision]:
    if f.file_class not in MANAGED:
        return _claims(facts, _file_targets(f))
    if f.kind == "missing":
        content = apply_edits("", call.edits)
        return [] if content is None else _write(content, f, facts)
    old = _text(f.data)
    new = apply_edits(old, call.edits)
    if new is None and "\r\n" in old:  # Claude Code edits CRLF files with LF strings
        old = old.replace("\r\n", "\n")
        new = apply_edits(old, call.edits)
    if f.kind != "file" or new is None or new == old:
        return []  # the tool fails, or changes nothing
    from memkeeper.gate import messages as words

    if f.file_class == "append-only":
        from memkeeper.markdown.appendonly import first_changed_line

        line = first_changed_line(_lf(old), _lf(new))
        if line is not None:
            return [Decision("deny", words.history_refusal(facts, f, line))]
    if f.file_class == "generated":
        problem = _region_problem(f.rel, old, new)
        if problem is not None:
            return [Decision("deny", words.region_refusal(facts, f, problem))]
    if f.file_class in ("section-owned", "generated"):
        changed = _changed_sections(f, old, new)
        asks = [
            Decision("ask", words.owner_question(facts, f, s)) for s in _not_owned(facts, changed)
        ]
        sections = [(f"{f.rel}#{s.key}", f.strict or s.strict) for s in changed]
        return asks + _claims(facts, sections or _file_targets(f))
    return _claims(facts, _file_targets(f))


def _bash(command: str, cwd: str, facts: Facts) -> list[Decision]:
    from memkeeper.shell.writes import bash_effects

    out: list[Decision] = []
    for effect in bash_effects(command, cwd):
        if isinstance(effect, Sweep):
            out += _sweep(effect, facts)
            continue
        f = (facts.paths if effect.follow else facts.entries).get(effect.path)
        if f is None or not _happens(effect, f):
            continue
        managed = f.file_class in MANAGED and f.kind == "file"
        if effect.discards and managed:
            from memkeeper.gate.messages import discard_refusal

            out.append(Decision("deny", discard_refusal(facts, f, effect.how)))
        elif not effect.discards and (managed or f.file_class == "append-only"):
            from memkeeper.gate.messages import bash_refusal

            out.append(Decision("deny", bash_refusal(facts, f, effect.how)))
        else:
            out += _claims(facts, _file_targets(f))
    return out


def _happens(target: Target, f: PathFacts) -> bool:
    if target.when == "is-file":
        return f.kind == "file"
    if target.when == "parent-is-dir":
        return f.parent_is_dir and f.kind != "dir"
    return f.kind != "dir"


def _sweep(sweep: Sweep, facts: Facts) -> list[Decision]:
    """Deny a sweep that reaches managed files (for git's, ones with something to lose)."""
    resolved = facts.sweeps.get(sweep)
    if resolved is None:
        return []
    hit = [f for f in swept(resolved, facts) if f.kind == "file" and f.file_class in MANAGED]
    if not hit:
        return []
    from memkeeper.gate.messages import sweep_refusal

    return [Decision("deny", sweep_refusal(facts, resolved, hit))]


def swept(sweep: Sweep, facts: Facts) -> list[PathFacts]:
    """The files of ``facts.tree`` that ``sweep`` (resolved) reaches and changes."""
    out = []
    for path in facts.tree:
        f = facts.paths.get(path)
        if f is not None and sweep.covers(path) and (sweep.git is None or f.git & sweep.git):
            out.append(f)
    return out


# -- rules --------------------------------------------------------------------------------------


def _claims(facts: Facts, wanted: Sequence[tuple[str, bool]]) -> list[Decision]:
    """Other agents' live claims over ``(target, strict by policy)``: strict ones deny,
    advisory ones allow with a ``WAIT:`` reason."""
    out: list[Decision] = []
    if not facts.claims:
        return out
    from memkeeper.claims.decisions import write_permission
    from memkeeper.gate.messages import claim_reason

    for target, strict in wanted:
        decision = write_permission(
            facts.claims, facts.agent, target, None, facts.now, strict=strict
        )
        for claim in decision.holders:
            verdict: Verdict = "deny" if claim.strict else "allow"
            out.append(Decision(verdict, claim_reason(facts, target, claim)))
    return out


def _file_targets(f: PathFacts) -> list[tuple[str, bool]]:
    return [(f.rel, f.strict or any(s.strict for s in f.sections))]


def _not_owned(facts: Facts, sections: Sequence[SectionFacts]) -> list[SectionFacts]:
    return [s for s in sections if s.owners is not None and facts.agent not in s.owners]


def _region_problem(rel: str, old: str, new: str) -> str | None:
    from memkeeper.regions.markers import patch_problem

    try:
        return patch_problem(rel, _bytes(old), _bytes(new))
    except Invalid:
        return None  # markers already broken: `check` says so, an edit may be the fix


# -- text -----------------------------------------------------------------------------------------


def apply_edits(text: str, edits: Sequence[tuple[str, str, bool]]) -> str | None:
    """The text after Claude Code's Edit/MultiEdit ``(old, new, replace_all)`` steps; None
    when a step would fail (its old string is not there)."""
    for old, new, every in edits:
        if not old:
            if text:
                return None  # an empty old string only creates a file
            text = new
        elif old not in text:
            return None
        else:
            text = text.replace(old, new, -1 if every else 1)
    return text


def changed_lines(old: str, new: str) -> set[int]:
    """1-based lines of ``old`` that ``new`` changes; an insertion counts for the line above."""
    import difflib

    a, b = _LINE.findall(old), _LINE.findall(new)
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.update(range(i1 + 1, i2 + 1) if i2 > i1 else (max(i1, 1),))
    return out


def _changed_sections(f: PathFacts, old: str, new: str) -> list[SectionFacts]:
    lines = changed_lines(old, new)
    return [s for s in f.sections if any(s.start_line <= n <= s.end_line for n in lines)]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _lf(text: str) -> bytes:
    from memkeeper.markdown.lines import LINE_END

    return LINE_END.sub(b"\n", _bytes(text))

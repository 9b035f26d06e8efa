"""The examples each verb's ``--help`` ends with. Read only when help is printed (the parser
asks for them as it formats), so no command pays for this module otherwise."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {
    "memkeeper": (
        "memkeeper init --preset default",
        "memkeeper read CLAUDE.md#build --json",
        "memkeeper patch CLAUDE.md#build --expect-rev 4 --body-file new-body.md",
        "memkeeper COMMAND --help",
    ),
    "init": ("memkeeper init", "memkeeper init --preset cline-memory-bank --howto"),
    "status": ("memkeeper status", "memkeeper status --json"),
    "sections": ("memkeeper sections CLAUDE.md",),
    "read": (
        "memkeeper read CLAUDE.md#build",
        "memkeeper read memory/decisions.md --json",
        "memkeeper read CLAUDE.md#build --rev 3",
    ),
    "patch": (
        "memkeeper patch CLAUDE.md#build --expect-rev 4 --body-file new-body.md",
        "printf 'make wheel\\n' | memkeeper patch CLAUDE.md#build --expect-rev 4 --body-file -",
        "memkeeper patch CLAUDE.md#build --expect-rev 4 --body-file new.md --merge",
    ),
    "events": (
        "memkeeper events --since 120 --json",
        "memkeeper events --follow",
        "memkeeper events --path CLAUDE.md --type 'section.*' --actor codex:41",
    ),
    "verify": ("memkeeper verify", "memkeeper verify --full --json"),
    "compact": ("memkeeper compact", "memkeeper compact --json"),
    "claim": (
        "memkeeper claim src/billing/ --ttl 600 --objective 'retry behaviour'",
        "memkeeper claim CLAUDE.md#build --strict --wait 30",
    ),
    "renew": ("memkeeper renew c-41 --ttl 600",),
    "release": ("memkeeper release c-41",),
    "complete": (
        "memkeeper complete c-41 --verify 'pytest -q tests/test_retry.py' --expect-rev 2",
        "memkeeper complete c-41 --evidence report.json   # kept as self-reported",
    ),
    "abandon": ("memkeeper abandon c-41 --reason 'blocked on the schema change'",),
    "takeover": ("memkeeper takeover c-41   # abandoned or expired, after the grace period",),
    "suspend": ("memkeeper suspend c-41 --expect-rev 3",),
    "resume": ("memkeeper resume c-41",),
    "claims": ("memkeeper claims", "memkeeper claims --json"),
    "metrics": ("memkeeper metrics --json",),
    "append": (
        "memkeeper append memory/decisions.md --text 'Use etcd for claims across clones.'",
        "memkeeper append memory/decisions.md --entry-file entry.md",
    ),
    "regen": ("memkeeper regen", "memkeeper regen memory/status.md"),
    "reconcile": (
        "memkeeper reconcile list",
        "memkeeper reconcile show 3",
        "memkeeper reconcile resolve 3 --keep-human",
    ),
    "check": (
        "memkeeper check",
        "memkeeper check --staged",
        "memkeeper check CLAUDE.md",
        "memkeeper check --push --remote origin < PRE_PUSH_LINES",
    ),
    "watch": ("memkeeper watch",),
    "emit": ('memkeeper emit task.completed --data \'{"task": "T-12"}\'',),
    "hook": ("memkeeper hook claude-code < payload.json",),
    "install-hooks": ("memkeeper install-hooks", "memkeeper install-hooks codex gemini --mcp"),
    "uninstall-hooks": ("memkeeper uninstall-hooks", "memkeeper uninstall-hooks cursor"),
    "filter": (
        "git config filter.memkeeper.clean 'memkeeper filter clean %f'  (install-hooks does it)",
        "memkeeper filter clean memory/status.md < memory/status.md",
    ),
    "doctor": ("memkeeper doctor", "memkeeper doctor codex --json", "memkeeper doctor --fix"),
    "mcp": ("memkeeper mcp",),
    "serve": ("memkeeper serve", "memkeeper serve --port 0"),
    "log": ("memkeeper log CLAUDE.md#build", "memkeeper log CLAUDE.md#build -p"),
    "send": (
        "memkeeper send --to claude-code:7f3c… --text 'the build moved to make wheel'",
        "memkeeper send --to all --about CLAUDE.md#build --file note.md",
    ),
    "inbox": ("memkeeper inbox", "memkeeper inbox --all --json"),
    "ack": ("memkeeper ack 12",),
    "request-release": ("memkeeper request-release c-1a2b --text 'I need CLAUDE.md#build'",),
    "answer": (
        "memkeeper answer 12 --release",
        "memkeeper answer 12 --reason 'tests still running' --eta 300",
    ),
    "meeting": (
        "memkeeper meeting open --with codex:t2 --targets CLAUDE.md",
        "memkeeper meeting propose 3 --expect-rev 1 --split me=CLAUDE.md#build "
        "--split codex:t2=CLAUDE.md#testing",
        "memkeeper meeting accept 3 1 --expect-rev 2",
        "memkeeper meeting resolve 3 --expect-rev 3 --proposal 1",
    ),
    "work": (
        "memkeeper work add 'Fix the flaky build' --paths src/build/ --priority 2",
        "memkeeper work add 'Document the build' --paths docs/build.md --after 1",
        "memkeeper work next --wait 60 --json",
        "memkeeper work done 1 --verify 'make test'",
        "memkeeper work list --ready",
    ),
    "keys": (
        "memkeeper keys init",
        "memkeeper keys trust alice human",
        "memkeeper keys trust build-box ed25519:… --as '*:*'",
        "memkeeper keys revoke old-laptop",
    ),
    "revert": ("memkeeper revert CLAUDE.md#build --to-rev 3 --expect-rev 5",),
    "proposals": (
        "memkeeper proposals",
        "memkeeper proposals show 2",
        "memkeeper proposals apply 2 --expect-rev 7",
    ),
}


def epilog(prog: str, width: int = 80) -> str | None:
    """``examples:`` and the verb's examples, one a line, for ``memkeeper VERB`` (or the top);
    an example longer than ``width`` goes on over indented lines, ending each with `` \\``."""
    verb = prog.split()[-1]
    lines = [line for example in EXAMPLES.get(verb, ()) for line in _fold(example, width)]
    if verb == "init":
        from memkeeper.policy.presets import preset_names

        lines = [*lines, "", f"presets: {', '.join(preset_names())}"]
    return "examples:\n" + "\n".join(lines) if lines else None


def _fold(example: str, width: int) -> list[str]:
    """``  EXAMPLE`` as shell lines no wider than ``width`` (a word wider stays whole)."""
    lines: list[str] = []
    line = "  "
    for word in example.split(" "):
        if line.strip() and len(line) + 1 + len(word) + 2 > width:
            lines.append(line + " \\")
            line = "      "
        line += word if not line.strip() else " " + word
    return [*lines, line]

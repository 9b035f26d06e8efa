"""Bad input: each case gets the contract's exit code, a message naming what and where,
and leaves every file byte-for-byte as it was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from diff_match_patch import diff_match_patch

from tests.conftest import run_main, tree_bytes

Setup = Callable[[Path], None]


def _nothing(root: Path) -> None:
    return None


def _write(rel: str, data: bytes) -> Setup:
    def setup(root: Path) -> None:
        (root / rel).write_bytes(data)

    return setup


def _symlink_out(root: Path) -> None:
    os.symlink("/etc/hostname", root / "escape.md")


def _no_policy(root: Path) -> None:
    (root / ".memkeeper.yaml").unlink()


def _stale_testing(root: Path) -> None:
    done = run_main(
        root,
        "patch",
        "CLAUDE.md#testing",
        "--expect-rev",
        "1",
        "--body-file",
        "-",
        stdin="- rewritten\n\n",
    )
    assert done.code == 0


def _dmp(before: str, after: str) -> str:
    dmp = diff_match_patch()
    return str(dmp.patch_toText(dmp.patch_make(before, after)))


TESTING_BODY = (
    "\n- Run `make test` before every commit.\n"
    "- Property tests live in `tests/properties/`; keep them under 30 s.\n\n"
)


DECISIONS = "memory/decisions.md"
BIG = str(2**64)
CLAIMS_START = "<!-- memkeeper:generated source=claims -->\n"
CLAIMS_END = "<!-- memkeeper:end -->\n"
CLAIMS_REGION = CLAIMS_START + CLAIMS_END


def _status(old: str, new: str) -> Setup:
    def setup(root: Path) -> None:
        path = root / "memory/status.md"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    return setup


def _policy_template(entry: str) -> Setup:
    def setup(root: Path) -> None:
        path = root / ".memkeeper.yaml"
        path.write_text(path.read_text().replace("templates:\n", f"templates:\n  {entry}\n"))

    return setup


def _reconciliation_open(root: Path) -> None:
    assert run_main(root, "regen").code == 0
    _status("_No live claims._", "a hand edit")(root)
    assert run_main(root, "regen").code == 0


def _strict_claim_by_agent_b(root: Path) -> None:
    done = run_main(root, "claim", DECISIONS, "--strict", "--ttl", "600", "--agent", "agent-b")
    assert done.code == 0, done.stderr


def _resolved_once(root: Path) -> None:
    _reconciliation_open(root)
    assert run_main(root, "reconcile", "resolve", "1", "--keep-human").code == 0


def _claimed(agent: str, *options: str, target: str = "CLAUDE.md", then: str = "") -> Setup:
    """``agent`` takes claim c1 on ``target`` (and then, say, releases it)."""

    def setup(root: Path) -> None:
        done = run_main(root, "claim", target, "--ttl", "600", *options, "--agent", agent, "--json")
        assert done.code == 0, done.stdout
        assert done.json["id"] == "c1"
        if then:
            assert run_main(root, then, "c1", "--agent", agent).code == 0

    return setup


def _no_git(root: Path) -> None:
    shutil.rmtree(root / ".git")


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    code: int
    needle: str
    setup: Setup = _nothing
    stdin: bytes | None = None
    # the real programs memkeeper runs to answer this case (pytest.mark.peer)
    peers: tuple[str, ...] = ()


CASES = [
    Case("unknown section", ("read", "CLAUDE.md#nope"), 2, "CLAUDE.md"),
    Case(
        "ambiguous section",
        ("read", "AGENTS.md#testing"),
        2,
        "a/testing",
        _write("AGENTS.md", b"# A\n## Testing\n# B\n## Testing\n"),
    ),
    Case("path escaping with ..", ("read", "../outside.md"), 2, "outside the memory root"),
    Case("absolute path outside", ("read", "/etc/hostname"), 2, "outside the memory root"),
    Case("symlink pointing out", ("read", "escape.md"), 2, "outside the memory root", _symlink_out),
    Case("missing file", ("read", "nope.md"), 2, "nope.md: no such file"),
    Case(
        "invalid UTF-8 in file",
        ("read", "AGENTS.md#a"),
        2,
        "AGENTS.md:2",
        _write("AGENTS.md", b"# A\n\xff\xfe\n"),
    ),
    Case(
        "NUL byte in file",
        ("read", "AGENTS.md"),
        2,
        "NUL",
        _write("AGENTS.md", b"# A\nnul\x00here\n"),
    ),
    Case(
        "body with an ATX heading",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        4,
        "would become a heading",
        stdin=b"text\n## Injected\n",
    ),
    Case(
        "body with a setext heading",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        4,
        "would become a heading",
        stdin=b"Injected\n========\n",
    ),
    Case(
        "body with an unclosed fence",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        4,
        "fence",
        stdin=b"```\nnever closed\n",
    ),
    Case(
        "body with invalid UTF-8",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        2,
        "invalid UTF-8",
        stdin=b"caf\xe9\n",
    ),
    Case(
        "body with a NUL byte",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        2,
        "NUL",
        stdin=b"a\x00b\n",
    ),
    Case(
        "malformed dmp patch",
        ("patch", "CLAUDE.md#testing", "--expect-rev", "1", "--dmp-file", "-"),
        2,
        "malformed diff-match-patch",
        stdin=b"@@ not a patch\n",
    ),
    Case(
        "dmp patch that does not apply",
        ("patch", "CLAUDE.md#testing", "--expect-rev", "1", "--dmp-file", "-"),
        2,
        "does not apply exactly",
        stdin=_dmp("- Run `make tests` always\n", "- Run it\n").encode(),
    ),
    Case(
        "dmp patch against a stale base",
        ("patch", "CLAUDE.md#testing", "--expect-rev", "1", "--dmp-file", "-"),
        3,
        "expected rev 1",
        _stale_testing,
        stdin=_dmp(TESTING_BODY, TESTING_BODY.replace("make test", "make check")).encode(),
    ),
    Case(
        "bad YAML in the policy",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        2,
        ".memkeeper.yaml:3:1: bad YAML",
        _write(".memkeeper.yaml", b"version: 1\nfiles: [unclosed\n"),
        stdin=b"x\n",
    ),
    Case(
        "unknown class in the policy",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        2,
        "owned-by-me",
        _write(
            ".memkeeper.yaml", b"version: 1\nfiles:\n  - path: CLAUDE.md\n    class: owned-by-me\n"
        ),
        stdin=b"x\n",
    ),
    Case(
        "patch without --expect-rev",
        ("patch", "CLAUDE.md#build", "--body-file", "-"),
        2,
        "--expect-rev",
        stdin=b"x\n",
    ),
    Case(
        "patch with both payloads",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "a", "--dmp-file", "b"),
        2,
        "not allowed with",
    ),
    Case(
        "missing body file",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "no-such-body.md"),
        2,
        "no-such-body.md: cannot read",
    ),
    Case(
        "patch of a whole file",
        ("patch", "CLAUDE.md", "--expect-rev", "1", "--body-file", "-"),
        2,
        "needs a section",
        stdin=b"x\n",
    ),
    Case(
        "non-numeric --expect-rev",
        ("patch", "CLAUDE.md#build", "--expect-rev", "four", "--body-file", "-"),
        2,
        "invalid int value",
        stdin=b"x\n",
    ),
    Case(
        "malformed --expect-file-hash",
        (
            "patch",
            "CLAUDE.md#build",
            "--expect-rev",
            "1",
            "--expect-file-hash",
            "sha256:abc",
            "--body-file",
            "-",
        ),
        2,
        "--expect-file-hash 'sha256:abc' is not a file hash",
        stdin=b"x\n",
    ),
    Case(
        "--expect-file-hash without its sha256: prefix",
        (
            "patch",
            "CLAUDE.md#build",
            "--expect-rev",
            "1",
            "--expect-file-hash",
            "0" * 64,
            "--body-file",
            "-",
        ),
        2,
        "sha256: followed by 64 hex digits",
        stdin=b"x\n",
    ),
    Case("empty section key", ("read", "CLAUDE.md#"), 2, "CLAUDE.md#"),
    Case(
        "patch of an append-only file",
        ("patch", "memory/decisions.md#decision-log", "--expect-rev", "1", "--body-file", "-"),
        4,
        "append-only",
        stdin=b"x\n",
    ),
    Case(
        "patch of a private file",
        (
            "patch",
            "memory/scratch/agent-a.md#agent-a-scratchpad",
            "--expect-rev",
            "1",
            "--body-file",
            "-",
        ),
        4,
        "private",
        stdin=b"x\n",
    ),
    Case(
        "patch of an unmanaged file",
        ("patch", "README.md#inventory-sample", "--expect-rev", "1", "--body-file", "-"),
        4,
        "not managed",
        stdin=b"x\n",
    ),
    Case(
        "patch of a section another owner holds",
        ("patch", "CLAUDE.md#release-process", "--expect-rev", "1", "--body-file", "-"),
        4,
        "only human may patch",
        stdin=b"x\n",
    ),
    Case("unknown command", ("frobnicate",), 2, "invalid choice"),
    Case("--root that does not exist", ("--root", "/no/such/dir", "status"), 2, "/no/such/dir"),
    Case("unknown preset", ("init", "--preset", "nonesuch"), 2, "nonesuch", _no_policy),
    # -- history, generated regions, reconciliation -------------------------------------------
    Case(
        "nested region markers",
        ("regen",),
        2,
        "memory/status.md:9: start marker nested in the region opened at line 8",
        _status(CLAIMS_REGION, CLAIMS_START + CLAIMS_START.replace("claims", "x") + CLAIMS_END * 2),
    ),
    Case(
        "end marker without a start",
        ("regen", "memory/status.md"),
        2,
        "memory/status.md:8: end marker without a start marker",
        _status(CLAIMS_START, ""),
    ),
    Case(
        "duplicate region ids",
        ("regen",),
        2,
        "memory/status.md:13: duplicate region id 'claims' (also at line 8)",
        _status("source=events", "source=claims"),
    ),
    Case(
        "unknown region source",
        ("regen",),
        2,
        "memory/status.md:8: unknown source 'weather'",
        _status("source=claims", "source=weather"),
    ),
    Case(
        "bad filter on a region marker",
        ("regen",),
        2,
        "memory/status.md:13: region 'events' (source 'events'): bad limit 'lots'",
        _status("source=events", "source=events limit=lots"),
    ),
    Case(
        "template error in the policy",
        ("regen",),
        2,
        "template 'feed': template line 1: unknown field {password}",
        _policy_template('feed: "{{ events | each=\\"{password}\\" }}"'),
    ),
    Case(
        "template name that shadows a built-in",
        ("regen",),
        2,
        "template name 'claims' is built in",
        _policy_template('claims: "mine"'),
    ),
    Case("regen of a section-owned file", ("regen", "CLAUDE.md"), 4, "CLAUDE.md: is section-owned"),
    Case("regen of a missing file", ("regen", "memory/nope.md"), 2, "memory/nope.md: no such file"),
    Case(
        "append to a section-owned file",
        ("append", "CLAUDE.md", "--text", "x"),
        4,
        "CLAUDE.md: is section-owned; append is only for append-only files",
    ),
    Case(
        "append to a private file",
        ("append", "memory/scratch/agent-a.md", "--text", "x"),
        4,
        "memory/scratch/agent-a.md: is private",
    ),
    Case("append to an unmanaged file", ("append", "README.md", "--text", "x"), 4, "not managed"),
    Case("append of an empty entry", ("append", DECISIONS, "--text", " \n "), 2, "entry is empty"),
    Case("append without an entry", ("append", DECISIONS), 2, "--text"),
    Case(
        "append of an entry with an open fence",
        ("append", DECISIONS, "--text", "```\nnever closed"),
        4,
        "memory/decisions.md: the entry leaves a code fence or HTML block open",
    ),
    Case(
        "append of an entry that is not UTF-8",
        ("append", DECISIONS, "--entry-file", "-"),
        2,
        "entry:1: invalid UTF-8",
        stdin=b"caf\xe9\n",
    ),
    Case(
        "resolve of an unknown reconciliation",
        ("reconcile", "resolve", "7", "--keep-human"),
        2,
        "no reconciliation 7",
    ),
    Case(
        "resolve twice",
        ("reconcile", "resolve", "1", "--take-generated"),
        2,
        "reconciliation 1 (memory/status.md, region claims) was already resolved",
        _resolved_once,
    ),
    Case(
        "resolve without saying how",
        ("reconcile", "resolve", "1"),
        2,
        "--keep-human or --take-generated",
        _reconciliation_open,
    ),
    Case(
        "resolve both ways at once",
        ("reconcile", "resolve", "1", "--keep-human", "--take-generated"),
        2,
        "not allowed with",
        _reconciliation_open,
    ),
    Case(
        "append under another agent's strict claim",
        ("append", DECISIONS, "--text", "mine"),
        4,
        "memory/decisions.md is under",
        _strict_claim_by_agent_b,
    ),
    Case("show without an ID", ("reconcile", "show"), 2, "reconcile show needs an ID"),
    Case("reconcile with a non-numeric ID", ("reconcile", "show", "one"), 2, "invalid int value"),
    # -- merges and proposals ---------------------------------------------------------------------
    Case(
        "a merge asked together with a file hash",
        (
            "patch",
            "CLAUDE.md#testing",
            "--expect-rev",
            "1",
            "--merge",
            "--expect-file-hash",
            "sha256:" + "0" * 64,
            "--body-file",
            "-",
        ),
        2,
        "--merge and --expect-file-hash ask for opposite things",
        stdin=b"- x\n",
    ),
    Case(
        "a merge from a rev whose body is not kept",
        ("patch", "CLAUDE.md#testing", "--expect-rev", "5", "--merge", "--body-file", "-"),
        3,
        "the body at rev 5 is not kept",
        _stale_testing,
        stdin=b"- x\n",
    ),
    Case("show of an unknown proposal", ("proposals", "show", "9"), 2, "there is no proposal 9"),
    Case(
        "apply of an unknown proposal",
        ("proposals", "apply", "9", "--expect-rev", "1"),
        2,
        "no proposal 9",
    ),
    Case(
        "apply without a rev",
        ("proposals", "apply", "1"),
        2,
        "proposals apply needs --expect-rev N",
    ),
    Case("drop without an ID", ("proposals", "drop"), 2, "proposals drop needs an ID"),
    Case("proposals list with an ID", ("proposals", "list", "3"), 2, "takes no ID"),
    Case(
        "a drop with a rev",
        ("proposals", "drop", "1", "--expect-rev", "2"),
        2,
        "takes no --expect-rev",
    ),
    Case("a proposal with a non-numeric ID", ("proposals", "show", "one"), 2, "invalid int value"),
    Case("an unknown proposals action", ("proposals", "merge", "1"), 2, "invalid choice"),
    # -- claims -----------------------------------------------------------------------------------
    Case("renew of an unknown claim", ("renew", "c99"), 2, "no claim 'c99' — list the live ones"),
    Case("release of an unknown claim", ("release", "c99"), 2, "no claim 'c99'"),
    Case(
        "release of another agent's claim",
        ("release", "c1"),
        4,
        "claim c1 is held by agent-b, not agent-a — only its holder may renew or release it",
        _claimed("agent-b"),
    ),
    Case(
        "renew of another agent's claim",
        ("renew", "c1"),
        4,
        "claim c1 is held by agent-b, not agent-a",
        _claimed("agent-b"),
    ),
    Case(
        "renew of a released claim",
        ("renew", "c1"),
        2,
        "claim c1 was released at",
        _claimed("agent-a", then="release"),
    ),
    Case(
        "renew with a zero ttl",
        ("renew", "c1", "--ttl", "0"),
        2,
        "ttl must be a positive number of seconds, not 0.0",
        _claimed("agent-a"),
    ),
    Case("claim above the root", ("claim", "../x"), 2, "../x: path is outside the memory root"),
    Case(
        "claim of an absolute path", ("claim", "/etc"), 2, "/etc: path is outside the memory root"
    ),
    Case("claim with a negative ttl", ("claim", "CLAUDE.md", "--ttl", "-5"), 2, "not -5.0"),
    Case("claim with a zero ttl", ("claim", "CLAUDE.md", "--ttl", "0"), 2, "not 0.0 — pass --ttl"),
    Case("claim with a NaN ttl", ("claim", "CLAUDE.md", "--ttl", "nan"), 2, "not nan — pass --ttl"),
    Case("claim with a ttl of words", ("claim", "x", "--ttl", "soon"), 2, "invalid float value"),
    Case("claim in a bogus mode", ("claim", "x", "--mode", "bogus"), 2, "invalid choice: 'bogus'"),
    Case(
        "claim with a negative wait",
        ("claim", "CLAUDE.md", "--wait", "-1"),
        2,
        "--wait must be a number of seconds, not -1.0",
    ),
    Case("claim without a target", ("claim",), 2, "the following arguments are required: TARGET"),
    Case("claim of an unknown section", ("claim", "CLAUDE.md#nope"), 2, "no section 'nope'"),
    Case("claim with a wordy priority", ("claim", "x", "--priority", "x"), 2, "invalid int value"),
    Case(
        "patch under an unknown claim",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--claim", "c77", "--body-file", "-"),
        4,
        "claim c77 is not a live claim",
        stdin=b"x\n",
    ),
    Case(
        "patch under another agent's claim",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--claim", "c1", "--body-file", "-"),
        4,
        "claim c1 belongs to agent-b, not agent-a — write under your own",
        _claimed("agent-b"),
        stdin=b"x\n",
    ),
    Case(
        "patch under a read claim",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--claim", "c1", "--body-file", "-"),
        4,
        "claim c1 is a read claim",
        _claimed("agent-a", "--mode", "read"),
        stdin=b"x\n",
    ),
    Case(
        "patch outside its claim",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--claim", "c1", "--body-file", "-"),
        4,
        "claim c1 does not cover CLAUDE.md#inventory-service/build",
        _claimed("agent-a", target="AGENTS.md"),
        stdin=b"x\n",
    ),
    # -- emit, watch, hooks, check, init, events -----------------------------------------------
    Case("emit of data that is not JSON", ("emit", "t.done", "--data", "{"), 2, "not valid JSON"),
    Case("emit of a JSON list", ("emit", "t.done", "--data", "[1]"), 2, "not an array"),
    Case("emit of NaN", ("emit", "t.done", "--data", '{"x": NaN}'), 2, "NaN is not JSON"),
    Case(
        "emit of memkeeper's own event type",
        ("emit", "section.patched"),
        2,
        "section.* events are memkeeper's own and cannot be emitted",
    ),
    Case("emit of a malformed type", ("emit", "Bad Type!"), 2, "event type 'Bad Type!': use"),
    Case("hook of an unknown kind", ("hook", "bogus"), 2, "invalid choice: 'bogus'"),
    Case(
        "watch with a negative debounce",
        ("watch", "--debounce-ms", "-1"),
        2,
        "'-1' is not a whole number of milliseconds",
    ),
    Case(
        "install-hooks outside a git repository",
        ("install-hooks",),
        2,
        "not a git repository — run git init",
        _no_git,
        peers=("git",),
    ),
    Case(
        "check --full with --staged: git's index is always read",
        ("check", "--staged", "--full"),
        2,
        "--staged and --push judge what git holds, which is always read — leave --full out",
    ),
    Case(
        "check --staged outside a git repository",
        ("check", "--staged"),
        2,
        "not a git repository — --staged judges what git would commit",
        _no_git,
        peers=("git",),
    ),
    Case(
        "a preset name that climbs out of the presets",
        ("init", "--preset", "../../etc/passwd"),
        2,
        "unknown preset '../../etc/passwd'",
        _no_policy,
    ),
    Case("events since a word", ("events", "--since", "x"), 2, "invalid int value: 'x'"),
    Case("sections above the root", ("sections", "../x.md"), 2, "outside the memory root"),
    Case("read of an empty path", ("read", ""), 2, "empty path — name a file"),
    # numbers past 64 bits (they reached SQLite as internal errors), NUL characters, sizes
    *(
        Case(f"{' '.join(args[:2])} past 64 bits", args, 2, f"{BIG} is not a whole number")
        for args in [
            ("events", "--since", BIG),
            ("claim", "x", "--priority", BIG),
            ("reconcile", "show", BIG),
            ("proposals", "show", BIG),
            ("proposals", "apply", "1", "--expect-rev", BIG),
            ("patch", "CLAUDE.md#build", "--expect-rev", BIG, "--body-file", "-"),
        ]
    ),
    Case("a negative since", ("events", "--since", "-1"), 2, "-1 is not a whole number"),
    Case("compact with no bound", ("compact",), 2, "the policy keeps every event"),
    Case(
        "a bound of no events",
        ("compact",),
        2,
        "events.keep must be a whole number (1 or more), not 0",
        _write(".memkeeper.yaml", b"version: 1\nfiles: []\nevents: {keep: 0}\n"),
    ),
    Case("verify --full with a value", ("verify", "--full=yes"), 2, "ignored explicit argument"),
    Case("a NUL in a path", ("read", "CLAUDE.md\x00x"), 2, "cannot contain a NUL"),
    Case("a NUL in a claim target", ("claim", "src/\x00x"), 2, "NUL character"),
    Case("a 2,000-character target", ("claim", "x" * 2000), 2, "is 2,000 characters"),
    Case(
        "a 10 MB objective",
        ("claim", "x", "--objective", "o" * 10_000_000),
        2,
        "the objective is 10,000,000 characters long",
    ),
    Case(
        "a 2 MB section body",
        ("patch", "CLAUDE.md#build", "--expect-rev", "1", "--body-file", "-"),
        2,
        "the body is 2,097,152 bytes",
        stdin=b"x" * 2 * 1024 * 1024,
    ),
    Case(
        "a 2 MB entry",
        ("append", DECISIONS, "--entry-file", "-"),
        2,
        "the entry is 2,097,152 bytes",
        stdin=b"x" * 2 * 1024 * 1024,
    ),
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.name, marks=[pytest.mark.peer(*c.peers)] if c.peers else [])
        for c in CASES
    ],
)
def test_bad_input_is_refused_and_changes_nothing(case: Case, sample: Path) -> None:
    case.setup(sample)
    before = tree_bytes(sample)
    done = run_main(sample, *case.args, "--json", "--agent", "agent-a", stdin=case.stdin)
    assert done.code == case.code, done.stdout + done.stderr
    payload = done.json
    assert payload["status"] == {2: "invalid", 3: "conflict", 4: "refused"}[case.code]
    assert case.needle in payload["message"], payload["message"]
    assert tree_bytes(sample) == before


def test_the_catalogue_is_big_enough_and_names_each_case_once() -> None:
    assert len(CASES) >= 40
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("redis://127.0.0.1:6379/team", "the only shared store is etcd"),
        ("etcd://127.0.0.1:2379", "names no PREFIX"),
        ("etcd://127.0.0.1/team", "is not HOST:PORT"),
        ("etcd://127.0.0.1:2379/te am", "may hold letters"),
    ],
)
def test_a_store_setting_memkeeper_cannot_use_is_refused_and_creates_nothing(
    sample: Path, setting: str, says: str
) -> None:
    """Reference §12: a MEMKEEPER_STORE or ``store:`` that names no etcd store is refused with
    what is wrong, never ignored (agents would believe they share revisions and claims)."""
    for args in (("status", "--json"), ("read", "CLAUDE.md#build", "--json"), ("init", "--json")):
        done = run_main(sample, *args, env={"MEMKEEPER_STORE": setting})
        assert done.code == 2, args
        assert "MEMKEEPER_STORE" in done.json["message"]
        assert says in done.json["message"]
    assert not (sample / ".memkeeper").exists()  # nothing was created
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + f"store: {setting}\n")
    done = run_main(sample, "status", "--json")
    assert done.code == 2
    assert says in done.json["message"]
    assert not (sample / ".memkeeper").exists()


def test_the_policy_store_key_must_be_one_plain_line(sample: Path) -> None:
    policy = sample / ".memkeeper.yaml"
    policy.write_text(policy.read_text() + "store:\n  etcd://127.0.0.1:2379/team\n")
    done = run_main(sample, "status", "--json")
    assert done.code == 2
    assert "on one line" in done.json["message"]
    assert done.json["line"] == policy.read_text().count("\n")


def test_status_names_the_store_in_use(sample: Path) -> None:
    done = run_main(sample, "status", "--json")
    assert done.json["store"] == {"kind": "sqlite", "path": ".memkeeper/state.db"}
    assert "store: sqlite (.memkeeper/state.db)" in run_main(sample, "status").stdout

"""Bad input: each case gets the contract's exit code, a message naming what and where,
and leaves every file byte-for-byte as it was."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_cli, tree_bytes
from diff_match_patch import diff_match_patch

pytestmark = pytest.mark.e2e

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
    done = run_cli(
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


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    code: int
    needle: str
    setup: Setup = _nothing
    stdin: bytes | None = None


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
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_refused_and_changes_nothing(case: Case, sample: Path) -> None:
    case.setup(sample)
    before = tree_bytes(sample)
    done = run_cli(sample, *case.args, "--json", "--agent", "agent-a", stdin=case.stdin)
    assert done.code == case.code, done.stdout + done.stderr
    payload = done.json
    assert payload["status"] == {2: "invalid", 3: "conflict", 4: "refused"}[case.code]
    assert case.needle in payload["message"], payload["message"]
    assert tree_bytes(sample) == before


def test_the_catalogue_is_big_enough() -> None:
    assert len(CASES) >= 20

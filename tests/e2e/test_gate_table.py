"""The gate's boundary, through the real ``memkeeper hook claude-code``: a table of Claude
Code PreToolUse payloads — symlinked memory files, sessions started outside the repository,
commands that delete or restore over managed files, and the write forms that need no
variable to name their target — and the decision each one gets.

Two committed copies of the sample repository are shared by the rows (the hook only reads):
``clean`` (a change to an unmanaged file only) and ``dirty`` (CLAUDE.md changed, a decision
appended and staged, an untracked memory file). In both, AGENTS.md is a symlink to CLAUDE.md
and HISTORY.md one to memory/decisions.md, as teams commonly set them up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.conftest import SAMPLE_REPO, run_cli

Expect = Literal["silent", "deny", "allow", "ask"]
IDENTITY = {
    "GIT_AUTHOR_NAME": "Tess",
    "GIT_AUTHOR_EMAIL": "tess@example.com",
    "GIT_COMMITTER_NAME": "Tess",
    "GIT_COMMITTER_EMAIL": "tess@example.com",
}
COMMIT_MESSAGE = "git commit -m \"$(cat <<'EOF'\nDon't echo x > CLAUDE.md\nEOF\n)\""


@dataclass(frozen=True)
class Case:
    name: str
    tool: str
    tool_input: dict[str, Any]
    expect: Expect
    says: tuple[str, ...] = ()
    repo: Literal["clean", "dirty"] = "dirty"
    cwd: str = ""  # relative to the root; ".." is the directory holding the repository


def bash(command: str) -> dict[str, Any]:
    return {"command": command, "description": "run it"}


def write(path: str, content: str = "# Replaced\n") -> dict[str, Any]:
    return {"file_path": path, "content": content}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}


STASH_INSTEAD = "git stash push -- . ':!CLAUDE.md' ':!memory/decisions.md'"
CASES = [
    # -- a symlink is judged as the file it reaches ---------------------------------------
    Case(
        "write through AGENTS.md -> CLAUDE.md",
        "Write",
        write("AGENTS.md"),
        "deny",
        ("AGENTS.md (a symlink to CLAUDE.md) is section-owned", "memkeeper sections CLAUDE.md"),
    ),
    Case(
        "edit history through a symlink",
        "Edit",
        edit("HISTORY.md", "Use SQLite", "Use Postgres"),
        "deny",
        ("HISTORY.md (a symlink to memory/decisions.md) is append-only", "changes line 7"),
    ),
    Case(
        "write through a symlink relative to a subdirectory cwd",
        "Write",
        write("../AGENTS.md"),
        "deny",
        ("../AGENTS.md (a symlink to ../CLAUDE.md)", "memkeeper sections ../CLAUDE.md"),
        cwd="memory",
    ),
    Case(
        "bash appends through a symlink",
        "Bash",
        bash("echo '- more' >> AGENTS.md"),
        "deny",
        ("AGENTS.md (a symlink to CLAUDE.md)", "`>>` would add to its last section"),
    ),
    Case("rm of the symlink only", "Bash", bash("rm AGENTS.md"), "silent"),
    Case("write through a symlink leading out", "Write", write("ELSEWHERE.md"), "silent"),
    Case(
        "edit a section through a symlink",
        "Edit",
        edit("AGENTS.md", "make build", "make"),
        "silent",
    ),
    # -- the root is found from the target, not from the session's cwd --------------------
    Case(
        "write from a parent directory",
        "Write",
        write("repo/memory/decisions.md"),
        "deny",
        (
            "memory/decisions.md is append-only history",
            "memkeeper append memory/decisions.md",
            "--root ",
        ),
        cwd="..",
    ),
    Case(
        "bash from a parent directory",
        "Bash",
        bash("echo x >> repo/memory/decisions.md"),
        "deny",
        ("memory/decisions.md is append-only", "--root "),
        cwd="..",
    ),
    Case(
        "cd into the repository from a parent directory",
        "Bash",
        bash("cd repo && sed -i 's/make/gmake/' CLAUDE.md"),
        "deny",
        ("CLAUDE.md is section-owned", "`sed -i`"),
        cwd="..",
    ),
    Case(
        "git -C the repository from a parent directory",
        "Bash",
        bash("git -C repo stash"),
        "deny",
        ("`git stash` would discard the uncommitted changes", "CLAUDE.md (section-owned)"),
        cwd="..",
    ),
    Case("a file beside the repository", "Write", write("notes.md"), "silent", cwd=".."),
    # -- deleting, moving away and restoring over managed files ---------------------------
    Case(
        "git checkout -- . over changed memory",
        "Bash",
        bash("git checkout -- ."),
        "deny",
        (
            "`git checkout` would discard the uncommitted changes to managed memory files: "
            "CLAUDE.md (section-owned)",
            "git checkout -- . ':!CLAUDE.md'",
        ),
    ),
    Case(
        "git restore . over changed memory",
        "Bash",
        bash("git restore ."),
        "deny",
        ("CLAUDE.md (section-owned)", "git restore -- . ':!CLAUDE.md'"),
    ),
    Case(
        "git stash with changed memory",
        "Bash",
        bash("git stash"),
        "deny",
        (
            "CLAUDE.md (section-owned), memory/decisions.md (append-only history)",
            STASH_INSTEAD,
            "git add CLAUDE.md memory/decisions.md && git commit",
        ),
    ),
    Case(
        "git stash -u takes untracked memory too",
        "Bash",
        bash("git stash -u"),
        "deny",
        ("memory/new.md (section-owned)",),
    ),
    Case(
        "git reset --hard with changed memory",
        "Bash",
        bash("git status && git reset --hard"),
        "deny",
        (
            "`git reset --hard` would discard",
            "memory/decisions.md (append-only history)",
            "git restore --source=HEAD --staged --worktree -- . ':!CLAUDE.md'",
        ),
    ),
    Case(
        "git clean deletes untracked memory",
        "Bash",
        bash("git clean -fd"),
        "deny",
        ("delete managed memory files that git does not track: memory/new.md",),
    ),
    Case(
        "git checkout -- a managed file",
        "Bash",
        bash("git checkout -- CLAUDE.md"),
        "deny",
        ("git show HEAD:CLAUDE.md",),
    ),
    Case(
        "rm of history",
        "Bash",
        bash("rm memory/decisions.md"),
        "deny",
        (
            "memory/decisions.md is append-only history: `rm` would delete it",
            "memkeeper append memory/decisions.md --text",
        ),
    ),
    Case(
        "rm -rf of the memory directory",
        "Bash",
        bash("rm -rf memory"),
        "deny",
        ("`rm -r` would delete or move away managed memory files", "memory/decisions.md"),
    ),
    Case(
        "mv history away",
        "Bash",
        bash("mv memory/decisions.md /tmp/old-decisions.md"),
        "deny",
        ("`mv` would move it, and every entry in it, away from the path memkeeper manages",),
    ),
    Case(
        "find -delete of memory files",
        "Bash",
        bash("find memory -name '*.md' -delete"),
        "deny",
        ("`find -delete`", "memory/risks.md (append-only history)"),
    ),
    Case(
        "the stash a denial suggests",
        "Bash",
        bash(STASH_INSTEAD),
        "silent",
    ),
    Case("git checkout -- an unmanaged directory", "Bash", bash("git checkout -- src"), "silent"),
    Case("git stash, only unmanaged changes", "Bash", bash("git stash"), "silent", repo="clean"),
    Case(
        "git checkout -- ., memory clean", "Bash", bash("git checkout -- ."), "silent", repo="clean"
    ),
    Case("git restore ., memory clean", "Bash", bash("git restore ."), "silent", repo="clean"),
    Case("git restore --staged only", "Bash", bash("git restore --staged ."), "silent"),
    Case(
        "git reset --hard, memory clean", "Bash", bash("git reset --hard"), "silent", repo="clean"
    ),
    Case("git clean -fdx, memory clean", "Bash", bash("git clean -fdx"), "silent", repo="clean"),
    Case("rm of an unmanaged file", "Bash", bash("rm -f src/inventory/db.py"), "silent"),
    Case("git stash list", "Bash", bash("git stash list && git status"), "silent"),
    # -- write forms that name their target without a variable ----------------------------
    Case(
        "sort -o over a managed file",
        "Bash",
        bash("sort -o CLAUDE.md CLAUDE.md"),
        "deny",
        ("`sort -o` would rewrite it",),
    ),
    Case(
        "awk -i inplace over history",
        "Bash",
        bash("awk -i inplace '{print}' memory/decisions.md"),
        "deny",
        ("`awk -i inplace` would rewrite its history",),
    ),
    Case("sort into another file", "Bash", bash("sort CLAUDE.md > /tmp/sorted.md"), "silent"),
    Case("awk reading history", "Bash", bash("awk '/SQLite/' memory/decisions.md"), "silent"),
    Case(
        "find -exec sed -i reaching CLAUDE.md",
        "Bash",
        bash("find . -name CLAUDE.md -exec sed -i 's/make/gmake/' {} \\;"),
        "deny",
        ("`find -exec sed -i` would rewrite managed memory files", "CLAUDE.md (section-owned)"),
    ),
    Case(
        "find -exec sed -i on Python files",
        "Bash",
        bash("find . -name '*.py' -exec sed -i 's/a/b/' {} +"),
        "silent",
    ),
    Case(
        "ln -sf over a managed file",
        "Bash",
        bash("ln -sf /tmp/other.md CLAUDE.md"),
        "deny",
        ("`ln -sf` would rewrite it",),
    ),
    Case("ln -s without -f", "Bash", bash("ln -s CLAUDE.md LINK.md"), "silent"),
    Case(
        "patch FILE < DIFF",
        "Bash",
        bash("patch CLAUDE.md < /tmp/fix.diff"),
        "deny",
        ("`patch` would rewrite it",),
    ),
    Case(
        "pushd into memory, then append",
        "Bash",
        bash("pushd memory && echo x >> decisions.md && popd"),
        "deny",
        ("memory/decisions.md is append-only",),
    ),
    Case(
        "popd back before the append",
        "Bash",
        bash("pushd memory; popd; echo x >> decisions.md"),
        "silent",
    ),
    Case(
        "a subshell's cd ends with it",
        "Bash",
        bash("(cd memory && ls) && echo x >> decisions.md"),
        "silent",
    ),
    Case(
        "prettier --write of a managed file",
        "Bash",
        bash("prettier --write CLAUDE.md"),
        "deny",
        ("`prettier --write` would rewrite it",),
    ),
    Case(
        "npx prettier -w of the whole tree",
        "Bash",
        bash("npx prettier -w ."),
        "deny",
        ("`prettier --write` would rewrite managed memory files", "memory/architecture.md"),
    ),
    Case("prettier --check", "Bash", bash("npx prettier --check ."), "silent"),
    Case(
        "mdformat of the memory directory",
        "Bash",
        bash("mdformat memory"),
        "deny",
        ("`mdformat` would rewrite managed memory files",),
    ),
    Case(
        "a redirection inside $( )",
        "Bash",
        bash('echo "done: $(date > CLAUDE.md)"'),
        "deny",
        ("CLAUDE.md is section-owned: `>` would rewrite it",),
    ),
    Case("a read inside $( )", "Bash", bash('echo "$(cat CLAUDE.md)" | wc -l'), "silent"),
    Case(
        "curl -o over a managed file",
        "Bash",
        bash("curl -fsSLo CLAUDE.md https://example.com/x.md"),
        "deny",
        ("`curl -o`",),
    ),
    Case(
        "eval of a plain string",
        "Bash",
        bash("eval 'echo x >> memory/decisions.md'"),
        "deny",
        ("memory/decisions.md is append-only",),
    ),
    # -- text that only looks like a write ------------------------------------------------
    Case(
        "a here-document body",
        "Bash",
        bash("cat > /tmp/script.sh <<'EOF'\necho x >> memory/decisions.md\nrm CLAUDE.md\nEOF"),
        "silent",
    ),
    Case("a commit message", "Bash", bash(COMMIT_MESSAGE), "silent"),
    Case(
        "a commit message, then a real write",
        "Bash",
        bash(COMMIT_MESSAGE + " && echo x >> memory/decisions.md"),
        "deny",
        ("memory/decisions.md is append-only",),
    ),
    # -- what the gate cannot see ---------------------------------------------------------
    Case("a variable", "Bash", bash('F=CLAUDE.md; echo x >> "$F"'), "silent"),
    Case("a script", "Bash", bash("./scripts/rewrite.sh CLAUDE.md"), "silent"),
    Case("patch naming no file", "Bash", bash("patch -p1 < /tmp/fix.diff"), "silent"),
]


def make_repo(base: Path, *, dirty: bool) -> Path:
    root = base / "repo"
    shutil.copytree(SAMPLE_REPO, root)
    (root / "AGENTS.md").unlink()
    (root / "AGENTS.md").symlink_to("CLAUDE.md")
    (root / "HISTORY.md").symlink_to("memory/decisions.md")
    (root / "ELSEWHERE.md").symlink_to(base / "outside.md")
    (base / "outside.md").write_text("# Outside\n")
    git(root, "init", "-q")
    assert run_cli(root, "init").code == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    db = root / "src" / "inventory" / "db.py"
    db.write_text(db.read_text() + "# changed\n")
    if dirty:
        claude = root / "CLAUDE.md"
        claude.write_text(claude.read_text().replace("make build", "make wheel"))
        decisions = root / "memory" / "decisions.md"
        decisions.write_text(decisions.read_text() + "\n## 2026-12-01\n\nMore.\n")
        git(root, "add", "memory/decisions.md")
        (root / "memory" / "new.md").write_text("# New\n")
    return root


def git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MEMKEEPER_"))}
    subprocess.run(["git", *args], cwd=root, env={**env, **IDENTITY}, check=True)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        name: make_repo(tmp_path_factory.mktemp(name), dirty=name == "dirty")
        for name in ("clean", "dirty")
    }


def answer(root: Path, case: Case) -> dict[str, Any] | None:
    payload = {
        "session_id": "s1",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": os.path.normpath(root / case.cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": case.tool,
        "tool_input": case.tool_input,
        "tool_use_id": "toolu_01",
    }
    done = run_cli(root, "hook", "claude-code", stdin=json.dumps(payload), cwd=root.parent)
    assert (done.code, done.stderr) == (0, ""), done.stderr
    return json.loads(done.stdout) if done.stdout else None


def test_the_table_covers_every_form_both_ways() -> None:
    bash_cases = [c for c in CASES if c.tool == "Bash"]
    assert {c.expect for c in bash_cases} == {"silent", "deny"}
    assert {c.repo for c in CASES} == {"clean", "dirty"}
    assert any(c.cwd == ".." for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_call_gets_its_decision_from_the_hook(repos: dict[str, Path], case: Case) -> None:
    root = repos[case.repo]
    before = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True)
    got = answer(root, case)
    if case.expect == "silent":
        assert got is None, got
    else:
        assert got is not None
        out = got["hookSpecificOutput"]
        # a notice ("allow" with words) adds context for the model and decides no permission
        assert out.get("permissionDecision", "allow") == case.expect, out
        assert ("permissionDecision" in out) == (case.expect != "allow"), out
        for text in case.says:
            said = out.get("permissionDecisionReason", out.get("additionalContext", ""))
            assert text in said, said
    after = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True)
    assert after.stdout == before.stdout  # the gate changed nothing it judged


def test_the_repositories_are_what_the_rows_assume(repos: dict[str, Path]) -> None:
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repos["dirty"], capture_output=True, text=True
    ).stdout.splitlines()
    assert sorted(status) == sorted(
        [" M CLAUDE.md", "M  memory/decisions.md", "?? memory/new.md", " M src/inventory/db.py"]
    )
    assert (repos["clean"] / "AGENTS.md").is_symlink()

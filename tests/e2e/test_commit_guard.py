"""Claims guard commits and pushes (issue 25 item 4), end to end: real ``git commit`` and
``git push`` to a local bare remote through the hooks ``install-hooks`` wrote, with the
claimer and the committer told apart as agents' sessions are (``CODEX_THREAD_ID``,
``CLAUDE_CODE_SESSION_ID``, or neither: ``human``), on SQLite and on a real etcd."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)
IDENTITY = {
    "GIT_AUTHOR_NAME": "Tess",
    "GIT_AUTHOR_EMAIL": "tess@example.com",
    "GIT_COMMITTER_NAME": "Tess",
    "GIT_COMMITTER_EMAIL": "tess@example.com",
}
CODEX = {"CODEX_THREAD_ID": "thread-1"}  # the claimer
CLAUDE = {"CLAUDE_CODE_SESSION_ID": "session-1"}  # the committer


class Project:
    """The sample under memkeeper with its hooks, a baseline pushed to a bare remote."""

    def __init__(self, root: Path, store: dict[str, str]) -> None:
        self.root, self.store = root, store

    def run(
        self, *argv: str, who: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MEMKEEPER_", "GIT_", "CLAUDE_CODE_", "CODEX_"))
        }
        env.update({**IDENTITY, **self.store, **(who or {})})
        return subprocess.run(
            argv, cwd=self.root, env=env, capture_output=True, text=True, check=False
        )

    def memkeeper(self, *args: str, who: dict[str, str] | None = None) -> str:
        done = self.run(MEMKEEPER, *args, who=who)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def claim(self, *args: str, who: dict[str, str]) -> str:
        """The id of the claim granted."""
        out = self.memkeeper("claim", *args, "--ttl", "600", who=who)
        return out.split()[1]

    def git(
        self, *args: str, who: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.run("git", *args, who=who)

    def commit(self, rel: str, who: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
        with open(self.root / rel, "a", encoding="utf-8") as handle:
            handle.write("\nOne more line.\n")
        assert self.git("add", rel).returncode == 0
        return self.git("commit", "-q", "-m", f"change {rel}", who=who)

    def commits(self) -> int:
        return int(self.git("rev-list", "--count", "HEAD").stdout)

    def remote_head(self) -> str:
        return self.git("rev-parse", "origin/main").stdout.strip()


@pytest.fixture(params=STORES)
def project(request: pytest.FixtureRequest, sample: Path, tmp_path: Path) -> Project:
    store: dict[str, str] = {}
    if request.param == "etcd":
        cluster: Cluster = request.getfixturevalue("cluster")
        store = cluster.store_env(f"guard{next(_prefixes)}")
    return set_up(Project(sample, store), tmp_path)


@pytest.fixture
def local(sample: Path, tmp_path: Path) -> Project:
    """The project on SQLite alone, for what is about git and the hooks, not the store."""
    return set_up(Project(sample, {}), tmp_path)


def set_up(p: Project, tmp_path: Path) -> Project:
    (p.root / ".gitignore").write_text("memory/scratch/\n")
    p.memkeeper("init")
    p.memkeeper("regen")
    assert "git pre-push hook installed" in p.memkeeper("install-hooks")
    assert p.git("add", "-A").returncode == 0
    assert p.git("commit", "-q", "-m", "baseline").returncode == 0
    bare = tmp_path / "remote.git"
    assert p.git("init", "-q", "--bare", str(bare)).returncode == 0
    assert p.git("remote", "add", "origin", str(bare)).returncode == 0
    pushed = p.git("push", "-q", "-u", "origin", "HEAD:main")
    assert pushed.returncode == 0, pushed.stderr
    return p


def test_another_agents_strict_claim_refuses_the_commit_and_the_push_until_released(
    project: Project,
) -> None:
    claim = project.claim("CLAUDE.md", "--strict", "--objective", "rewrite the build", who=CODEX)
    before = project.commits()
    refused = project.commit("CLAUDE.md", CLAUDE)
    assert refused.returncode != 0
    said = refused.stderr
    assert (
        "CLAUDE.md: [claimed] this commit changes CLAUDE.md, under codex:thread-1's strict "
        f"write claim {claim} on CLAUDE.md until" in said
    )
    assert "memkeeper claim CLAUDE.md --wait" in said
    assert f"memkeeper request-release {claim}" in said
    assert project.commits() == before
    # --no-verify skips the pre-commit hook: the pre-push hook still stands in the way
    assert project.git("commit", "-q", "--no-verify", "-m", "sneak", who=CLAUDE).returncode == 0
    remote = project.remote_head()
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CLAUDE)
    assert pushed.returncode != 0
    assert (
        f"the push carries changes to CLAUDE.md, under codex:thread-1's strict write claim {claim}"
        in pushed.stderr
    )
    assert project.remote_head() == remote
    # a human is another identity too
    assert project.git("push", "-q", "origin", "HEAD:main").returncode != 0
    project.memkeeper("release", claim, who=CODEX)
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CLAUDE)
    assert pushed.returncode == 0, pushed.stderr
    assert project.remote_head() == project.git("rev-parse", "HEAD").stdout.strip()
    done = project.commit("CLAUDE.md", CLAUDE)
    assert done.returncode == 0, done.stderr


def test_an_advisory_claim_warns_and_the_commit_and_push_land(project: Project) -> None:
    claim = project.claim("docs/", who=CODEX)
    done = project.commit("docs/runbook.md", CLAUDE)
    assert done.returncode == 0, done.stderr
    assert (
        "memkeeper: warning: this commit changes docs/runbook.md, under codex:thread-1's "
        f"write claim {claim}" in done.stderr
    )
    assert "advisory, so it goes ahead" in done.stderr
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CLAUDE)
    assert pushed.returncode == 0, pushed.stderr
    assert "memkeeper: warning: the push carries changes to docs/runbook.md" in pushed.stderr


def test_the_claimers_own_commit_and_push_pass(project: Project) -> None:
    project.claim("CLAUDE.md", "--strict", who=CODEX)
    done = project.commit("CLAUDE.md", CODEX)
    assert done.returncode == 0, done.stderr
    assert "claimed" not in done.stderr
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CODEX)
    assert pushed.returncode == 0, pushed.stderr


def test_a_new_branch_is_judged_by_the_commits_no_remote_ref_holds(project: Project) -> None:
    project.claim("src/", "--strict", who=CODEX)
    assert project.git("checkout", "-q", "-b", "topic").returncode == 0
    assert project.commit("README.md", CLAUDE).returncode == 0
    pushed = project.git("push", "-q", "origin", "topic", who=CLAUDE)
    assert pushed.returncode == 0, pushed.stderr  # src/ is in the baseline main holds
    (project.root / "src" / "new.py").write_text("x = 1\n")
    assert project.git("add", "-A").returncode == 0
    assert project.git("commit", "-q", "--no-verify", "-m", "src", who=CLAUDE).returncode == 0
    assert project.git("checkout", "-q", "-b", "other").returncode == 0
    pushed = project.git("push", "-q", "origin", "other", who=CLAUDE)
    assert pushed.returncode != 0
    assert "the push carries changes to src/new.py" in pushed.stderr


def test_a_shared_store_that_does_not_answer_lets_the_commit_through_and_says_so(
    local: Project,
) -> None:
    project = local
    project.store = {"MEMKEEPER_STORE": "etcd://127.0.0.1:9/down"}  # nothing listens on 9
    done = project.commit("CLAUDE.md", CLAUDE)
    assert done.returncode == 0, done.stderr
    assert "memkeeper: warning: claims not checked: the shared store does not answer" in done.stderr
    assert "warning: reconciliations not checked: the shared store does not answer" in done.stderr


def test_a_users_pre_push_hook_is_kept_handed_gits_input_and_run_first(local: Project) -> None:
    project = local
    hooks = project.root / ".git" / "hooks"
    for name in ("pre-push", "pre-push.legacy"):
        (hooks / name).unlink(missing_ok=True)
    theirs = '#!/bin/sh\necho "$1" >> ../pushed.txt\ncat >> ../pushed.txt\n'
    (hooks / "pre-push").write_text(theirs)
    (hooks / "pre-push").chmod(0o755)
    assert "moved the existing hook to" in project.memkeeper("install-hooks")
    assert (hooks / "pre-push.legacy").read_text() == theirs
    claim = project.claim("CLAUDE.md", "--strict", who=CODEX)
    assert (
        project.git("commit", "-q", "--no-verify", "--allow-empty", "-m", "empty").returncode == 0
    )
    project.commit("README.md", CLAUDE)
    assert project.git("commit", "-qam", "x", "--allow-empty", "--no-verify").returncode == 0
    with open(project.root / "CLAUDE.md", "a", encoding="utf-8") as handle:
        handle.write("\nclaimed\n")
    assert project.git("commit", "-qam", "claimed", "--no-verify", who=CLAUDE).returncode == 0
    head = project.git("rev-parse", "HEAD").stdout.strip()
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CLAUDE)
    assert pushed.returncode != 0
    assert f"claim {claim}" in pushed.stderr
    seen = (project.root.parent / "pushed.txt").read_text()
    assert seen.startswith(f"origin\nHEAD {head} refs/heads/main ")
    (hooks / "pre-push.legacy").write_text("#!/bin/sh\necho 'theirs says no' >&2\nexit 3\n")
    project.memkeeper("release", claim, who=CODEX)
    pushed = project.git("push", "-q", "origin", "HEAD:main", who=CLAUDE)
    assert pushed.returncode != 0
    assert "theirs says no" in pushed.stderr
    project.memkeeper("uninstall-hooks")
    assert not (hooks / "pre-push.legacy").exists()
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho 'theirs says no' >&2\nexit 3\n"


def test_a_commit_in_a_linked_worktree_is_guarded_by_the_roots_claims(local: Project) -> None:
    project = local
    linked = project.root.parent / "linked"
    assert project.git("worktree", "add", "-q", "-b", "side", str(linked)).returncode == 0
    claim = project.claim("CLAUDE.md", "--strict", who=CODEX)
    with open(linked / "CLAUDE.md", "a", encoding="utf-8") as handle:
        handle.write("\nfrom the linked worktree\n")
    other = Project(linked, project.store)
    assert other.git("add", "CLAUDE.md").returncode == 0
    refused = other.git("commit", "-q", "-m", "linked", who=CLAUDE)
    assert refused.returncode != 0
    assert f"under codex:thread-1's strict write claim {claim}" in refused.stderr
    assert "ok: " not in refused.stdout
    project.memkeeper("release", claim, who=CODEX)
    done = other.git("commit", "-q", "-m", "linked", who=CLAUDE)
    assert done.returncode == 0, done.stderr

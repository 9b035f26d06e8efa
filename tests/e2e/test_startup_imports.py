"""What a fresh interpreter imports: the start-up cost agents pay on every call. ``read``,
``patch`` and ``hook`` load no parser library and none of the heavy standard library, the
parser loads only the verb group it reads, and the modules on those paths keep their imports
to what they need (docs/architecture.md, "Start-up"). Each check starts its own Python: the
test process has long imported everything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memkeeper.cli.parser import BASE_VERBS, VERB_GROUPS
from memkeeper.fs.agentfiles import AGENTS
from tests.cli.test_parser import EVERY_VERB, MINIMAL
from tests.conftest import MEMKEEPER, SAMPLE_REPO

if TYPE_CHECKING:
    from memkeeper import Memory
    from tests.etcd_cluster import Cluster

# -- the command line: read, patch, hook ----------------------------------------------------

HEAVY = ("markdown_it", "ruamel.yaml", "pathspec", "typing", "dataclasses", "pathlib", "threading")


def test_a_read_of_an_indexed_file_imports_no_parser_and_no_heavy_stdlib(sample: Path) -> None:
    """The start-up idiom pays here: what `read` imports is all it needs (docs/architecture.md)."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    probe = (
        "import sys; from memkeeper.cli.main import main; "
        "code = main(['read', 'CLAUDE.md#build', '--json']); "
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_a_second_patch_imports_no_parser_either(sample: Path) -> None:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    body = sample / "body.md"
    for rev in (1, 2):  # the first patch parses the policy once; its verdicts are cached
        current = json.loads(
            subprocess.run(
                [MEMKEEPER, "read", "CLAUDE.md#build", "--json"],
                cwd=sample, capture_output=True, text=True, check=True,
            ).stdout
        )  # fmt: skip
        body.write_text(current["content"] + f"- step {rev}\n")
        probe = (
            "import sys; from memkeeper.cli.main import main; "
            f"code = main(['patch', 'CLAUDE.md#build', '--expect-rev', '{current['rev']}', "
            f"'--body-file', {str(body)!r}, '--json']); "
            "print(code, sorted(m for m in ('markdown_it', 'ruamel.yaml', 'pathspec') "
            "if m in sys.modules))"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
        )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


# How many of memkeeper's own modules a read of an indexed file and a keyless second patch
# load: every agent's every call pays for each one. 43a09fe, before the store and the Workspace
# had a module per part, loaded 31 and 35; the split and the features since made them 48 and
# 63, and issue 21 brought them to 40 and 53: the store's domains that neither path uses
# (proposals, reconciliations, mail, meetings, work) and who signs events (``ops.signing``) are
# loaded on first use, ``Memory.work`` is a property, and a patch where nobody claims reads no
# claims' clock. Lower a bound when a module leaves a path; raise one only for a module the
# path needs, and say why. Beyond 43a09fe's modules (less cli.parser, fs.synced, gate,
# gate.agents, the store's four table modules, store.netfs and the WAL sync, which a read no
# longer loads), a read loads: the split's parts — the SQLite store's core, schema and netfs,
# its mixins of the domains a read or a patch uses (files, events, claims, pending, reads),
# fs.home, the Workspace's parts (indexing, keptlinks, verdicts, writeahead); the read written
# down for the channel's "changed since you read it" (mail, mail.reads), a write that takes its
# turn at the store's write lock (writeturn, issue 26); the identity from the agent's session
# (identity, identity.sessions); cli.plainwords in place of argparse. A patch, beyond the read's
# modules less mail and mail.reads, and its own (cli.inputs, ops.patch, markdown.lines,
# markdown.patchrules): its body's bound (limits), its crash points (fs.crash), the replace with
# a kept link settled in the background (fs.atomic, fs.background, fs.locks, fs.processes), the
# bases of merges (store.bodies), the log's group commit (store.sqlite.walsync) and its event's
# signature (ops.signing, fs.keyring, identity.signers). Where a claim is stored, a patch also
# loads the claims' clock (claims, claims.epoch, clock).
READ_MODULES, PATCH_MODULES = 40, 53
LOADED_BY = (
    "import sys, io; from memkeeper.cli.main import main; out, sys.stdout = sys.stdout, "
    "io.StringIO(); code = main({argv!r}); sys.stdout = out; "
    "print(code, sum(m.startswith('memkeeper.') for m in sys.modules) + 1, sorted(m for m in "
    "('argparse', 'gettext', 'memkeeper.cli.parser', 'memkeeper.gate', 'memkeeper.coordination',"
    " 'memkeeper.identity.keys', 'base64', 'fnmatch', 'cryptography', 'encodings.ascii') "
    "if m in sys.modules))"
)


def _loaded(sample: Path, argv: list[str], env: dict[str, str]) -> tuple[str, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED_BY.format(argv=argv)],
        cwd=sample, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    code, count, names = done.stdout.strip().splitlines()[-1].split(" ", 2)
    return code, int(count), names


def _keyless(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with no key (whatever keys the runner has)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    return {**env, "XDG_CONFIG_HOME": str(tmp_path / "no-keys"), "MEMKEEPER_AGENT": "a1"}


def test_a_plain_read_loads_no_argparse_and_at_most_its_modules(
    sample: Path, tmp_path: Path
) -> None:
    """No argparse (``cli.plainwords``), no agents' names, no coordination records."""
    env = _keyless(tmp_path)
    subprocess.run([MEMKEEPER, "init"], cwd=sample, env=env, capture_output=True, check=True)
    code, count, names = _loaded(sample, ["read", "CLAUDE.md#build", "--json"], env)
    assert (code, names) == ("0", "[]")
    assert count <= READ_MODULES


def test_a_keyless_second_patch_loads_no_argparse_nor_key_code(
    sample: Path, tmp_path: Path
) -> None:
    """No argparse, and without a key or a signers file neither the key code nor base64."""
    env = _keyless(tmp_path)
    subprocess.run([MEMKEEPER, "init"], cwd=sample, env=env, capture_output=True, check=True)
    body = tmp_path / "body.md"
    for rev in (1, 2):  # the first patch parses the policy once; its verdicts are cached
        body.write_text(f"- step {rev}\n")
        argv = ["patch", "CLAUDE.md#build", "--expect-rev", str(rev), "--body-file", str(body)]
        code, count, names = _loaded(sample, [*argv, "--json"], env)
    assert (code, names) == ("0", "[]")
    assert count <= PATCH_MODULES


def test_read_and_patch_import_no_verb_group(sample: Path) -> None:
    probe = (
        "import sys; from memkeeper.cli.main import main; "
        "from memkeeper.cli.parser import VERB_GROUPS; "
        "main(['read', 'CLAUDE.md#build', '--json']); "
        "print(sorted(m for m in sys.modules if m in VERB_GROUPS or m in "
        "('memkeeper.claims.decisions', 'markdown_it', 'ruamel.yaml', 'pathspec', 'dataclasses')))"
    )
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_hook_call_imports_neither_argparse_nor_typing_nor_a_parser(sample: Path) -> None:
    """Every agent runs `memkeeper hook AGENT` before every tool call (docs/architecture.md)."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    payload = {
        "session_id": "s1",
        "cwd": str(sample),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(sample / "CLAUDE.md"), "content": "x\n"},
    }
    heavy = (
        "argparse",
        "typing",
        "dataclasses",
        "markdown_it",
        "ruamel.yaml",
        "pathspec",
        "threading",
    )
    probe = (
        "import sys, io; from memkeeper.cli.main import main; "
        "code = main(['hook', 'claude-code', '--agent', 'a1']); "
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    for _ in range(2):  # the first call parses the policy once; its verdicts are cached
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=sample,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            check=True,
        )
    lines = done.stdout.strip().splitlines()
    assert '"permissionDecision": "deny"' in lines[0]
    assert lines[-1] == "0 []"


# -- the parser: one verb group at a time -------------------------------------------------

_IMPORTS = """
import json, sys
from memkeeper.cli import parser
groups, out = list(parser.VERB_GROUPS), {}
for words in json.loads(sys.argv[1]):
    for group in groups:
        sys.modules.pop(group, None)
    parser.parse_args(words)
    out[words[0]] = sorted(group for group in groups if group in sys.modules)
print(json.dumps(out))
"""


def test_reading_a_verb_imports_its_group_alone() -> None:
    """`read` and `patch` pay for no group; a group's verb for its own (the start-up idiom)."""
    lines = json.dumps([MINIMAL[verb] for verb in EVERY_VERB])
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS, lines], capture_output=True, text=True, check=True
    )
    imported = json.loads(done.stdout)
    expected: dict[str, list[str]] = {verb: [] for verb in BASE_VERBS}
    for group, verbs in VERB_GROUPS.items():
        expected.update({verb: [group] for verb in verbs})
    assert imported == expected


# -- the modules on those paths ------------------------------------------------------------


def printed(code: str) -> str:
    """What a fresh interpreter running ``code`` prints (stripped); it must exit 0."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_loading_waiters_does_not_load_the_decisions() -> None:
    probe = (
        "import sys, memkeeper.claims.waiters; "
        "print(sorted(m for m in sys.modules if m in "
        "{'memkeeper.claims.decisions', 'memkeeper.claims.targets', 'dataclasses'}))"
    )
    assert printed(probe) == "[]"


def test_lines_import_only_the_standard_library() -> None:
    probe = (
        "import sys, memkeeper.markdown.lines; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'markdown_it', 'mdit_py_plugins', 'dataclasses'}))"
    )
    assert printed(probe) == "[]"


def test_refs_import_neither_the_markdown_parser_nor_dataclasses() -> None:
    heavy = "{'markdown_it', 'dataclasses', 'inspect'}"
    probe = f"import sys, memkeeper.markdown.refs; print(sorted({heavy} & set(sys.modules)))"
    assert printed(probe) == "[]"


def test_an_absent_policy_never_imports_the_yaml_or_glob_libraries() -> None:
    probe = (
        "import sys, memkeeper.policy.loader as loader; loader.parse_policy(None); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'ruamel', 'pathspec'}))"
    )
    assert printed(probe) == "[]"


def test_the_store_errors_load_no_etcd_client() -> None:
    probe = (
        "import sys, memkeeper.store.errors; "
        "print(sorted(m for m in sys.modules if m.startswith('memkeeper.store.etcd')))"
    )
    assert printed(probe) == "[]"


def test_a_read_loads_neither_the_protocols_nor_typing() -> None:
    probe = (
        "import sys, memkeeper.ops.read, memkeeper.ops.workspace, memkeeper.store.sqlite; "
        "print(sorted(m for m in ('memkeeper.store.protocol', 'typing') if m in sys.modules))"
    )
    assert printed(probe) == "[]"


def test_the_stores_load_no_domain_that_a_read_or_a_patch_does_not_use() -> None:
    """Proposals, reconciliations, mail, meetings and work are each an attribute of the store
    whose module is loaded on first use (store/protocol.py): no mixin every process pays for."""
    probe = (
        "import sys, memkeeper.store.sqlite, memkeeper.store.etcd; "
        "print(sorted(m for m in sys.modules if m.startswith('memkeeper.store.') and "
        "m.rsplit('.', 1)[1] in ('proposals', 'reconciliations', 'mail', 'meetings', 'work')))"
    )
    assert printed(probe) == "[]"


def test_the_store_retry_and_the_local_store_load_no_etcd_client() -> None:
    probe = (
        "import sys, memkeeper.store.retry, memkeeper.store.sqlite, memkeeper.ops.workspace; "
        "print(sorted(m for m in sys.modules if m.startswith('memkeeper.store.etcd')))"
    )
    assert printed(probe) == "[]"


def test_a_read_uses_no_random_nor_threads_to_retry() -> None:
    probe = (
        "import sys; from memkeeper.store.retry import Retry; "
        "list(Retry(3, delay=0.0).tries()); Retry(2)(lambda: 1); "
        "print(sorted(m for m in ('random', 'threading', 'typing') if m in sys.modules))"
    )
    assert printed(probe) == "[]"


def test_the_etcd_client_and_its_access_load_without_dataclasses() -> None:
    """Every command on an etcd store imports the client, its TLS and its login."""
    code = (
        "import sys, memkeeper.store.etcd, memkeeper.store.etcd.access, "
        "memkeeper.store.etcd.tokens; print('dataclasses' in sys.modules)"
    )
    assert printed(code) == "False"


def test_records_load_without_dataclasses_or_typing() -> None:
    probe = (
        "import sys, memkeeper.records; print(sorted({'dataclasses', 'typing'} & set(sys.modules)))"
    )
    assert printed(probe) == "[]"


def test_the_coordination_records_load_without_dataclasses_or_typing() -> None:
    probe = (
        "import sys, memkeeper.coordination; "
        "print(sorted({'dataclasses', 'typing'} & set(sys.modules)))"
    )
    assert printed(probe) == "[]"


def test_importing_the_workspace_loads_neither_the_shape_nor_typing() -> None:
    probe = (
        "import sys, memkeeper.ops.workspace; "
        "print(sorted(m for m in ('memkeeper.ops.shape', 'typing') if m in sys.modules))"
    )
    assert printed(probe) == "[]"


def test_a_patch_without_live_claims_never_loads_the_lease_core(
    memory: Memory, sample: Path
) -> None:
    memory.patch("CLAUDE.md#build", "warm the index and the policy cache\n", expect_rev=1)
    memory.close()
    probe = (
        "import sys\n"
        "from memkeeper import Memory\n"
        f"m = Memory.open({str(sample)!r}, agent='x')\n"
        "m.patch('CLAUDE.md#build', 'x\\n', expect_rev=2)\n"
        "print(sorted({'memkeeper.claims.decisions', 'memkeeper.ops.claims', 'dataclasses'}"
        " & set(sys.modules)))"
    )
    assert printed(probe) == "[]"


LOADED = (
    "import sys; from memkeeper.cli.main import main; "
    "code = main(['read', 'CLAUDE.md#build', '--json']); "
    "print(code, [m for m in ('memkeeper.ops.sharedsync', 'memkeeper.fs.synced') "
    "if m in sys.modules])"
)


def shared_root(tmp_path: Path, name: str) -> Path:
    shutil.copytree(SAMPLE_REPO, tmp_path / name)
    subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
    return tmp_path / name


@pytest.fixture
def store_env(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    host, port = cluster.endpoints[0]
    url = f"etcd://{host}:{port}/startup-imports"
    monkeypatch.setenv("MEMKEEPER_STORE", url)
    return url


def test_a_read_on_a_sqlite_root_never_imports_the_shared_sync(sample: Path) -> None:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, capture_output=True, check=True)
    done = subprocess.run(
        [sys.executable, "-c", LOADED], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_a_read_on_a_shared_root_imports_it(tmp_path: Path, store_env: str) -> None:
    root = shared_root(tmp_path, "a")
    done = subprocess.run(
        [sys.executable, "-c", LOADED], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == (
        "0 ['memkeeper.ops.sharedsync', 'memkeeper.fs.synced']"
    )


def test_installing_every_agent_loads_none_of_the_gates_decision(tmp_path: Path) -> None:
    """The installers read each agent's setup beside its adapter, and the adapters' modules
    import nothing of the decision, nor the shell analyser, at run time
    (tests/test_architecture.py checks the installers' own imports)."""
    code = (
        "import sys; from pathlib import Path; from memkeeper.install.hooks import install; "
        f"install(Path({str(tmp_path)!r}), {list(AGENTS)!r}, mcp=True, python='/py', "
        "run=lambda args, cwd: (0, b'.git/hooks')); "
        "print(sorted(m for m in sys.modules if m.startswith(('memkeeper.gate.decide', "
        "'memkeeper.gate.facts', 'memkeeper.gate.messages', 'memkeeper.gate.hook', "
        "'memkeeper.shell'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == "[]\n"
    assert (tmp_path / ".codex/config.toml").is_file()

"""The ``semantic`` extra end to end, each check in a fresh interpreter: the model loads with
every socket refused and writes nothing (no cache, no download); its vectors are WordLlama's
own; the CLI warns of a similar objective and searches by meaning; without the extra
``claims --search`` is exit 2 and ``claim`` is as before; and no command that does not compare
objectives imports the model's libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_cli

# Every way out refused, before anything is imported: a probe that reaches for the network fails.
NO_NETWORK = (
    "import socket\n"
    "def refused(*a, **k): raise OSError('network use in a test that forbids it')\n"
    "socket.socket.connect = refused\n"
    "socket.getaddrinfo = refused\n"
    "socket.create_connection = refused\n"
)
MODEL_LIBRARIES = ("tokenizers", "numpy", "wordllama", "memkeeper.fs.embedding")
OBJECTIVES = [
    "fix retry backoff in the http client",
    "make request timeouts configurable in the fetcher",
    "dark mode for the settings page",
    "Ünïcode, punctuation!? and 42 numbers",
]


def python(code: str, cwd: Path, home: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_model_loads_with_no_network_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    probe = NO_NETWORK + (
        "import sys\n"
        "from memkeeper.fs import embedding\n"
        "vector = embedding.embed('fix retry backoff')\n"
        "print(len(vector), [m for m in ('wordllama', 'requests', 'numpy') if m in sys.modules])\n"
    )
    assert python(probe, tmp_path, home) == "256 []"
    assert list(home.iterdir()) == []  # no cache directory, no downloaded file


def test_its_vectors_score_as_wordllamas_own(tmp_path: Path) -> None:
    """The differential check against the library whose files are read: WordLlama's loader,
    pointed at the tokenizer its wheel ships (it would download it otherwise)."""
    home = tmp_path / "home"
    home.mkdir()
    probe = NO_NETWORK + (
        "import json, pathlib, wordllama\n"
        "from wordllama import WordLlama\n"
        "from memkeeper.fs import embedding\n"
        "from memkeeper.claims.similar import score\n"
        "theirs = WordLlama.load(cache_dir=pathlib.Path(wordllama.__file__).parent, "
        "disable_download=True)\n"
        f"texts = {OBJECTIVES!r}\n"
        "pairs = [(a, b) for a in texts for b in texts]\n"
        "print(json.dumps([[theirs.similarity(a, b), score(embedding.embed(a), "
        "embedding.embed(b))] for a, b in pairs]))\n"
    )
    for theirs, ours in json.loads(python(probe, tmp_path, home)):
        assert abs(theirs - ours) < 1e-5


def test_the_cli_warns_of_a_similar_objective_and_searches_by_meaning(sample: Path) -> None:
    first = run_cli(
        sample, "--agent", "a", "claim", "src/http/", "--objective", OBJECTIVES[0], "--json"
    )
    assert first.code == 0, first.stderr
    second = run_cli(
        sample, "--agent", "b", "claim", "src/fetch/", "--objective", OBJECTIVES[1], "--json"
    )
    assert second.code == 0
    (warning,) = second.json["warnings"]
    assert warning.startswith(f"objective similar to claim {first.json['id']} of a (score 0.")
    found = run_cli(sample, "claims", "--search", "retry behaviour", "--limit", "1", "--json")
    assert [m["id"] for m in found.json["matches"]] == [first.json["id"]]


def test_without_the_extra_search_is_exit_2_and_claim_is_as_before(sample: Path) -> None:
    hide = "import sys; sys.modules['wordllama'] = None\nfrom memkeeper.cli.main import main\n"
    run_cli(sample, "--agent", "a", "claim", "src/http/", "--objective", OBJECTIVES[0])
    probe = hide + (
        f"claim = main(['--agent', 'b', 'claim', 'src/fetch/', '--objective', {OBJECTIVES[1]!r}])\n"
        "search = main(['claims', '--search', 'retry'])\n"
        f"print(claim, search, [m for m in {MODEL_LIBRARIES[:3]!r} if sys.modules.get(m)])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=False
    )
    *answer, last = done.stdout.strip().splitlines()
    assert last == "0 2 []"
    assert not any("warning:" in line for line in answer)
    assert "pip install 'memkeeper[semantic]'" in done.stderr


def test_commands_that_compare_no_objectives_never_import_the_model(sample: Path) -> None:
    """A claim without objective, or with one and nobody else's to compare, read, the claims
    list and patch load none of the model's libraries (``claim`` is as fast as before)."""
    run_cli(sample, "--agent", "a", "claim", "docs/", "--objective", OBJECTIVES[0])
    (sample / "body.md").write_text("- make test\n\n")
    probe = (
        "import sys\nfrom memkeeper.cli.main import main\n"
        "codes = [main(['--agent', 'b', 'claim', 'src/', '--json']), "
        "main(['--agent', 'a', 'claim', 'memory/', '--objective', 'tidy the log', '--json']), "
        "main(['read', 'CLAUDE.md#build', '--json']), main(['claims', '--json']), "
        "main(['patch', 'CLAUDE.md#build', '--expect-rev', '1', '--body-file', 'body.md'])]\n"
        f"print(codes, sorted(m for m in {MODEL_LIBRARIES!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=sample, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[0, 0, 0, 0, 0] []"

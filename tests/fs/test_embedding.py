"""The ``semantic`` extra's model, read from the files the wordllama wheel ships: vectors of
256 dimensions, the same for the same text, none for a text of no word; a clear error when the
extra is missing or its files are broken. And the acceptance figures: on the hand-labelled
pairs of tests/data/objective_pairs.csv, at the policy's default threshold, the warning fires
on most related pairs and few unrelated ones."""

from __future__ import annotations

import csv
import json
import struct
import sys
from pathlib import Path

import pytest

from memkeeper.claims.similar import score
from memkeeper.errors import Invalid
from memkeeper.fs import embedding
from memkeeper.fs.embedding import TENSOR
from memkeeper.policy.model import SEMANTIC_THRESHOLD
from tests.test_architecture import PACKAGE, foreign_imports, package_graph

DATA = Path(__file__).resolve().parent.parent / "data"


def labelled(name: str = "objective_pairs.csv") -> dict[str, list[float]]:
    """The score of each hand-labelled pair, by label."""
    scores: dict[str, list[float]] = {"related": [], "unrelated": []}
    with (DATA / name).open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            scores[row["label"]].append(score(embedding.embed(row["a"]), embedding.embed(row["b"])))
    return scores


def test_the_labelled_set_is_large_enough_and_balanced() -> None:
    scores = labelled()
    assert len(scores["related"]) >= 30
    assert len(scores["unrelated"]) >= 30


def rates(scores: dict[str, list[float]]) -> tuple[float, float]:
    """The share of related pairs warned of, and of unrelated ones, at the default threshold."""
    related = sum(s >= SEMANTIC_THRESHOLD for s in scores["related"]) / len(scores["related"])
    unrelated = sum(s >= SEMANTIC_THRESHOLD for s in scores["unrelated"])
    return related, unrelated / len(scores["unrelated"])


def test_the_default_threshold_warns_on_most_related_pairs_and_few_unrelated_ones() -> None:
    """Measured on the set the threshold was chosen on: 28 of 32 related pairs (88 %), 1 of
    32 unrelated (3 %)."""
    recall, false_positives = rates(labelled())
    assert recall >= 0.8, f"recall {recall:.2f}"
    assert false_positives <= 0.1, f"false positives {false_positives:.2f}"


def test_on_pairs_it_was_not_chosen_on_it_warns_on_half_the_related_and_few_unrelated() -> None:
    """Measured on the held-out pairs (paraphrases, fewer shared words): 6 of 12 related
    (50 %), 1 of 12 unrelated (8 %) — the floors are those figures, not wishes."""
    scores = labelled("objective_pairs_heldout.csv")
    assert (len(scores["related"]), len(scores["unrelated"])) == (12, 12)
    recall, false_positives = rates(scores)
    assert recall >= 6 / 12, f"recall {recall:.2f}"
    assert false_positives <= 1 / 12, f"false positives {false_positives:.2f}"


def test_a_text_has_one_vector_of_256_dimensions_and_no_word_has_none() -> None:
    first = embedding.embed("fix retry backoff in the http client")
    assert len(first) == 256
    assert embedding.model().embed("fix retry backoff in the http client") == first
    assert not any(embedding.model().embed(""))
    assert score(first, embedding.model().embed("")) == 0.0


def test_without_the_extra_it_is_unavailable_and_search_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert embedding.available()
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if it were not installed
    assert not embedding.available()
    with pytest.raises(Invalid) as caught:
        embedding.require("claims --search")
    assert caught.value.exit_code == 2
    assert caught.value.reason == "no_semantic"
    assert "pip install 'memkeeper[semantic]'" in caught.value.message


def test_broken_model_files_are_an_error_naming_the_file_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / embedding.WEIGHTS[1]).write_bytes(b"not safetensors")
    monkeypatch.setattr(embedding, "model_dir", lambda: str(tmp_path))
    embedding.model.cache_clear()
    try:
        with pytest.raises(embedding.ModelBroken) as caught:
            embedding.model()
    finally:
        embedding.model.cache_clear()
    assert caught.value.exit_code == 1
    assert embedding.WEIGHTS[1] in caught.value.message
    assert "--force-reinstall" in caught.value.message


def safetensors(rows: int, dims: int, dtype: str = "F32", extra: int = 0) -> bytes:
    header = {TENSOR: {"dtype": dtype, "shape": [rows, dims], "data_offsets": [0, rows * dims * 4]}}
    text = json.dumps(header).encode()
    data = struct.pack(f"<{rows * dims}f", *range(rows * dims))
    return struct.pack("<Q", len(text)) + text + data[: len(data) - extra]


def test_the_weights_layout_is_read_from_the_safetensors_header() -> None:
    data = safetensors(rows=3, dims=2)
    layout = embedding.table(data, TENSOR, len(data))
    assert (layout.rows, layout.dims) == (3, 2)
    assert layout.row.unpack_from(data, layout.start + 2 * layout.row.size) == (4.0, 5.0)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (safetensors(rows=3, dims=2, extra=4), "does not fit the file"),
        (safetensors(rows=3, dims=2, dtype="I8"), "I8"),
        (b"\x05\x00\x00\x00\x00\x00\x00\x00{}   ", TENSOR),
    ],
)
def test_a_weights_file_of_another_shape_is_refused(data: bytes, named: str) -> None:
    with pytest.raises((ValueError, KeyError), match=named):
        embedding.table(data, TENSOR, len(data))


def test_only_the_comparison_and_the_search_import_the_model() -> None:
    """Read, patch, the gate and every other verb never reach the model: no module but these
    imports ``fs.embedding`` (lazily, in the function that compares), and none but it imports
    the model's library."""
    graph = package_graph()
    importers = sorted(m for m, imported in graph.items() if "memkeeper.fs.embedding" in imported)
    assert importers == ["memkeeper.ops.claimsearch", "memkeeper.ops.claimsimilar"]
    tokenizers = [
        path.name for path in PACKAGE.rglob("*.py") if foreign_imports(path, ["tokenizers"])
    ]
    assert tokenizers == ["embedding.py"]

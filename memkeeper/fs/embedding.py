"""The ``semantic`` extra's model (docs/reference.md §4 "Similar objectives"): WordLlama's
static word vectors, read from the files its wheel ships.

An objective's vector is the mean of its tokens' vectors, as WordLlama computes it
(``WordLlamaInference.embed``: no special tokens, no truncation). memkeeper reads the two files
itself and never imports ``wordllama``: its import costs ~0.8 s (pydantic, requests, numpy) and
sets the root logger's level, and its loader looks for the tokenizer where the wheel does not
put it, then downloads it. Here nothing is downloaded and nothing is written: the tokenizer is
loaded with ``tokenizers``, and the weights (a safetensors file: an 8-byte header length, a
JSON header, then the rows) are mapped into memory, each token's row decoded when a text
needs it — no numpy, so a first comparison costs the tokenizer's load (~0.1 s), not numpy's
import and 16 MB of weights. The model loads once per process; vectors are remembered per text.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import mmap
import os
import struct
from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.records import Record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tokenizers import Tokenizer

    from memkeeper.claims.similar import Vector

# The files of the wordllama 0.4 wheel: 256 dimensions of the ``l2_supercat`` model.
WEIGHTS = ("weights", "l2_supercat_256.safetensors")
TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
TENSOR = "embedding.weight"
INSTALL = "pip install 'memkeeper[semantic]'"
_NEEDED = ("wordllama", "tokenizers")
_FORMATS = {"F16": "e", "F32": "f"}  # safetensors dtype -> struct format, little-endian


class ModelBroken(EnvironmentFailure):
    """Exit 1: the extra is installed but its model files cannot be read."""


def available() -> bool:
    """Whether the ``semantic`` extra is installed (found, not imported: cheap)."""
    return all(importlib.util.find_spec(name) is not None for name in _NEEDED)


def require(what: str) -> None:
    """``Invalid`` (exit 2) naming how to install the extra, unless it is installed."""
    if not available():
        raise Invalid(
            f"{what} needs the semantic extra, which is not installed — install it with: {INSTALL}",
            reason="no_semantic",
        )


class Table(Record):
    """Where a 2-D tensor's rows are in a safetensors file (``start``: the first row's byte
    offset), how many, of how many values, and how to decode one (``row``)."""

    __slots__ = ("start", "rows", "dims", "row")
    start: int
    rows: int
    dims: int
    row: struct.Struct

    def __init__(self, start: int, rows: int, dims: int, row: struct.Struct) -> None:
        self._fill(start, rows, dims, row)


def table(head: bytes, name: str, size: int) -> Table:
    """The layout of tensor ``name`` from a safetensors file's first bytes (``head``: at least
    the header) and the file's ``size``; ``ValueError`` for anything unexpected."""
    (length,) = struct.unpack_from("<Q", head)
    entry = json.loads(head[8 : 8 + length])[name]
    rows, dims = entry["shape"]
    first, end = entry["data_offsets"]
    code = _FORMATS[entry["dtype"]]
    row = struct.Struct(f"<{dims}{code}")
    if end - first != rows * row.size or 8 + length + end > size:
        raise ValueError(f"{name}: {rows}x{dims} {entry['dtype']} does not fit the file")
    return Table(8 + length + first, rows, dims, row)


class Model:
    """The tokenizer, and the token vectors mapped from the weights file."""

    def __init__(self, weights: mmap.mmap, layout: Table, tokenizer: Tokenizer) -> None:
        self.weights, self.layout, self.tokenizer = weights, layout, tokenizer

    def embed(self, text: str) -> Vector:
        """The mean of the text's token vectors (all zeros for a text of no token)."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        t = self.layout
        total = [0.0] * t.dims
        for token in ids:
            index = min(max(token, 0), t.rows - 1)
            vector = t.row.unpack_from(self.weights, t.start + index * t.row.size)
            total = [a + b for a, b in zip(total, vector, strict=True)]
        return tuple(a / len(ids) for a in total) if ids else tuple(total)


def model_dir() -> str:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModelBroken(f"the wordllama package is not installed — {INSTALL}")
    return str(next(iter(spec.submodule_search_locations)))


@functools.cache
def model() -> Model:
    """The model, loaded once per process; ``ModelBroken`` if its files cannot be read."""
    from tokenizers import Tokenizer

    root = model_dir()
    weights, tokenizer = os.path.join(root, *WEIGHTS), os.path.join(root, *TOKENIZER)
    try:
        with open(weights, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        layout = table(mapped[:65536], TENSOR, len(mapped))
        words = Tokenizer.from_file(tokenizer)
    # a missing or truncated file, a header of another shape; tokenizers raises its own kind
    except Exception as err:
        raise ModelBroken(
            f"{weights}: the semantic extra's model cannot be read ({err}) — reinstall it: "
            f"{INSTALL} --force-reinstall"
        ) from err
    words.no_truncation()
    return Model(mapped, layout, words)


@functools.lru_cache(maxsize=4096)
def embed(text: str) -> Vector:
    """The vector of one text (remembered: live claims' objectives are compared again and
    again by a long-lived process, the MCP server or the dashboard)."""
    return model().embed(text)


def embed_all(texts: Sequence[str]) -> list[Vector]:
    return [embed(text) for text in texts]

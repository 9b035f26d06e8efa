"""The ``semantic`` extra's model (docs/reference.md §4 "Similar objectives"): WordLlama's
static word vectors, read from the files its wheel ships.

An objective's vector is the mean of its tokens' vectors, as WordLlama computes it
(``WordLlamaInference.embed``: no special tokens, no truncation). memkeeper reads the two files
itself — the tokenizer with ``tokenizers``, the weights with ``safetensors`` — and never imports
``wordllama``: its import costs ~0.8 s (pydantic, requests) and sets the root logger's level,
and its loader looks for the tokenizer where the wheel does not put it, then downloads it.
Here nothing is downloaded and nothing is written. The model loads once per process, on the
first objective compared; vectors are remembered per text.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure, Invalid

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from memkeeper.claims.similar import Vector

# The files of the wordllama 0.4 wheel: 256 dimensions of the ``l2_supercat`` model.
WEIGHTS = ("weights", "l2_supercat_256.safetensors")
TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
TENSOR = "embedding.weight"
INSTALL = "pip install 'memkeeper[semantic]'"
_NEEDED = ("wordllama", "numpy", "tokenizers", "safetensors")


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


class Model:
    """Token vectors and the tokenizer that splits text into them."""

    def __init__(self, vectors: npt.NDArray[np.float32], tokenizer: object) -> None:
        self.vectors = vectors
        self.tokenizer = tokenizer

    def embed(self, text: str) -> Vector:
        import numpy as np
        from tokenizers import Tokenizer

        assert isinstance(self.tokenizer, Tokenizer)
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            return (0.0,) * int(self.vectors.shape[1])
        rows = np.clip(np.asarray(ids, dtype=np.int64), 0, self.vectors.shape[0] - 1)
        mean = self.vectors[rows].mean(axis=0, dtype=np.float32)
        return tuple(float(x) for x in mean.tolist())


def model_dir() -> str:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModelBroken(f"the wordllama package is not installed — {INSTALL}")
    return str(next(iter(spec.submodule_search_locations)))


@functools.cache
def model() -> Model:
    """The model, loaded once per process; ``ModelBroken`` if its files cannot be read."""
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    root = model_dir()
    weights, tokenizer = os.path.join(root, *WEIGHTS), os.path.join(root, *TOKENIZER)
    try:
        vectors = load_file(weights)[TENSOR].astype(np.float32)
        words = Tokenizer.from_file(tokenizer)
    # safetensors and tokenizers raise kinds of their own (a truncated or missing file)
    except Exception as err:
        raise ModelBroken(
            f"{weights}: the semantic extra's model cannot be read ({err}) — reinstall it: "
            f"{INSTALL} --force-reinstall"
        ) from err
    words.no_truncation()
    return Model(vectors, words)


@functools.lru_cache(maxsize=4096)
def embed(text: str) -> Vector:
    """The vector of one text (remembered: live claims' objectives are compared again and
    again by a long-lived process, the MCP server or the dashboard)."""
    return model().embed(text)


def embed_all(texts: Sequence[str]) -> list[Vector]:
    return [embed(text) for text in texts]

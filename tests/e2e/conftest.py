"""The end-to-end tier's shared fixture: a copy of sample-repo set up by the installed
``memkeeper init``, for the tests that serve it over MCP."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER


@pytest.fixture
def root(sample: Path) -> Path:
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    return sample

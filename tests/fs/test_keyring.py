"""This user's keys: made once, kept private, refused when others may read them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memkeeper.errors import EnvironmentFailure, Invalid
from memkeeper.fs import keyring


def env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), **more}


def test_a_key_is_made_private_in_a_private_directory(tmp_path: Path) -> None:
    key, made = keyring.create(env(tmp_path), "human", "alice")
    path = keyring.key_path(env(tmp_path), "human")
    assert made
    assert path == str(tmp_path / "config/memkeeper/keys/human.key")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert keyring.load(path) == key
    assert [p.name for p in Path(path).parent.iterdir()] == ["human.key"]  # no temp left


def test_an_existing_key_is_never_replaced(tmp_path: Path) -> None:
    first, _ = keyring.create(env(tmp_path), "machine", "box")
    again, made = keyring.create(env(tmp_path), "machine", "other-name")
    assert (again.public, again.name, made) == (first.public, "box", False)


def test_a_key_others_may_read_is_refused_saying_how_to_fix_it(tmp_path: Path) -> None:
    keyring.create(env(tmp_path), "human", "alice")
    path = keyring.key_path(env(tmp_path), "human")
    os.chmod(path, 0o644)
    with pytest.raises(EnvironmentFailure, match=f"run: chmod 600 {path}"):
        keyring.load(path)


def test_the_key_that_signs_is_the_named_then_the_sessions_machine_then_the_humans(
    tmp_path: Path,
) -> None:
    human, _ = keyring.create(env(tmp_path), "human", "alice")
    machine, _ = keyring.create(env(tmp_path), "machine", "box")
    assert keyring.signing_key(env(tmp_path), in_session=False) == human
    assert keyring.signing_key(env(tmp_path), in_session=True) == machine
    named = env(tmp_path, MEMKEEPER_KEY=keyring.key_path(env(tmp_path), "human"))
    assert keyring.signing_key(named, in_session=True) == human


def test_no_key_signs_nothing_and_a_missing_named_one_is_an_error(tmp_path: Path) -> None:
    assert keyring.signing_key(env(tmp_path), in_session=False) is None
    with pytest.raises(Invalid, match="MEMKEEPER_KEY names /nope"):
        keyring.signing_key(env(tmp_path, MEMKEEPER_KEY="/nope"), in_session=False)


def test_a_file_that_is_no_key_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_text("hello\n")
    path.chmod(0o600)
    with pytest.raises(Invalid, match="memkeeper keys init"):
        keyring.load(str(path))

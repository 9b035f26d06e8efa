"""Names on disk: spelled once, and an atomic write's temp name tells whose it is."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper import names
from memkeeper.names import TEMP_TAG, home_of, temp_name, temp_pid

file_names = st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1)
pids = st.integers(min_value=0, max_value=2**22)


def test_the_names_the_reference_gives() -> None:
    assert (names.POLICY_FILE, names.HOME_DIR, names.STATE_DB) == (
        ".memkeeper.yaml",
        ".memkeeper",
        "state.db",
    )
    assert (names.LOCKS_DIR, names.WAIT_DIR, names.ERROR_LOG) == ("locks", "wait", "error.log")
    assert (names.AGENT_ENV, names.ROOT_ENV, names.DEFAULT_AGENT) == (
        "MEMKEEPER_AGENT",
        "MEMKEEPER_ROOT",
        "human",
    )


def test_the_names_of_the_homes_own_files() -> None:
    assert (names.KEPT_DIR, names.SYNCED_DIR, names.ROOT_ID) == ("kept", "synced", "root-id")
    assert (names.POLICY_CACHE, names.BASE_SUFFIX, names.LOCK_SUFFIX) == (
        "policy-cache.json",
        ".base",
        ".lock",
    )
    assert names.SHARED_REGION == "store:"


def test_a_home_files_temp_is_beside_it_and_never_a_memory_files_temp() -> None:
    temp = names.home_temp("/repo/.memkeeper/root-id", 4242)
    assert temp == "/repo/.memkeeper/root-id.4242.tmp"
    assert temp_pid(os.path.basename(temp)) is None


def test_the_home_sits_at_the_root() -> None:
    assert home_of("/repo") == os.path.join("/repo", ".memkeeper")
    assert home_of("rel") == os.path.join("rel", ".memkeeper")


def test_a_temp_file_is_hidden_beside_its_target_and_names_its_writer() -> None:
    assert temp_name("CLAUDE.md", 4242) == ".CLAUDE.md.memkeeper-4242.tmp"


@given(file_names, pids)
def test_the_writers_pid_is_read_back_from_any_temp_name(name: str, pid: int) -> None:
    temp = temp_name(name, pid)
    assert temp_pid(temp) == pid
    assert temp.startswith(".")
    assert temp.endswith(".tmp")
    assert "/" not in temp


@given(file_names.filter(lambda n: not (n.startswith(".") and n.endswith(".tmp"))))
def test_a_name_that_is_not_hidden_and_tmp_is_never_a_temp(name: str) -> None:
    assert temp_pid(name) is None


@pytest.mark.parametrize(
    "name",
    [
        "CLAUDE.md",
        ".CLAUDE.md",
        "CLAUDE.md.memkeeper-12.tmp",  # not hidden
        ".CLAUDE.md.memkeeper-12.tmpx",
        ".CLAUDE.md.tmp",
        ".CLAUDE.md.memkeeper-.tmp",
        ".CLAUDE.md.memkeeper-12a.tmp",
        ".CLAUDE.md.memkeeper--12.tmp",
        ".CLAUDE.md.memkeeper-1 2.tmp",
        ".CLAUDE.md-12.tmp",
    ],
)
def test_names_that_only_look_like_temps_are_memory_files(name: str) -> None:
    assert temp_pid(name) is None


def test_the_last_tag_in_a_name_is_the_writers() -> None:
    tricky = f"notes{TEMP_TAG}7.tmp"  # a memory file whose own name holds the tag
    assert temp_pid(temp_name(tricky, 99)) == 99


@pytest.mark.parametrize("digits", ["\u00b2", "\u2460", "\u00b9\u00b2"])
def test_a_name_with_unicode_non_decimal_digits_is_not_a_temp(digits: str) -> None:
    assert temp_pid(f".notes.md{TEMP_TAG}{digits}.tmp") is None

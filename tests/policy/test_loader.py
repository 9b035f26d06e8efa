"""Getting a root's policy: no file is the empty policy, any file must be a valid one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memkeeper.errors import PolicyInvalid
from memkeeper.names import POLICY_FILE
from memkeeper.policy.loader import load_policy, parse_policy, policy_bytes, read_policy_bytes
from memkeeper.policy.model import Policy, empty_policy

VALID = b"version: 1\nfiles:\n  - {path: CLAUDE.md, class: section-owned}\n"
OTHER = b"version: 1\nfiles:\n  - {path: AGENTS.md, class: append-only}\n"


class Index:
    """A fake reader of git's index that remembers what it was asked for."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs
        self.asked: list[str] = []

    def __call__(self, path: str) -> bytes | None:
        self.asked.append(path)
        return self.blobs.get(path)


def globs(policy: Policy) -> tuple[str, ...]:
    return policy.managed_globs()


def test_no_policy_file_is_the_empty_policy() -> None:
    assert parse_policy(None) == empty_policy()
    assert parse_policy(None).classify("CLAUDE.md") is None


def test_an_empty_policy_file_is_not_the_empty_policy_but_a_mistake() -> None:
    with pytest.raises(PolicyInvalid) as caught:
        parse_policy(b"")
    assert caught.value.message.startswith(f"{POLICY_FILE}:1:1: the policy must be a mapping")


def test_mistakes_name_the_policy_file_unless_told_another_source() -> None:
    with pytest.raises(PolicyInvalid, match=r"^\.memkeeper\.yaml:1:10: "):
        parse_policy(b"version: 2\n")
    with pytest.raises(PolicyInvalid, match=r"^staged:\.memkeeper\.yaml:1:10: "):
        parse_policy(b"version: 2\n", source="staged:.memkeeper.yaml")


def test_the_working_trees_policy_is_read_verbatim(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfversion: 1\r\n# a comment\r\n"
    (tmp_path / POLICY_FILE).write_bytes(data)
    assert read_policy_bytes(tmp_path) == data
    assert read_policy_bytes(str(tmp_path)) == data


def test_a_root_without_a_policy_reads_as_none(tmp_path: Path) -> None:
    assert read_policy_bytes(tmp_path) is None
    assert policy_bytes(tmp_path) is None
    assert load_policy(tmp_path) == empty_policy()


def test_a_policy_that_is_a_directory_is_an_error_not_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).mkdir()
    with pytest.raises(OSError):  # noqa: PT011 - which OSError depends on the platform
        read_policy_bytes(tmp_path)


def test_a_staged_policy_wins_over_the_working_tree(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(VALID)
    index = Index({POLICY_FILE: OTHER})
    assert policy_bytes(tmp_path, staged=index) == OTHER
    assert index.asked == [POLICY_FILE]
    assert globs(load_policy(tmp_path, staged=index)) == ("AGENTS.md",)


def test_an_unstaged_policy_falls_back_to_the_working_tree(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(VALID)
    assert policy_bytes(tmp_path, staged=Index({})) == VALID
    assert globs(load_policy(tmp_path, staged=Index({}))) == ("CLAUDE.md",)


def test_without_a_staged_reader_the_working_tree_is_used(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(OTHER)
    assert globs(load_policy(tmp_path)) == ("AGENTS.md",)


def test_neither_staged_nor_in_the_tree_is_the_empty_policy(tmp_path: Path) -> None:
    assert load_policy(tmp_path, staged=Index({})) == empty_policy()


def test_a_broken_working_tree_policy_is_invalid(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(b"version: 1\nfile: []\n")
    with pytest.raises(PolicyInvalid) as caught:
        load_policy(tmp_path)
    error = caught.value
    assert (error.path, error.line, error.column) == (POLICY_FILE, 2, 1)
    assert "did you mean 'files'?" in error.fix


def test_a_valid_staged_policy_hides_a_broken_working_tree(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(b"not: [valid\n")
    assert globs(load_policy(tmp_path, staged=Index({POLICY_FILE: VALID}))) == ("CLAUDE.md",)


def test_a_broken_staged_policy_is_invalid_though_the_tree_is_fine(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).write_bytes(VALID)
    with pytest.raises(PolicyInvalid, match="`version` is missing"):
        load_policy(tmp_path, staged=Index({POLICY_FILE: b"files: []\n"}))


def test_the_same_bytes_are_parsed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from memkeeper.policy import parse

    calls: list[bytes] = []
    real = parse.parse

    def counting(data: bytes, source: str) -> Policy:
        calls.append(data)
        return real(data, source)

    monkeypatch.setattr(parse, "parse", counting)
    unique = VALID + b"# parsed once\n"
    first = parse_policy(unique)
    assert parse_policy(unique) is first
    assert parse_policy(OTHER + b"# parsed once\n") is not first
    assert calls == [unique, OTHER + b"# parsed once\n"]


def test_an_invalid_policy_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(PolicyInvalid):
            parse_policy(b"version: 2\n")

"""Members that went silent, remembered across processes: asked last for a while, cleared
once they answer, and a home that cannot be written only forgets."""

from __future__ import annotations

from pathlib import Path

from memkeeper.store.etcd.members import FILE, QUIET_S, Members

A, B, C = ("10.0.0.1", 2379), ("10.0.0.2", 2379), ("10.0.0.3", 2379)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_with_nothing_remembered_the_order_is_the_given_one(tmp_path: Path) -> None:
    assert Members(str(tmp_path)).order([A, B, C]) == [0, 1, 2]


def test_a_silent_member_is_asked_last_by_the_next_process_until_quiet_passes(
    tmp_path: Path,
) -> None:
    clock = Clock()
    Members(str(tmp_path), clock).silent(A)
    assert Members(str(tmp_path), clock).order([A, B, C]) == [1, 2, 0]
    clock.now += QUIET_S + 1
    assert Members(str(tmp_path), clock).order([A, B, C]) == [0, 1, 2]


def test_of_two_silent_members_the_longest_silent_is_asked_first(tmp_path: Path) -> None:
    clock = Clock()
    members = Members(str(tmp_path), clock)
    members.silent(B)
    clock.now += 1
    members.silent(A)
    assert Members(str(tmp_path), clock).order([A, B, C]) == [2, 1, 0]


def test_a_member_that_answers_again_is_forgotten(tmp_path: Path) -> None:
    members = Members(str(tmp_path))
    members.silent(A)
    members.answered(A)
    assert Members(str(tmp_path)).order([A, B]) == [0, 1]


def test_an_answer_from_a_member_never_silent_writes_nothing(tmp_path: Path) -> None:
    Members(str(tmp_path)).answered(A)
    assert not (tmp_path / FILE).exists()


def test_a_home_that_is_not_there_or_a_file_that_is_garbage_only_forgets(tmp_path: Path) -> None:
    gone = Members(str(tmp_path / "no-such-home"))
    gone.silent(A)
    assert not (tmp_path / "no-such-home").exists()
    (tmp_path / FILE).write_text("[not, json")
    assert Members(str(tmp_path)).order([A, B]) == [0, 1]


def test_quiet_is_silent_within_the_quiet_period(tmp_path: Path) -> None:
    clock = Clock()
    members = Members(str(tmp_path), clock)
    assert not members.quiet(A)
    members.silent(A)
    assert members.quiet(A)
    clock.now += QUIET_S
    assert not members.quiet(A)


def test_two_threads_telling_one_memory_at_once_lose_nothing_and_break_nothing(
    tmp_path: Path,
) -> None:
    import threading

    members = Members(str(tmp_path))
    endpoints = [("10.0.1.1", port) for port in range(2000, 2100)]

    def tell(mine: list[tuple[str, int]]) -> None:
        for endpoint in mine:
            members.silent(endpoint)
            members.order(endpoints)

    threads = [threading.Thread(target=tell, args=(endpoints[n::2],)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Members(str(tmp_path)).order(endpoints)[:1] == [0]  # all silent, oldest first
    assert all(Members(str(tmp_path)).quiet(e) for e in endpoints)
    assert [p.name for p in tmp_path.iterdir()] == [FILE]  # no temp file left behind

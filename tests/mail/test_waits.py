"""Who a message wakes: a waiter's FIFO names its identity by a digest that a file name can
hold; a message to an identity pokes that identity's waiters only, one to all every waiter's;
a waiter blocks at most to its cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memkeeper.mail import waits

ME, THEM = "claude-code:s1/sub", "codex:t2"


def test_a_message_pokes_its_recipients_waiters_and_one_to_all_everyones() -> None:
    mine, theirs = waits.waiter_id(ME, 10, 1), waits.waiter_id(THEM, 11, 1)
    names = [f"{mine}.fifo", f"{theirs}.fifo", "c17.fifo", f"{mine}.tmp"]
    assert waits.woken(ME, names) == [mine]
    assert waits.woken(THEM, names) == [theirs]
    assert waits.woken("all", names) == [mine, theirs]  # a claim's waiter is no mail waiter
    assert waits.woken("nobody", names) == []


@given(st.text(min_size=1, max_size=200), st.integers(1, 2**22), st.integers(1, 10**6))
def test_a_waiter_id_is_a_file_name_and_gives_its_pid_back(who: str, pid: int, n: int) -> None:
    waiter = waits.waiter_id(who, pid, n)
    assert "/" not in waiter
    assert "\0" not in waiter
    assert len(waiter) < 100
    assert waits.pid_of(waiter) == pid
    assert waits.woken(who, [f"{waiter}.fifo"]) == [waiter]


def test_a_waiter_looks_again_at_its_cap_at_the_latest() -> None:
    assert waits.next_look(100.0, shared=False) == waits.WAKE_CAP_S
    assert waits.next_look(100.0, shared=True) == waits.SHARED_CAP_S
    assert waits.next_look(0.25, shared=False) == 0.25
    assert waits.next_look(-1.0, shared=True) == 0.0

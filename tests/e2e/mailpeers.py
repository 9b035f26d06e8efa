"""The processes of the mailbox's acceptance test (``test_mailbox``), each run as
``python -m tests.e2e.mailpeers send|receive …`` with the store named by the environment:

- ``send ROOT ME N R1,R2… PAUSE``: ``N`` messages from identity ``ME``, message ``i`` to
  ``R[i % len(R)]``, its text ``"ME i"``, ``PAUSE`` seconds apart (so that the sending lasts
  long enough for the recipients to be killed mid-stream however fast the store is);
- ``receive ROOT ME LOG EXPECTED``: a durable consumer — waits (``mem.mail.wait``), appends
  each message it has not handled yet to ``LOG`` (``id sender i``, synced) and only then
  acknowledges them (in batches), until it has handled ``EXPECTED`` and its inbox is empty.
  Killed at any point and started again, it reads back what it handled (a line cut short by
  the kill is dropped, and so handled again).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable

from memkeeper import Memory
from memkeeper.errors import EnvironmentFailure

ACK_BATCH = 25


def send(root: str, me: str, count: int, recipients: list[str], pause: float) -> None:
    memory = Memory.open(root, agent=me)
    try:
        for i in range(count):
            time.sleep(pause)
            busy(functools.partial(memory.mail.send, recipients[i % len(recipients)], f"{me} {i}"))
    finally:
        memory.close()


def busy(call: Callable[[], object]) -> None:
    """``call()``, again while the store says other writers kept getting in first (nothing of
    it was written): what any producer or consumer does under heavy contention."""
    while True:
        try:
            call()
            return
        except EnvironmentFailure as exc:
            if exc.reason != "store_busy":
                raise


def handled(log: str) -> set[int]:
    """The ids ``log`` holds, after dropping a last line the kill cut short."""
    try:
        with open(log, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return set()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        with open(log, "r+b") as handle:
            handle.truncate(len(whole))
    return {int(line.split()[0]) for line in whole.splitlines()}


def receive(root: str, me: str, log: str, expected: int) -> None:
    done = handled(log)
    memory = Memory.open(root, agent=me)
    try:
        with open(log, "ab") as out:
            while True:  # until all are handled, and acknowledged (a kill may come between)
                waiting = memory.mail.wait(0 if len(done) >= expected else 10)
                if not waiting and len(done) >= expected:
                    break
                new = [m for m in waiting if m.id not in done]
                for message in new:
                    out.write(f"{message.id} {message.text}\n".encode())
                    out.flush()
                    os.fsync(out.fileno())
                    done.add(message.id)
                # Acknowledged in batches: when nothing new came since the last look (or many
                # wait), so that a stream of messages costs a few transactions, not one each.
                if not new or len(waiting) >= ACK_BATCH:
                    busy(functools.partial(memory.mail.ack_many, [m.id for m in waiting]))
    finally:
        memory.close()


if __name__ == "__main__":
    verb, root, me, *rest = sys.argv[1:]
    if verb == "send":
        send(root, me, int(rest[0]), rest[1].split(","), float(rest[2]))
    else:
        receive(root, me, rest[0], int(rest[1]))

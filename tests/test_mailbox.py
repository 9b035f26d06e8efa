"""``Memory.mail``: the messages of the identity a ``Memory`` acts as, through the API."""

from __future__ import annotations

from pathlib import Path

from memkeeper import Memory


def test_send_inbox_deliver_ack_through_the_api(sample: Path) -> None:
    human, agent = Memory(sample, "human"), Memory(sample, "codex:t1")
    try:
        held = agent.claim(["memory/decisions.md"], ttl=60)
        asked = human.mail.request_release(held.id, "release it please")
        note = human.mail.send("codex:t1", "and a note", about="memory/decisions.md")
        assert [m.id for m in agent.mail.inbox()] == [asked.id, note.id]
        told, _ = agent.mail.deliver()
        assert [m.kind for m in told] == ["release-request", "message"]
        assert agent.mail.deliver() == ([], [])
        assert agent.mail.ack(asked.id).acked_at is not None
        assert [m.id for m in agent.mail.inbox()] == [note.id]
        assert [m.id for m in agent.mail.inbox(acked=True)] == [asked.id, note.id]
    finally:
        human.close()
        agent.close()

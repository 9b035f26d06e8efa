"""Cline's executable hooks: each runs the gate with its event, is told from a user's own by
its marker, and (through the real scripts, tests/e2e/test_install_agents.py) runs a user's
hook kept beside it first."""

from __future__ import annotations

from memkeeper.gate import clinehooks

# -- Cline's files and the names --------------------------------------------------------------


def test_clines_scripts_run_the_gate_with_their_event() -> None:
    for event in clinehooks.EVENTS:
        script = clinehooks.script(event)
        assert script.startswith("#!/bin/sh\n" + clinehooks.MARKER.format(event=event))
        assert f'exec "$m" hook cline --event {event}' in script
        assert clinehooks.is_ours(script.encode())
    assert not clinehooks.is_ours(b"#!/bin/sh\nexec memkeeper hook cline\n")

"""``memkeeper doctor [AGENT...]`` (docs/reference.md §4.30): for each installed gate, whether
it will run as its agent runs it, and the exact fix where it will not.

``facts`` collects what decides it (the configuration files of the project and of the user,
and where a login shell finds memkeeper); ``judge`` turns those facts into findings, purely;
``userhook`` is the one thing ``--fix`` writes: Claude Code's user-level gate, which makes
the gate run in sessions started in a subdirectory of the repository or above it.
"""

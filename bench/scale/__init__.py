"""Issue 26: what an operation costs at two sizes of repository or history, side by side.

    .venv/bin/python -m bench.scale [--quick] [--only AREA …] [--json] [--dir D]

Each area module (``bench/scale/<area>.py``) exposes ``run(work, quick) -> list[Growth]``:
it builds its fixtures at the small and the big size under ``work`` and times the same
operation on both in one run, in turn, so both see the machine's noise. ``__main__`` runs
them one after the other and prints one table: the figure at each size, their ratio, the
goal on the ratio (and on the big figure where the issue sets a limit), met or not.
"""

"""``git merge-file``, the line merge git users already trust, run on three texts
(docs/reference.md §4 "Merging stale patches"). The rules around it are
``markdown.linemerge``'s; this module only writes the three texts to a private temporary
directory, runs git there without any user or system configuration, and reads the result.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from memkeeper.markdown import linemerge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Outcome = Literal["merged", "conflict", "unavailable"]

MERGE_TIMEOUT_S = 30.0


def merge(
    base: bytes, theirs: bytes, mine: bytes, where: str, *, quick: bool = True
) -> tuple[Outcome, bytes]:
    """Merge the change ``base`` → ``mine`` into ``theirs``: ``("merged", text)``, or
    ``("conflict", b"")`` when the two changes overlap, or ``("unavailable", b"")`` when git
    cannot be run. ``where``: a directory for the temporary files (memkeeper's home, so the
    texts stay beside the store that holds them). With ``quick``, two sides that only
    inserted lines are merged here, as git would (``linemerge.insertions``)."""
    if mine in (base, theirs):
        return "merged", theirs
    if theirs == base:
        return "merged", mine
    b, t, m, suffix = linemerge.terminated(base, theirs, mine)
    found = linemerge.insertions(b, t, m) if quick else None
    if found is not None:
        return "merged", found[: -len(suffix)] if suffix else found
    size = linemerge.marker_size(b, t, m)
    labels = ["-L", "theirs", "-L", "base", "-L", "mine"]
    with tempfile.TemporaryDirectory(prefix="merge-", dir=where) as tmp:
        paths = []
        for name, text in (("theirs", t), ("base", b), ("mine", m)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as handle:
                handle.write(text)
            paths.append(path)
        try:
            done = subprocess.run(
                ["git", "merge-file", "-p", "--diff3", f"--marker-size={size}", *labels, *paths],
                capture_output=True,
                cwd=tmp,
                env=_git_env(),
                timeout=MERGE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return "unavailable", b""
    if done.returncode < 0 or done.returncode > 127:
        return "conflict", b""  # git refused the texts (a NUL byte reads as binary)
    merged = linemerge.resolve(done.stdout, size)
    if merged is None:
        return "conflict", b""
    if suffix and merged.endswith(suffix):
        merged = merged[: -len(suffix)]
    return "merged", merged


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}

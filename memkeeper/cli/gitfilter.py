"""``memkeeper filter clean PATH``: git's clean filter for generated pages (docs/reference.md
§4.32): the page's bytes on stdin, what git stores of them on stdout (``regions.gitform``).

Git runs it (``filter.memkeeper.clean``) for each file ``.gitattributes`` gives
``filter=memkeeper``, from the top of the working tree, with PATH relative to it; on
``git add``, and on ``git status``, ``checkout`` or ``stash`` for a file whose stat data changed.
So it is quick — no store, no argparse; the policy is the one nearest above PATH in the
working tree — and it never breaks git: whatever goes wrong (no policy, an invalid one,
broken markers, a file that is not a generated page of a ``git: placeholder`` rule) it writes
its input back unchanged, and always exits 0.
"""

from __future__ import annotations

import os

from memkeeper.names import POLICY_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO


def clean(top: str, path: str, data: bytes) -> bytes:
    """What git stores of ``data``, the working file at ``path`` (relative to ``top``)."""
    try:
        found = _root_of(top, path)
        if found is None:
            return data
        root, rel = found
        from memkeeper.policy.loader import load_policy
        from memkeeper.regions.gitform import stored

        rule = load_policy(root).classify(rel)
        if rule is None or rule.file_class != "generated" or rule.git != "placeholder":
            return data
        return stored(data, rel)
    except Exception:  # git must never fail because of this filter: store the bytes as they are
        return data


def _root_of(top: str, path: str) -> tuple[str, str] | None:
    """The memory root holding ``path`` (the nearest directory above it, up to ``top``, with
    a policy file) and the path relative to it; None outside any."""
    top = os.path.abspath(top)
    full = os.path.normpath(os.path.join(top, path))
    here = os.path.dirname(full)
    while here == top or here.startswith(top.rstrip(os.sep) + os.sep):
        if os.path.isfile(os.path.join(here, POLICY_FILE)):
            return here, os.path.relpath(full, here).replace(os.sep, "/")
        if here == top:
            return None
        here = os.path.dirname(here)
    return None


def run_clean(path: str, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Read the page, write its stored form; 0 whatever happened."""
    data = stdin.read()
    stdout.write(clean(os.getcwd(), path, data))
    stdout.flush()
    return 0

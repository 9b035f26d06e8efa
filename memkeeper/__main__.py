"""``python -m memkeeper``."""

from __future__ import annotations

import sys

from memkeeper.cli import main

if __name__ == "__main__":
    sys.exit(main())

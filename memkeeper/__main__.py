"""``python -m memkeeper``."""

from __future__ import annotations

import sys

from memkeeper.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m teamsync``."""

from __future__ import annotations

import sys

from teamsync.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""The Claude Code hook's entry: ``python -I -S <this file> guard [--event EVENT]``.

A script is compiled from source at every start, so this one only loads
:mod:`teamsync._hookboot` (byte-compiled, from beside it, without importing the
``teamsync`` package) and runs it: the fast path (:mod:`teamsync._fastpath`),
else the full guard. Why ``-I -S``: see :mod:`teamsync._hookboot`.
"""

import os
import sys

if __name__ == "__main__":
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, _here)
    try:
        import _hookboot  # type: ignore[import-not-found]
    finally:
        del sys.path[0]
    sys.exit(_hookboot.run(sys.argv[1:], _here))

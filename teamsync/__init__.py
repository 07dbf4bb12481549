"""teamsync: share an AI coding assistant's team memory safely.

The public API is exactly :data:`__all__`; everything else is internal.
"""

from __future__ import annotations

from teamsync._version import __version__

__all__ = ["__version__"]

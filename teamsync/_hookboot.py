"""The body of the Claude Code hook's entry :mod:`teamsync._hook`, in a module.

Python compiles a script from source at every start but a module only once, so
the entry script stays a few lines and everything it runs lives here. Loaded as a
top-level module from beside the entry (the ``teamsync`` package is not imported
for it).

``teamsync install-hooks --claude-code`` writes the hook commands this way, since
a hook runs twice around every Bash call and most of a plain ``python -m
teamsync`` start is spent before teamsync's code runs:

* ``-S`` skips ``site``: no ``.pth`` files, no editable-install finder. This file
  puts the directory holding the ``teamsync`` package on ``sys.path`` itself; the
  first import that is not found there (a third-party library loaded lazily, on a
  finding) runs ``site`` once and tries again, so nothing is lost, only deferred.
* ``-I`` (isolated) keeps the current directory and ``PYTHON*`` variables off the
  path: the project a model works in cannot put a ``teamsync`` (or ``json``)
  package of its own in front of the real one, which ``python -m teamsync`` run in
  the project would import.

Before any of that, :mod:`teamsync._fastpath` answers the common call (a Bash
command that names nothing the text filter acts on, and changes nothing the
guard watches) with ``os`` and ``_json`` only; anything else comes here, to the
full guard, with the payload as read.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType


class _SiteOnMiss:
    """A last finder on ``sys.meta_path``: a top-level import that is not found, but
    is in this interpreter's ``site-packages``, runs ``site`` (the step ``-S``
    skipped) once and is looked up again. Optional imports that are missing
    everywhere (``org.python.core`` in :mod:`copy`) cost one directory lookup."""

    done = False

    @classmethod
    def find_spec(
        cls, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if cls.done or path is not None:
            return None
        import importlib.machinery

        finder = importlib.machinery.PathFinder
        if finder.find_spec(name, _site_dirs()) is None:
            return None
        cls.done = True
        import site

        site.main()
        return finder.find_spec(name)


def _site_dirs() -> list[str]:
    import os

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    venv = os.path.dirname(os.path.dirname(sys.executable))
    prefixes = [venv] if os.path.exists(os.path.join(venv, "pyvenv.cfg")) else []
    prefixes.append(sys.prefix)
    return [os.path.join(p, "lib", version, "site-packages") for p in prefixes]


def main(argv: list[str]) -> int:
    from teamsync.cli import main as cli_main

    return cli_main(argv)


def run(argv: list[str], here: str) -> int:
    """The hook command: the fast path, else the full guard (``here``: the directory
    holding this file, put on ``sys.path`` while the fast path is loaded)."""
    import os

    sys.path.insert(0, here)
    try:
        import _fastpath  # type: ignore[import-not-found]
    finally:
        del sys.path[0]
    if _fastpath.try_fast(argv):
        return 0
    top = os.path.dirname(here)
    if top not in sys.path:
        sys.path.insert(0, top)
    sys.meta_path.append(_SiteOnMiss)
    return main(argv)

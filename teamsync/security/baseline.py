"""The baseline file: fingerprints of accepted findings, so old noise does not block new work.

Format (JSON, versioned; a future bump adds an upgrade step in :func:`load_baseline`)::

    {"version": 1,
     "fingerprints": [{"fingerprint": "…", "rule": "github-pat", "path": "notes.md", "line": 3}]}

Only fingerprints are matched; rule, path and line are there for reviewers.
The secret itself is never written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from teamsync._files import write_atomic
from teamsync.errors import ConfigError
from teamsync.security.secrets import Finding

BASELINE_VERSION = 1


def _entries(data: Any, path: Path) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("fingerprints"), list):
        raise ConfigError(f"{path}: not a teamsync baseline; regenerate it with --update-baseline")
    version = data.get("version")
    if version != BASELINE_VERSION:
        raise ConfigError(
            f"{path}: baseline version {version!r} is not supported (expected "
            f"{BASELINE_VERSION}); regenerate it with --update-baseline"
        )
    return [entry for entry in data["fingerprints"] if isinstance(entry, dict)]


def load_baseline(path: Path) -> frozenset[str]:
    """The fingerprints in the baseline file at ``path`` (missing file: empty)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read the baseline ({type(exc).__name__}); "
            "fix or regenerate it with --update-baseline"
        ) from None
    return frozenset(str(e["fingerprint"]) for e in _entries(data, path) if "fingerprint" in e)


def render_baseline(findings: Iterable[Finding]) -> str:
    """The baseline document for ``findings`` (sorted, stable across runs)."""
    unique = {(f.fingerprint, f.path, f.line, f.rule): f for f in findings}
    entries = [
        {"fingerprint": f.fingerprint, "rule": f.rule, "path": f.path, "line": f.line}
        for f in sorted(unique.values(), key=lambda f: (f.path, f.line, f.rule, f.fingerprint))
    ]
    return json.dumps({"version": BASELINE_VERSION, "fingerprints": entries}, indent=2) + "\n"


def save_baseline(path: Path, findings: Iterable[Finding]) -> None:
    """Write the baseline atomically (temp file + fsync + rename)."""
    write_atomic(path, render_baseline(findings), new_mode=0o644)

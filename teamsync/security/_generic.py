"""Generic secrets through detect-secrets' own detectors and false-positive filters.

Imported only when a scan found candidate lines (a secret-named key assigned a
plausible value), because importing detect-secrets costs ~130 ms. Each
candidate is rewritten as ``key = "value"`` so every detect-secrets file type
reads it the same way, then detect-secrets' KeywordDetector and high-entropy
plugins run with its heuristic filters, inside one ``transient_settings``
block that leaves detect-secrets' global settings as they were.

Nothing here keeps, logs or raises the secret: results are (index, rule id,
fingerprint), and a detect-secrets failure is reported by its type name only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from teamsync.errors import TeamsyncError
from teamsync.security.rules import looks_like_placeholder

_PLUGINS: list[dict[str, Any]] = [
    {"name": "KeywordDetector"},
    {"name": "Base64HighEntropyString", "limit": 4.2},
    {"name": "HexHighEntropyString", "limit": 3.0},
]
_FILTERS = [
    f"detect_secrets.filters.heuristic.{name}"
    for name in (
        "is_sequential_string",
        "is_potential_uuid",
        "is_likely_id_string",
        "is_templated_secret",
        "is_prefixed_with_dollar_sign",
        "is_indirect_reference",
        "is_lock_file",
        "is_not_alphanumeric_string",
        "is_swagger_file",
    )
]
_CONFIG: dict[str, Any] = {
    "plugins_used": _PLUGINS,
    "filters_used": [{"path": path} for path in _FILTERS],
}
_NON_WORD = re.compile(r"\W")


def _word_first(value: str) -> str:
    """``value`` as KeywordDetector can read it: its pattern needs a word character first."""
    return value if value[:1].isalnum() or value[:1] == "_" else "a" + value


def _rule_for(secret_type: str) -> str:
    return "generic-secret" if secret_type == "Secret Keyword" else "generic-high-entropy"


def _run(items: Sequence[tuple[str, str, str]]) -> list[tuple[int, str, str]]:
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import get_plugins, transient_settings

    from teamsync.security.secrets import fingerprint

    by_path: dict[str, list[int]] = {}
    for index, (path, _, _) in enumerate(items):
        by_path.setdefault(path, []).append(index)
    results: dict[int, tuple[str, str]] = {}
    with transient_settings(_CONFIG) as settings:
        settings.plugins = {
            p["name"]: {k: v for k, v in p.items() if k != "name"} for p in _PLUGINS
        }
        get_plugins.cache_clear()
        for path, indexes in by_path.items():
            lines = [
                (n, f'{_NON_WORD.sub("_", items[i][1])} = "{_word_first(items[i][2])}"')
                for n, i in enumerate(indexes, start=1)
            ]
            for potential in _process_line_based_plugins(lines, path):
                index = indexes[potential.line_number - 1]
                value = str(potential.secret_value or "")
                if not value or looks_like_placeholder(items[index][2]):
                    continue
                rule_id = _rule_for(str(potential.type))
                weak = items[index][1] == "api_key"  # a token/key label: entropy says more
                preferred = "generic-high-entropy" if weak else "generic-secret"
                if index not in results or rule_id == preferred:
                    results[index] = (rule_id, fingerprint(rule_id, items[index][2]))
    return [(index, rule, fp) for index, (rule, fp) in sorted(results.items())]


def detect(items: Sequence[tuple[str, str, str]]) -> list[tuple[int, str, str]]:
    """For ``(path, key, value)`` candidates, the flagged ones as ``(index, rule, fingerprint)``."""
    try:
        return _run(items)
    except Exception as exc:  # noqa: BLE001 - never let a third-party message carry a secret
        raise TeamsyncError(
            f"generic secret detection failed inside detect-secrets ({type(exc).__name__}); "
            "rerun with `teamsync scan` on the file, or report a bug"
        ) from None

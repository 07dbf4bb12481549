"""Generic secrets through detect-secrets' own detectors and false-positive filters.

Imported only when a scan found candidate lines (a secret-named key assigned a
plausible value). Importing detect-secrets costs ~100 ms, 68 ms of it its
``requests`` import, which only its network verifiers use: :func:`_requests_deferred`
hands detect-secrets a module object that imports ``requests`` on first
attribute access (and the same for ``multiprocessing``, which only its
multi-file scan uses), and the three plugins are built directly rather than through
detect-secrets' registry (which imports every plugin module). A candidate line
then costs ~30 ms of import instead of ~100. Each
candidate is rewritten as ``key = "value"`` so every detect-secrets file type
reads it the same way, then detect-secrets' KeywordDetector and high-entropy
plugins run with its heuristic filters, inside one ``transient_settings``
block that leaves detect-secrets' global settings as they were. The lines go
through the stages of detect-secrets' own ``_process_line_based_plugins`` (line
filters, ``_scan_line`` with its secret filters, context filters), with our
plugin instances in place of the registry's.

Why not the documented entry points (measured on detect-secrets 1.5.0 for
issue 13 by ``bench/generic_api.py``; figures in docs/benchmarks.md):

- ``scan_line`` under ``transient_settings(_CONFIG)`` builds its plugins through
  the registry, which imports all 27 plugin modules. Two of them read
  ``requests.Response`` in annotations at import time; a stand-in that answers
  such module-level reads with a lazy reference keeps ``requests`` unloaded,
  but the registry alone makes detect-secrets' import and first line scan
  cost half as much again: 32 against 22 ms CPU (60 detect-secrets modules
  loaded against 37), and ``scan --staged`` of a 10-file commit holding one
  candidate 136 against 116 ms (medians of 15 fresh processes, load 5).
  And it is the ad-hoc string scan, with other findings: it runs the
  high-entropy plugins in eager mode (when the quoted search finds nothing,
  unquoted substrings, with no entropy limit), skips the line filters
  (``is_indirect_reference``) and ignores the file name. Fed 616 (path, key,
  value) triples directly, it flagged 140 more and changed the rule, and so the
  fingerprint, of 84. Behind this module's callers the two agreed on every
  input tried (the candidates of both 10 MB benchmark corpora, 1,001 edge
  lines end to end), but only because teamsync's candidate filters drop those
  values first.
- ``SecretsCollection.scan_file`` reads the file from disk, so the candidate
  secrets would have to be written out; ``scan_diff`` needs ``unidiff`` (not a
  dependency), builds its plugins through the same registry, and adds a
  file-name filter stage (``is_invalid_file`` drops a path that is not a file
  in the working directory) that the line pipeline here does not have.

Nothing here keeps, logs or raises the secret: results are (index, rule id,
fingerprint), and a detect-secrets failure is reported by its type name only.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import types
from collections.abc import Iterator, Sequence

from teamsync.errors import ScannerUnsupported, SecurityError
from teamsync.security.rules import looks_like_placeholder

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

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
DIRECT_KEY = "label-model"
"""The key of a candidate the label model judged alone: a PIN, an app password written in
groups, a UUID-shaped key under a secret label (detect-secrets drops digits-only values and
UUIDs by design; the label model has already read the label and the value)."""


def _word_first(value: str) -> str:
    """``value`` as KeywordDetector can read it: its pattern needs a word character first."""
    return value if value[:1].isalnum() or value[:1] == "_" else "a" + value


def _rule_for(secret_type: str) -> str:
    return "generic-secret" if secret_type == "Secret Keyword" else "generic-high-entropy"


class _OnFirstUse(types.ModuleType):
    """Stands in for a module until an attribute is read, then imports the real one.

    The stand-in leaves ``sys.modules`` first: importing its own name would
    otherwise hand the stand-in back (endless recursion). Modules that captured
    it keep reaching the real module through it.
    """

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        return getattr(real, name)


_DEFERRED = ("requests", "multiprocessing")
"""Modules detect-secrets imports at load time but a line scan never uses."""


@contextlib.contextmanager
def _requests_deferred() -> Iterator[None]:
    """While detect-secrets imports and runs, ``import requests`` (or multiprocessing) yields a stand-in."""
    stand_ins = {}
    for name in _DEFERRED:
        if name not in sys.modules:
            stand_ins[name] = sys.modules[name] = _OnFirstUse(name)
    try:
        yield
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]  # a later import gets the real module


SUPPORTED = ">=1.5,<1.6"
"""The detect-secrets releases whose internals this module is written against (pyproject.toml
holds the same bound); :func:`check_internals` verifies them at run time."""
PRIVATE_API: dict[str, tuple[str, ...]] = {
    "_is_filtered_out": ("required_filter_parameters",),
    "_scan_line": ("plugin", "filename", "line", "line_number", "context"),
    "get_code_snippet": ("lines", "line_number"),
}
"""The names of ``detect_secrets.core.scan`` used here, each with the parameters passed to it.
(``_is_filtered_out`` takes the filter parameters as ``**kwargs``.)"""


def check_internals(scan: Any) -> None:
    """Raise :class:`ScannerUnsupported`, naming the installed version, unless ``scan`` has
    every private name this module calls, taking the parameters it passes."""
    missing = []
    for name, params in PRIVATE_API.items():
        function = getattr(scan, name, None)
        code = getattr(function, "__code__", None)
        if code is None or not set(params) <= set(
            code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        ):
            missing.append(name)
    if missing:
        raise ScannerUnsupported(
            f"detect-secrets {_version()} is not supported by this teamsync (it lacks "
            f"{', '.join(missing)} in detect_secrets.core.scan); install a supported release: "
            f"pip install 'detect-secrets{SUPPORTED}'"
        )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("detect-secrets")
    except PackageNotFoundError:  # pragma: no cover - imported but not installed as a dist
        return "(unknown version)"


def _import() -> tuple[Any, Any, tuple[Any, ...]]:
    """detect-secrets' line scanning helpers, settings scope and the three plugin classes."""
    try:
        from detect_secrets.core import scan
        from detect_secrets.plugins.high_entropy_strings import (
            Base64HighEntropyString,
            HexHighEntropyString,
        )
        from detect_secrets.plugins.keyword import KeywordDetector
        from detect_secrets.settings import transient_settings
    except ImportError as exc:
        raise ScannerUnsupported(
            f"detect-secrets {_version()} is not supported by this teamsync (cannot import "
            f"{exc.name or 'a module it needs'}); install a supported release: "
            f"pip install 'detect-secrets{SUPPORTED}'"
        ) from None
    check_internals(scan)
    return (
        scan,
        transient_settings,
        (KeywordDetector, Base64HighEntropyString, HexHighEntropyString),
    )


def _lines_flagged(
    scan: Any, plugins: list[Any], lines: list[tuple[int, str]], path: str
) -> Iterator[Any]:
    """detect-secrets' ``_process_line_based_plugins`` with our plugin instances."""
    content = [line for _, line in lines]
    for number, raw in lines:
        line = raw.rstrip()
        snippet = scan.get_code_snippet(lines=content, line_number=number)
        if scan._is_filtered_out(
            required_filter_parameters=["line"], filename=path, line=line, context=snippet
        ):
            continue
        for plugin in plugins:
            for secret in scan._scan_line(
                plugin=plugin, filename=path, line=line, line_number=number, context=snippet
            ):
                if not scan._is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=snippet,
                ):
                    yield secret


def _run(items: Sequence[tuple[str, str, str]]) -> list[tuple[int, str, str]]:
    from teamsync.security.secrets import fingerprint

    scan, transient_settings, classes = _import()
    by_path: dict[str, list[int]] = {}
    for index, (path, key, _) in enumerate(items):
        if key != DIRECT_KEY:
            by_path.setdefault(path, []).append(index)
    results: dict[int, tuple[str, str]] = {}
    for index, (_, key, value) in enumerate(items):
        if key == DIRECT_KEY:  # a shape detect-secrets has no plugin for (see _labels)
            results[index] = ("generic-secret", fingerprint("generic-secret", value))
    with transient_settings(_CONFIG):
        plugins = [
            cls(**{k: v for k, v in spec.items() if k != "name"})
            for cls, spec in zip(classes, _PLUGINS, strict=True)
        ]
        for path, indexes in by_path.items():
            lines = [
                (n, f'{_NON_WORD.sub("_", items[i][1])} = "{_word_first(items[i][2])}"')
                for n, i in enumerate(indexes, start=1)
            ]
            for potential in _lines_flagged(scan, plugins, lines, path):
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
        with _requests_deferred():
            return _run(items)
    except ScannerUnsupported:
        raise  # the installation is at fault, not the text: stop the gate as a whole
    except Exception as exc:  # noqa: BLE001 - never let a third-party message carry a secret
        raise SecurityError(
            f"generic secret detection failed inside detect-secrets ({type(exc).__name__}); "
            "rerun with `teamsync scan` on the file, or report a bug"
        ) from None

"""Issue 25 §5: the detect-secrets internals the generic layer drives exist and behave as used.

The generic layer calls ``detect_secrets.core.scan._is_filtered_out``, ``_scan_line`` and
``get_code_snippet`` directly and swaps stand-ins for ``requests`` and ``multiprocessing``
into ``sys.modules`` while detect-secrets loads (see ``teamsync/security/_generic.py``).
These tests hold the installed release to that, and show what happens when an upgrade
takes one away: one clear error naming the version, never a refusal of every memory.
"""

from __future__ import annotations

import random
import string
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from teamsync.errors import ScannerUnsupported, SecurityError
from teamsync.security import _generic
from teamsync.security.guard import guard_many
from teamsync.security.secrets import scan_text

ROOT = Path(__file__).resolve().parents[2]


def _password(seed: int) -> str:
    g = random.Random(seed)
    return "Q" + "".join(g.choice(string.ascii_letters + string.digits) for _ in range(12)) + "#7"


def test_the_pinned_release_is_the_one_installed() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"detect-secrets{_generic.SUPPORTED}"' in pyproject
    major, minor = (int(x) for x in version("detect-secrets").split(".")[:2])
    assert (major, minor) == (1, 5)


def test_the_private_names_exist_and_take_the_parameters_passed() -> None:
    from detect_secrets.core import scan

    _generic.check_internals(scan)  # raises if a name or a parameter is gone
    for name in _generic.PRIVATE_API:
        assert callable(getattr(scan, name))


def test_the_private_pipeline_behaves_as_used() -> None:
    """A line filter drops an indirect reference; ``_scan_line`` yields the secret it finds."""
    scan, transient_settings, classes = _generic._import()
    value = _password(1)
    with transient_settings(_generic._CONFIG):
        plugins = [
            cls(**{k: v for k, v in spec.items() if k != "name"})
            for cls, spec in zip(classes, _generic._PLUGINS, strict=True)
        ]
        lines = [(1, f'password = "{value}"'), (2, "password = get_secret_value()")]
        flagged = list(_generic._lines_flagged(scan, plugins, lines, "team/n.md"))
    assert {s.line_number for s in flagged} == {1}
    assert {s.secret_value for s in flagged} == {value}
    assert scan.get_code_snippet(lines=["a", "b", "c"], line_number=2).target_line == "b"


def test_the_sys_modules_swaps_keep_requests_unloaded_and_restore_the_table() -> None:
    code = (
        "import sys\n"
        "from teamsync.security.secrets import scan_text\n"
        f"found = scan_text('password = \"{_password(2)}\"', 'n.md')\n"
        "print(len(found), 'requests' in sys.modules, 'detect_secrets' in sys.modules,\n"
        "      type(sys.modules.get('multiprocessing')).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, requests_loaded, ds_loaded, mp = out.stdout.split()
    assert (count, requests_loaded, ds_loaded) == ("1", "False", "True")
    assert mp != "_OnFirstUse"  # no stand-in is left behind in sys.modules


def test_a_missing_private_name_is_one_clear_error_naming_the_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from detect_secrets.core import scan

    monkeypatch.delattr(scan, "_scan_line")
    with pytest.raises(ScannerUnsupported) as caught:
        scan_text(f"password: {_password(3)}\n", "team/n.md")
    message = str(caught.value)
    assert version("detect-secrets") in message and "_scan_line" in message
    assert "detect-secrets>=1.5,<1.6" in message
    assert not isinstance(caught.value, SecurityError)


def test_a_missing_private_name_stops_a_gate_instead_of_refusing_each_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from detect_secrets.core import scan

    monkeypatch.setattr(scan, "_is_filtered_out", lambda **kwargs: False)  # other parameters
    items = [(f"team/n{i}.md", f"db password: {_password(10 + i)}\n", True) for i in range(5)]
    with pytest.raises(ScannerUnsupported):
        guard_many(items)
    monkeypatch.undo()
    verdicts = guard_many(items)  # the same memories, with the real internals: refused by finding
    assert set(verdicts.refused) == {key for key, _, _ in items}

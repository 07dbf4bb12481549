"""The shipped anchor table (teamsync/security/_anchors.py) is exactly what the rules give."""

from __future__ import annotations

from teamsync.security import _anchors
from teamsync.security.secrets import rules_anchors, rules_fingerprint


def test_the_shipped_table_matches_the_rules() -> None:
    # After changing a rule: python -m teamsync.security.secrets --write-anchors
    assert _anchors.FINGERPRINT == rules_fingerprint()
    assert list(_anchors.ANCHORS) == rules_anchors(use_table=False)


def test_a_stale_table_is_never_used(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(_anchors, "FINGERPRINT", "stale")
    monkeypatch.setattr(_anchors, "ANCHORS", ())
    assert rules_anchors() == rules_anchors(use_table=False)

"""SARIF 2.1.0 for GitHub code scanning (``github/codeql-action/upload-sarif``).

One run, tool ``teamsync``; ``tool.driver.rules`` lists every rule that fired;
each result has ``ruleId``, a message naming the rule (never the secret), a
physical location (``artifactLocation.uri`` + ``region.startLine``) and
``partialFingerprints`` carrying our fingerprint so code scanning tracks a
finding across commits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from teamsync._version import __version__
from teamsync.security.rules import rule_label
from teamsync.security.secrets import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    return PurePath(path).as_posix().removeprefix("./")


def _rule(rule_id: str) -> dict[str, Any]:
    label = rule_label(rule_id)
    return {
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.split("-")),
        "shortDescription": {"text": label},
        "fullDescription": {"text": f"{label}: a likely secret committed in plain text."},
        "help": {
            "text": "Remove the secret and rotate it: it may already be exposed. A reviewer "
            "who confirms a false positive records its fingerprint in the project's "
            "reviewed allowlist (docs/scanning.md); inline comments do not count in team memory."
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["security", "secret"], "security-severity": "8.0"},
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": "error",
        "message": {
            "text": f"{rule_label(finding.rule)} ({finding.rule}) found; remove and rotate it."
        },
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.path)},
                    "region": {"startLine": max(1, finding.line)},
                }
            }
        ],
        "partialFingerprints": {"teamsyncFingerprint/v1": finding.fingerprint},
    }
    if finding.commit:  # --git-range: the commit that added the line
        result["partialFingerprints"]["teamsyncCommit/v1"] = finding.commit
        result["properties"] = {"commit": finding.commit}
        result["message"]["text"] += f" Added in commit {finding.commit}."
    return result


def render_sarif(findings: Sequence[Finding]) -> str:
    """The SARIF 2.1.0 log for ``findings`` as a JSON string."""
    rule_ids = sorted({f.rule for f in findings})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "teamsync",
                        "version": __version__,
                        "rules": [_rule(rule_id) for rule_id in rule_ids],
                    }
                },
                "results": [_result(f, index[f.rule]) for f in findings],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"

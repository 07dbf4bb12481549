"""schemathesis against the served OpenAPI document: no 5xx, responses conform."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi import checks

from teamsync.server.storage import open_storage
from testing.server import app_for, token_for, uvicorn_server

CHECKLIST = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


@pytest.mark.slow
def test_served_openapi_document_holds(tmp_path: Path) -> None:
    store = open_storage(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    token = token_for(store)
    with uvicorn_server(app_for(store, max_entries=20)) as url:
        schema = schemathesis.openapi.from_url(url + "/openapi.json")
        operations = [op.ok() for op in schema.get_all_operations()]
        assert {(o.method.upper(), o.path) for o in operations} >= {
            ("GET", "/api/claude_code/team_memory"),
            ("PUT", "/api/claude_code/team_memory"),
            ("GET", "/api/claude_code/team_memory/history"),
            ("GET", "/api/claude_code/team_memory/capabilities"),
        }
        seen: set[int] = set()
        calls = [0]
        for op in operations:

            @hypothesis.given(case=op.as_strategy())
            @hypothesis.settings(
                max_examples=30,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(hypothesis.HealthCheck),
            )
            def run(case: schemathesis.Case) -> None:
                calls[0] += 1
                if case.query and "repo" in case.query and calls[0] % 2:
                    case.query["repo"] = "acme/widgets"  # half the cases reach the store
                response = case.call(base_url=url, headers={"Authorization": f"Bearer {token}"})
                seen.add(response.status_code)
                assert response.status_code < 500, (
                    f"{case.method} {case.path}: {response.text[:200]}"
                )
                case.validate_response(response, checks=CHECKLIST)

            run()
    assert 200 in seen and 422 in seen
    store.close()

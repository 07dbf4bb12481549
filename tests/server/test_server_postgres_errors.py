"""A PostgreSQL that refuses the connection says why, and what to do (issue 24 §17).

It used to print only "OperationalError; check --db …", even with ``-v``, for
a role that did not exist.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from teamsync.errors import ServerError
from teamsync.server.storage import open_storage
from testing.postgres import Cluster

pytestmark = pytest.mark.postgres
TEAMSYNC = str(Path(sys.executable).parent / "teamsync")
PASSWORD = "pw-" + "kept-out-of-output"


def _refusal(url: str) -> ServerError:
    with pytest.raises(ServerError) as caught:
        open_storage(url)
    return caught.value


def test_a_missing_role_or_database_is_named_with_the_command_that_makes_it(
    pg_cluster: Cluster,
) -> None:
    port = pg_cluster.port
    role = _refusal(f"postgresql://nobody_here:{PASSWORD}@127.0.0.1:{port}/postgres")
    assert 'role "nobody_here" does not exist' in str(role)
    assert "createuser --pwprompt nobody_here" in str(role) and "docs/server.md" in str(role)
    assert PASSWORD not in str(role) and PASSWORD not in str(role.detail)
    assert role.detail is not None and "FATAL" in role.detail
    database = _refusal(f"postgresql://postgres@127.0.0.1:{port}/no_such_db")
    assert 'database "no_such_db" does not exist' in str(database)
    assert "createdb -O ROLE no_such_db" in str(database)
    with pytest.raises(ServerError, match="Connection refused; check the host and port"):
        open_storage(f"postgresql://postgres@127.0.0.1:{_closed_port()}/postgres")


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def test_verbose_adds_libpq_s_own_words_and_never_the_password(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    url = f"postgresql://nobody_here:{PASSWORD}@127.0.0.1:{pg_cluster.port}/postgres"
    env = {**os.environ, "HOME": str(tmp_path)}

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TEAMSYNC, *flags, "token", "list", "--db", url],
            env=env, capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip

    plain, verbose = run(), run("-v")
    assert plain.returncode == verbose.returncode == 1
    assert 'role "nobody_here" does not exist; create the role' in plain.stderr
    assert "detail:" not in plain.stderr
    assert "detail: OperationalError: connection failed" in verbose.stderr
    assert 'FATAL: role "nobody_here" does not exist' in verbose.stderr
    for proc in (plain, verbose):
        assert PASSWORD not in proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr

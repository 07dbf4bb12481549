"""A throwaway PostgreSQL cluster for the test suite (no silent skip).

``initdb`` + ``pg_ctl`` into a temporary directory owned by the ``postgres``
user (we may run as root in CI, and PostgreSQL refuses to run as root), on a
free loopback port with its socket in the same directory. Durability is off
(``fsync=off``): this cluster lives for one test session (benchmarks ask for
``durable=True``).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "run `bash scripts/ensure-services.sh` (installs Debian's postgresql package)"
_ids = itertools.count(1)


def find_bindir() -> Path:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return Path(candidate)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError(f"PostgreSQL binaries (initdb, pg_ctl) not found: {INSTALL_HINT}")


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    root: Path
    bindir: Path
    port: int

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def create_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(_ids)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            _as_owner(
                [
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.root / "data"),
                    "-m",
                    "immediate",
                    "stop",
                ]
            ),
            capture_output=True,
            check=False,
            timeout=60,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(*, durable: bool = False) -> Cluster:
    """Start a cluster or raise RuntimeError saying why (with the server log's tail).

    ``durable`` keeps PostgreSQL's own durability (fsync, synchronous commit, full
    page writes) on, as a benchmark of a real deployment needs; tests leave it off.
    """
    bindir = find_bindir()
    root = Path(tempfile.mkdtemp(prefix="teamsync-pg-"))
    if os.geteuid() == 0:
        try:
            shutil.chown(root, "postgres", "postgres")
        except (LookupError, OSError) as exc:
            raise RuntimeError(
                f"cannot hand {root} to the `postgres` user ({exc}); {INSTALL_HINT}"
            ) from exc
    data, log = root / "data", root / "server.log"
    port = _free_port()
    init = subprocess.run(
        _as_owner(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ]
        ),
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed: {init.stderr.strip()[-2000:]}")
    fast = "" if durable else "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 {fast}-c max_connections=300"
    start = subprocess.run(
        _as_owner(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                opts,
                "-l",
                str(log),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if start.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else start.stderr
        raise RuntimeError(f"PostgreSQL did not start: {tail.strip()}")
    return Cluster(root=root, bindir=bindir, port=port)

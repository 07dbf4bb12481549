"""Half-open connections against the server: plain uvicorn (as `teamsync serve` ran
before issue 11) versus `teamsync serve`'s bounded runtime, under a 1,024-descriptor limit.

    .venv/bin/python bench/server_halfopen.py [--idle 1100] [--wait 12]

Each server runs in its own process with RLIMIT_NOFILE = 1024. The script opens
``--idle`` connections that never send a byte, then times ``GET /healthz``
(5 s timeout), waits ``--wait`` seconds and counts how many idle connections
the server has closed. Prints one table row per server.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
PLAIN = """
import sys, uvicorn
from teamsync.server.app import create_app
from teamsync.server.limits import ServerConfig
app = create_app(ServerConfig(db_url=sys.argv[1]))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning",
            proxy_headers=False, server_header=False)
"""


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(kind: str, db: str, port: int) -> subprocess.Popen[bytes]:
    if kind == "plain uvicorn":
        cmd = [sys.executable, "-c", PLAIN, db, str(port)]
    else:
        cmd = [str(Path(sys.executable).parent / "teamsync"), "serve", "--port", str(port)]
        cmd += ["--db", db]
    proc = subprocess.Popen(
        cmd, preexec_fn=_limit_fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx2.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"{kind} did not start")


def _closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def run(kind: str, idle: int, wait: float) -> tuple[str, str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        proc = _start(kind, f"sqlite:///{tmp}/server.sqlite3", port)
        socks = []
        try:
            for _ in range(idle):
                try:
                    socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                except OSError:
                    break
            time.sleep(1)
            started = time.monotonic()
            try:
                status = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code
                health = f"{status} in {time.monotonic() - started:.2f} s"
            except httpx2.TransportError as exc:
                health = f"{type(exc).__name__} after {time.monotonic() - started:.1f} s"
            time.sleep(wait)
            closed = sum(_closed(s) for s in socks)
            try:
                later = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code
            except httpx2.TransportError as exc:
                later = type(exc).__name__
            health += f"; later {later}"
        finally:
            for s in socks:
                s.close()
            proc.terminate()
            proc.wait(10)
    return health, f"{len(socks)}", closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1100)
    parser.add_argument("--wait", type=float, default=12.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (max(soft, args.idle + 200), max(hard, args.idle + 200))
    )
    print(f"load average: {os.getloadavg()[0]:.2f} (shared machine)")
    print(
        f"{'server':<22} {'idle opened':>11} {'/healthz with them open':>26} "
        f"{'closed by server after ' + str(args.wait) + ' s':>30}"
    )
    for kind in ("plain uvicorn", "teamsync serve"):
        health, opened, closed = run(kind, args.idle, args.wait)
        print(f"{kind:<22} {opened:>11} {health:>26} {closed:>30}")


if __name__ == "__main__":
    main()

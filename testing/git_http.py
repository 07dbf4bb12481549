"""git's smart HTTP, served by git's own ``git http-backend`` (CGI) as an ASGI app.

So a git remote can sit behind the same request and byte counter
(:class:`testing.counting.Counter`) as the REST and Memory Stores servers:
``bench/sync.py --memstore`` compares the three backends in requests and bytes.
Every bare repository below ``root`` is served at ``/<name>.git``; pushes are
allowed (``REMOTE_USER`` is set, which is what ``http.receivepack`` asks for).
One subprocess per request, run in a worker thread; bodies are buffered whole
(a benchmark's pushes and fetches, not a production server).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio.to_thread

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class GitHttp:
    """ASGI app: ``git http-backend`` for the bare repositories below ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        exec_path = subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()
        self.backend = os.path.join(exec_path, "git-http-backend")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]  # startup / shutdown
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        status, headers, out = await anyio.to_thread.run_sync(self._cgi, scope, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})

    def _cgi(self, scope: Scope, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        head = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "bench",
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": scope["method"],
            "PATH_INFO": scope["path"],
            "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
            "CONTENT_TYPE": head.get("content-type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": head.get("git-protocol", ""),
            "HTTP_CONTENT_ENCODING": head.get("content-encoding", ""),
        }
        done = subprocess.run([self.backend], input=body, capture_output=True, env=env, check=False)
        raw_head, _, out = done.stdout.partition(b"\r\n\r\n")
        if not _ or done.returncode != 0:
            return 500, [(b"content-type", b"text/plain")], done.stderr[-2000:]
        status, headers = 200, []
        for line in raw_head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"status":
                status = int(value.split()[0])
            elif name:
                headers.append((name.strip().lower(), value.strip()))
        return status, headers, out

"""HTTP plumbing for :mod:`teamsync.sync.rest`: credentials, the repository id,
and one request function with bounded retries and bounded responses.

- The token comes from ``TEAMSYNC_TOKEN`` or a ``token_file`` that only its
  owner can read (mode 0600); it is sent as a bearer header and never logged.
- The repository id comes from ``origin``: ``owner/name`` for GitHub
  (case-folded), ``host/path`` for any other host.
- Requests: 30 s timeouts, no redirects followed (a 3xx is an error), 5xx,
  429 and transport errors retried with jittered exponential backoff (or after
  the server's ``Retry-After``, at most 60 s), response
  bodies capped in bytes and in wall-clock time (a response that never ends is
  cut off).
- The standard proxy and CA variables are honoured (``HTTPS_PROXY``,
  ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``, ``SSL_CERT_DIR``).
"""

from __future__ import annotations

import random
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2

from teamsync import _git
from teamsync.errors import AuthError, BackendError, ConfigError, ToolMissing, UsageError
from teamsync.limits import REQUEST_TIMEOUT_S
from teamsync.security.names import printable
from teamsync.sync.config import SyncConfig
from teamsync.wire import normalize_repo, parse_error_body, redact_url, repo_as_written

TIMEOUT_S = REQUEST_TIMEOUT_S
MAX_ATTEMPTS = 4
BACKOFF_S = 0.5
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
GITHUB_HOSTS = ("github.com", "www.github.com")


def load_token(config: SyncConfig, environ: Mapping[str, str]) -> str:
    """``TEAMSYNC_TOKEN`` > ``token_file`` (refused unless only its owner can read it)."""
    token = environ.get("TEAMSYNC_TOKEN", "").strip()
    if not token and config.token_file:
        path = Path(config.token_file).expanduser()
        try:
            mode = path.stat().st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise ConfigError(
                    f"{path} is readable by others (mode {stat.S_IMODE(mode):o}); "
                    f"run `chmod 600 {path}`"
                )
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if not token:
        raise ConfigError(
            "no server token: set TEAMSYNC_TOKEN or `token_file` in teamsync.yaml "
            "(an admin creates one with `teamsync token create --repo OWNER/NAME`)"
        )
    if any(c.isspace() or ord(c) < 0x21 or ord(c) > 0x7E for c in token):
        raise ConfigError("the server token holds spaces or control characters; copy it again")
    return token


def normalize_remote(url: str, *, fold: bool = True) -> str:
    """``git@github.com:Owner/Name.git`` -> ``owner/name``; others -> ``host/path``.

    ``fold=False`` keeps the path's case (``Owner/Name``): what the client sends."""
    url = url.strip()
    if "://" not in url and ":" in url.split("/", 1)[0]:
        host, _, path = url.partition(":")
        host = host.rpartition("@")[2]
    else:
        parts = urlsplit(url)
        host, path = parts.hostname or "", parts.path
    path = path.strip("/").removesuffix(".git").strip("/")
    if not host or not path:
        raise ConfigError(
            f"cannot derive a repository id from origin {redact_url(url)!r}; "
            "pass --repo OWNER/NAME to `teamsync init --rest`"
        )
    host = host.lower()
    ident = path if host in GITHUB_HOSTS else f"{host}/{path}"
    try:
        return normalize_repo(ident) if fold else repo_as_written(ident)
    except UsageError as exc:
        raise ConfigError(f"{exc}; pass --repo OWNER/NAME to `teamsync init --rest`") from exc


def repo_from_origin(cwd: Path) -> str:
    """The repository id of the project at ``cwd`` (its ``origin`` remote)."""
    try:
        result = _git.run(["config", "--get", "remote.origin.url"], cwd=cwd, timeout=10)
    except (ToolMissing, subprocess.SubprocessError) as exc:
        raise ConfigError("cannot run git to find `origin`; pass --repo OWNER/NAME") from exc
    if not result.ok or not result.text():
        raise ConfigError(
            f"{cwd} has no `origin` remote; pass --repo OWNER/NAME to `teamsync init --rest`"
        )
    return normalize_remote(result.text(), fold=False)


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """0.5 s * 2^attempt, plus up to 25 % jitter."""
    base = BACKOFF_S * (2**attempt)
    return float(base + base * 0.25 * rand())


MAX_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` honoured; a server asking for more gets the cap."""


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return min(max(0.0, when - now()), MAX_RETRY_AFTER_S)


class Http:
    """One ``httpx2.Client`` for one server; every request goes through :meth:`send`."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx2.BaseTransport | None = None,
        timeout: float = TIMEOUT_S,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.where = redact_url(self.base_url)
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.sleep = sleep
        self.client = httpx2.Client(
            transport=transport,
            timeout=httpx2.Timeout(timeout),
            follow_redirects=False,
            headers={"Authorization": f"Bearer {token}", "User-Agent": "teamsync"},
            trust_env=True,  # HTTPS_PROXY/HTTP_PROXY/NO_PROXY, SSL_CERT_FILE/SSL_CERT_DIR
        )

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str],
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> tuple[int, Mapping[str, str], bytes]:
        """Status, headers, body; retried on 5xx/429/transport errors; 3xx, 401, 403 raise."""
        for attempt in range(MAX_ATTEMPTS):
            last = attempt == MAX_ATTEMPTS - 1
            try:
                status, head, body = self._once(method, path, params, headers, content)
            except httpx2.TransportError as exc:
                if last:
                    raise BackendError(
                        f"{self.where} did not answer ({type(exc).__name__}) after "
                        f"{MAX_ATTEMPTS} attempts; check the URL and that the server runs"
                    ) from exc
                self.sleep(backoff(attempt))
                continue
            if (status >= 500 or status == 429) and not last:
                wait = retry_after(head.get("retry-after"))
                self.sleep(backoff(attempt) if wait is None else wait)
                continue
            return status, head, body
        raise AssertionError("unreachable")

    def _once(
        self,
        method: str,
        path: str,
        params: Mapping[str, str],
        headers: Mapping[str, str] | None,
        content: bytes | None,
    ) -> tuple[int, Mapping[str, str], bytes]:
        url = self.base_url + path
        req_headers = {"Content-Type": "application/json", **(headers or {})}
        with self.client.stream(
            method, url, params=dict(params), headers=req_headers, content=content
        ) as resp:
            status = resp.status_code
            if 300 <= status < 400 and status != 304:
                where = printable(redact_url(resp.headers.get("location", "?"))[:200])
                raise BackendError(
                    f"{self.where} answered {status} redirecting to {where}; teamsync never "
                    "follows redirects with your token: put the final URL in teamsync.yaml"
                )
            if status in (401, 403):
                raise AuthError(
                    f"{self.where} refused the token ({status}): check TEAMSYNC_TOKEN or "
                    "token_file, and that the token is scoped to this repository"
                    + (" and may write" if status == 403 else "")
                )
            body = self._read(resp)
            return status, dict(resp.headers), body

    def _read(self, resp: httpx2.Response) -> bytes:
        deadline = time.monotonic() + self.timeout
        buf = bytearray()
        for chunk in resp.iter_bytes():
            buf += chunk
            if len(buf) > self.max_response_bytes:
                raise BackendError(
                    f"{self.where} sent more than {self.max_response_bytes} bytes; refused"
                )
            if time.monotonic() > deadline:
                raise BackendError(
                    f"{self.where} kept sending for over {self.timeout:.0f} s; refused"
                )
        return bytes(buf)

    def close(self) -> None:
        self.client.close()


def error_details(body: bytes) -> dict[str, Any]:
    """``error.details`` of a structured error body, or {}."""
    return parse_error_body(body)[1]


def error_message(body: bytes, limit: int = 300) -> str:
    msg = parse_error_body(body)[0]
    # the server's words reach the terminal: no control characters (escape sequences)
    return printable(msg[:limit].replace("\n", " "))


def unexpected(where: str, status: int, body: bytes, what: str) -> BackendError:
    """The error for an answer the client has no use for: what failed, the status and
    the server's own message (printable, cut short)."""
    why = error_message(body)
    return BackendError(f"{what} failed: {where} answered {status}" + (f": {why}" if why else ""))

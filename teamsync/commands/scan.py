"""``teamsync scan``: find secrets in files, the staged blobs, or the lines a commit range adds.

Exit codes: 0 clean, 1 findings (after the baseline) or a file that could not be
read (a gate that cannot read a file cannot vouch for it), 2 usage. Output formats:
``text`` (``path:line: rule (fingerprint …)`` then what to do), ``json``
(``{"files_scanned", "findings"}``, also with the global ``--json``) and
``sarif`` (SARIF 2.1.0). No format ever contains the secret.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output
from teamsync.security.names import printable
from teamsync.security.secrets import Finding, Scanner
from teamsync.security.sources import (
    Chunk,
    Item,
    Skipped,
    iter_range,
    iter_staged,
    list_files,
)

FORMATS = ("text", "json", "sarif")


@dataclass(frozen=True)
class ScanRequest:
    paths: tuple[str, ...] = ()
    staged: bool = False
    git_range: str | None = None
    format: str = "text"
    output: str | None = None
    baseline: str | None = None
    update_baseline: bool = False
    generic: bool = True
    ignore_inline_allow: bool = False
    """CI's switch: inline ``teamsync: allow`` pragmas count nowhere (gitleaks' --ignore-gitleaks-allow)."""
    memory: bool = False
    """Everything scanned is team memory: inline pragmas do not count (as at every memory gate)."""
    exit_code: int = 1
    """The status when findings remain (gitleaks' ``--exit-code``); 0 reports without failing."""
    memory_store: str | None = None
    """Scan a memory store's memories (``memstore_…``; key from the environment)."""
    history: bool = False
    """With ``memory_store``: every retained version, not only the current memories."""
    base_url: str | None = None
    """With ``memory_store``: a self-hosted server instead of Anthropic's API."""


def _validate(req: ScanRequest) -> None:
    modes = sum((bool(req.paths), req.staged, req.git_range is not None, bool(req.memory_store)))
    if modes > 1:
        raise UsageError(
            "give PATHs, --staged, --git-range or --memory-store, not several; run one scan per mode"
        )
    if (req.history or req.base_url) and not req.memory_store:
        raise UsageError("--history and --base-url go with --memory-store ID")
    if req.format not in FORMATS:
        raise UsageError(f"--format {req.format!r}: choose one of {', '.join(FORMATS)}")
    if not 0 <= req.exit_code <= 255:
        raise UsageError(f"--exit-code {req.exit_code}: use 0-255")
    if req.update_baseline and not req.baseline:
        raise UsageError("--update-baseline needs --baseline FILE to know where to write")


def _items(req: ScanRequest, settings: Settings) -> Iterable[Item]:
    if req.staged:
        return iter_staged(settings.cwd, settings.environ)
    return iter_range(req.git_range or "", settings.cwd, settings.environ)


def _default_paths(req: ScanRequest, settings: Settings) -> tuple[str, ...]:
    return req.paths or (str(settings.dir) if settings.dir is not None else ".",)


Unreadable = list[tuple[str, str]]
"""(path, reason) of the files a scan could not read."""


def _note(item: Skipped, unreadable: Unreadable) -> None:
    unreadable.append((item.path, item.reason))


def _collect_files(req: ScanRequest, settings: Settings, scanner: Scanner,
                   unreadable: Unreadable) -> set[str]:  # fmt: skip
    """Scan PATHs; a large tree is split over the usable CPUs (see security/pool.py)."""
    from teamsync.security import pool

    listed = [
        (full, shown, _size(full))
        for full, shown in list_files(_default_paths(req, settings), settings.cwd)
    ]
    jobs = min(pool.usable_cpus(), len(listed))
    if jobs > 1 and sum(size for _, _, size in listed) >= pool.PARALLEL_MIN_BYTES:
        results = pool.scan_parallel(listed, req.generic, jobs, inline_allow=scanner.inline_allow)
    else:
        batch = [(full, shown) for full, shown, _ in listed]
        results = [pool.scan_batch(batch, req.generic, inline_allow=scanner.inline_allow)]
    files: set[str] = set()
    for scanned, findings, candidates, skipped in results:
        files.update(scanned)
        scanner.add_result(findings, candidates)
        for item in skipped:
            _note(item, unreadable)
    return files


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def collect(req: ScanRequest, settings: Settings) -> tuple[int, list[Finding], Unreadable]:
    """Scan every item; return (files scanned, findings before the baseline, unreadable paths).

    Inline allow pragmas count only in ordinary code: never with
    ``--ignore-inline-allow`` or ``--memory``, never in a memory path, never when
    the scan is of the memory directory itself (the default with ``--dir``).
    """
    memory_scan = req.memory or (
        not req.paths and not req.staged and req.git_range is None and settings.dir is not None
    )
    scanner = Scanner(
        generic=req.generic, inline_allow=not (req.ignore_inline_allow or memory_scan)
    )
    unreadable: Unreadable = []
    if req.memory_store:
        scanner = Scanner(generic=req.generic, inline_allow=False)  # a store is team memory
        return _scan_store(req, settings, scanner), scanner.finish(), unreadable
    if not req.staged and req.git_range is None:
        files = _collect_files(req, settings, scanner, unreadable)
        return len(files), scanner.finish(), unreadable
    files = set()
    for item in _items(req, settings):
        if isinstance(item, Chunk):
            files.add(item.path)
            scanner.add_chunk(item)
        else:
            _note(item, unreadable)
    return len(files), scanner.finish(), unreadable


def _text_report(findings: Sequence[Finding], files: int) -> list[str]:
    lines = [
        f"{printable(f.path)}:{f.line if f.line else 'name'}: {f.rule} "
        f"(fingerprint {f.fingerprint[:16]}…"
        + (f", added in commit {f.commit[:12]})" if f.commit else ")")
        for f in findings
    ]
    if findings:
        lines += [
            "",
            f"teamsync: {len(findings)} likely secret(s) in {files} file(s) scanned.",
            "Remove each secret (and rotate it: it may already be exposed); keep it in a",
            "secret manager or an environment variable. A reviewer who confirms a false",
            "positive records its fingerprint in the project's reviewed allowlist",
            '(see docs/scanning.md, "Who can allowlist what").',
        ]
    return lines


def _payload(findings: Sequence[Finding], files: int, unreadable: Unreadable) -> dict[str, Any]:
    payload: dict[str, Any] = {"files_scanned": files, "findings": [f.as_dict() for f in findings]}
    if unreadable:
        from teamsync.security.names import redact_name

        # a secret in a file's name is shown by its rule id, as in every other output
        payload["unreadable"] = [
            {"path": redact_name(path), "reason": why} for path, why in unreadable
        ]
    return payload


def render(
    fmt: str, findings: Sequence[Finding], files: int, unreadable: Unreadable | None = None
) -> str:
    """The report in ``fmt`` (text, json or sarif)."""
    if fmt == "sarif":
        from teamsync.security.sarif import render_sarif

        return render_sarif(findings)
    if fmt == "json":
        return json.dumps(_payload(findings, files, unreadable or []), indent=2) + "\n"
    return "".join(line + "\n" for line in _text_report(findings, files))


def _write(path: str, content: str, settings: Settings) -> None:
    target = Path(path) if os.path.isabs(path) else settings.cwd / path
    try:
        target.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output {path}: cannot write ({exc.strerror})") from None


def _emit(req: ScanRequest, settings: Settings, output: Output, findings: list[Finding],
          files: int, unreadable: Unreadable) -> None:  # fmt: skip
    fmt = "json" if settings.json and req.format == "text" else req.format
    report = render(fmt, findings, files, unreadable)
    if req.output:
        _write(req.output, report, settings)
        if fmt != "text":  # the log still shows each finding: one scan, report and log
            for line in _text_report(findings, files):
                output.info(line)
        output.info(
            f"teamsync: {len(findings)} finding(s) in {files} file(s); {fmt} report in {req.output}"
        )
        output.emit(_payload(findings, files, unreadable))
    elif fmt == "text":
        for line in report.splitlines():
            output.info(line)
        if not findings and not unreadable:
            output.success(f"teamsync: no secrets found in {files} file(s).")
    else:
        output.out.write(report)
        output.out.flush()


def _scan_store(req: ScanRequest, settings: Settings, scanner: Scanner) -> int:
    """Feed a memory store's texts (current, or every retained version) to ``scanner``.

    A finding names ``memstore_…:/path@memver_…``: the version to redact
    (``teamsync redact``) after the secret is rotated.
    """
    from teamsync.sync.config import SyncConfig
    from teamsync.sync.memstore import MemstoreBackend, load_key

    store = req.memory_store or ""
    config = SyncConfig("memstore", req.base_url or "", memory_store=store)
    backend = MemstoreBackend(store, load_key(config, settings.environ), base_url=req.base_url)
    count = 0
    try:
        for path, text, version in backend.texts(history=req.history):
            count += 1
            scanner.add_chunk(Chunk(f"{store}:{path}@{version}", text))
    finally:
        backend.close()
    return count


def _reviewed_allowlist(settings: Settings) -> frozenset[str]:
    from teamsync.memdir.paths import memory_dir
    from teamsync.security.allowlist import load_allowlist

    return load_allowlist(settings.cwd, memory_dir(settings))


def run_scan(settings: Settings, output: Output, req: ScanRequest) -> int:
    """Scan, report and return the exit code (0 clean, ``req.exit_code`` on findings)."""
    from teamsync.security.baseline import load_baseline, save_baseline

    _validate(req)
    baseline_path = None
    if req.baseline:
        baseline_path = Path(req.baseline)
        baseline_path = (
            baseline_path if baseline_path.is_absolute() else settings.cwd / baseline_path
        )
    files, findings, unreadable = collect(req, settings)
    if req.update_baseline and baseline_path is not None:
        save_baseline(baseline_path, findings)
        output.info(f"teamsync: wrote {len(findings)} fingerprint(s) to {req.baseline}")
        if settings.json:
            output.emit({**_payload([], files, unreadable), "baseline": len(findings)})
        if unreadable:
            _report_unreadable(unreadable, output)
            return 1
        return 0
    known = load_baseline(baseline_path) if baseline_path is not None else frozenset()
    known |= _reviewed_allowlist(settings)
    kept = [f for f in findings if f.fingerprint not in known]
    _emit(req, settings, output, kept, files, unreadable)
    if unreadable:
        _report_unreadable(unreadable, output)
        return req.exit_code if kept and req.exit_code else 1
    return req.exit_code if kept else 0


def _report_unreadable(unreadable: Unreadable, output: Output) -> None:
    """A gate that could not read a file fails: it cannot vouch for what it did not see."""
    for path, why in unreadable:
        output.error(f"{printable(path)}: not scanned: {why}")
    output.error(
        f"teamsync: {len(unreadable)} file(s) could not be read, so the scan cannot pass; "
        "make them readable (or leave them out of the paths given) and scan again"
    )

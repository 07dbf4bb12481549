"""``teamsync scan``: find secrets in files, the staged blobs, or the lines a commit range adds.

Exit codes: 0 clean, 1 findings (after the baseline), 2 usage. Output formats:
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

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output, printable
from teamsync.security.secrets import Finding, Scanner
from teamsync.security.sources import Chunk, Item, iter_files, iter_range, iter_staged

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


def _validate(req: ScanRequest) -> None:
    modes = sum((bool(req.paths), req.staged, req.git_range is not None))
    if modes > 1:
        raise UsageError("give PATHs, --staged or --git-range, not several; run one scan per mode")
    if req.format not in FORMATS:
        raise UsageError(f"--format {req.format!r}: choose one of {', '.join(FORMATS)}")
    if req.update_baseline and not req.baseline:
        raise UsageError("--update-baseline needs --baseline FILE to know where to write")


def _items(req: ScanRequest, settings: Settings) -> Iterable[Item]:
    if req.staged:
        return iter_staged(settings.cwd, settings.environ)
    if req.git_range is not None:
        return iter_range(req.git_range, settings.cwd, settings.environ)
    default = str(settings.dir) if settings.dir is not None else "."
    return iter_files(req.paths or (default,), settings.cwd)


def is_memory_path(path: str) -> bool:
    """A path inside a ``memory/team`` directory (Claude Code's layout), where pragmas never count."""
    parts = os.path.normpath(path).replace("\\", "/").split("/")
    return any(a == "memory" and b == "team" for a, b in zip(parts, parts[1:], strict=False))


def collect(req: ScanRequest, settings: Settings, output: Output) -> tuple[int, list[Finding]]:
    """Scan every item; return (files scanned, findings before the baseline).

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
    files: set[str] = set()
    for item in _items(req, settings):
        if isinstance(item, Chunk):
            files.add(item.path)
            allow = None if scanner.inline_allow and not is_memory_path(item.path) else False
            scanner.add(
                item.text,
                item.path,
                first_line=item.first_line,
                inline_allow=allow,
                commit=item.commit,
            )
        elif item.reason != "binary":
            output.warn(f"skipped {printable(item.path)}: {item.reason}")
    return len(files), scanner.finish()


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


def render(fmt: str, findings: Sequence[Finding], files: int) -> str:
    """The report in ``fmt`` (text, json or sarif)."""
    if fmt == "sarif":
        from teamsync.security.sarif import render_sarif

        return render_sarif(findings)
    if fmt == "json":
        payload = {"files_scanned": files, "findings": [f.as_dict() for f in findings]}
        return json.dumps(payload, indent=2) + "\n"
    return "".join(line + "\n" for line in _text_report(findings, files))


def _write(path: str, content: str, settings: Settings) -> None:
    target = Path(path) if os.path.isabs(path) else settings.cwd / path
    try:
        target.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output {path}: cannot write ({exc.strerror})") from None


def _emit(req: ScanRequest, settings: Settings, output: Output, findings: list[Finding],
          files: int) -> None:  # fmt: skip
    fmt = "json" if settings.json and req.format == "text" else req.format
    report = render(fmt, findings, files)
    if req.output:
        _write(req.output, report, settings)
        output.info(
            f"teamsync: {len(findings)} finding(s) in {files} file(s); report in {req.output}"
        )
        output.emit({"files_scanned": files, "findings": [f.as_dict() for f in findings]})
    elif fmt == "text":
        for line in report.splitlines():
            output.info(line)
        if not findings:
            output.success(f"teamsync: no secrets found in {files} file(s).")
    else:
        output.out.write(report)
        output.out.flush()


def _reviewed_allowlist(settings: Settings) -> frozenset[str]:
    from teamsync.memdir.paths import memory_dir
    from teamsync.security.allowlist import load_allowlist

    return load_allowlist(settings.cwd, memory_dir(settings))


def run_scan(settings: Settings, output: Output, req: ScanRequest) -> int:
    """Scan, report and return the exit code (0 clean, 1 findings)."""
    from teamsync.security.baseline import load_baseline, save_baseline

    _validate(req)
    baseline_path = None
    if req.baseline:
        baseline_path = Path(req.baseline)
        baseline_path = (
            baseline_path if baseline_path.is_absolute() else settings.cwd / baseline_path
        )
    files, findings = collect(req, settings, output)
    if req.update_baseline and baseline_path is not None:
        save_baseline(baseline_path, findings)
        output.info(f"teamsync: wrote {len(findings)} fingerprint(s) to {req.baseline}")
        if settings.json:
            output.emit({"files_scanned": files, "findings": [], "baseline": len(findings)})
        return 0
    known = load_baseline(baseline_path) if baseline_path is not None else frozenset()
    known |= _reviewed_allowlist(settings)
    kept = [f for f in findings if f.fingerprint not in known]
    _emit(req, settings, output, kept, files)
    return 1 if kept else 0

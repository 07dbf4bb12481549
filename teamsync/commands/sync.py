"""``teamsync init/status/pull/push/sync``: configure a remote and run the engine.

Backends plug in by name (:data:`teamsync.sync.BACKENDS`): each backend module
exposes ``from_config(config: SyncConfig, settings: Settings) -> Backend``.
The base store for a run is keyed by the real team directory and
:func:`remote_id` of the configuration (one name per remote, however spelled).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.memdir.paths import memory_dir
from teamsync.output import Output, printable
from teamsync.security.fs import SafeDir
from teamsync.sync import BACKENDS
from teamsync.sync.base import Backend
from teamsync.sync.config import SyncConfig, load_config, remote_identity, save_config
from teamsync.sync.engine import Mode, Progress, SyncReport, run_sync
from teamsync.sync.gitcmd import project_remote_url, sanitize_url
from teamsync.sync.guards import DEFAULT_MASS_MIN, DEFAULT_MASS_SHARE, Recovery, Safety
from teamsync.sync.state import BaseStore, store_path

ProgressFactory = Callable[[], Progress]


def remote_id(config: SyncConfig) -> str:
    """A stable, credential-free name for the remote (keys the base store)."""
    return remote_identity(config)


def _legacy_remote_id(config: SyncConfig) -> str:
    """The name base stores had before URLs were normalised (moved on first use)."""
    where = config.branch if config.backend == "git" else (config.repo or "")
    return f"{config.backend}:{sanitize_url(config.url)}#{where}"


def open_state(settings: Settings, team_root: Path, config: SyncConfig) -> BaseStore:
    """The base store for (team dir, remote); a store kept under the old name is moved."""
    ident = remote_id(config)
    path = store_path(settings.state_dir, team_root, ident)
    legacy = store_path(settings.state_dir, team_root, _legacy_remote_id(config))
    if legacy != path and legacy.exists() and not path.exists():
        for suffix in ("-wal", "-shm", ""):  # the main file last: it marks the move done
            old = legacy.with_name(legacy.name + suffix)
            if old.exists():
                old.replace(path.with_name(path.name + suffix))
    return BaseStore.open(settings.state_dir, team_root, ident)


def open_backend(config: SyncConfig, settings: Settings) -> Backend:
    target = BACKENDS.get(config.backend)
    if target is None:
        raise UsageError(f"unknown sync backend {config.backend!r}; use one of {sorted(BACKENDS)}")
    module = importlib.import_module(target.partition(":")[0])
    factory: Callable[[SyncConfig, Settings], Backend] = module.from_config
    return factory(config, settings)


def _normalize_git_url(url: str, settings: Settings) -> str:
    """A remote name of the project (``origin``) becomes its URL; relative paths absolute."""
    cwd = settings.cwd
    if not (cwd / url).exists():
        named = project_remote_url(cwd, url, settings.environ)
        if named is not None:
            url = named
    if "://" in url or (":" in url.split("/", 1)[0] and not Path(url).exists()):
        return url
    path = Path(url).expanduser()
    return str(path if path.is_absolute() else (cwd / path).resolve())


def init(settings: Settings, output: Output, config: SyncConfig) -> int:
    """Check the remote answers, then write ``<memdir>/teamsync.yaml`` (beside ``team/``)."""
    if config.backend == "git":
        config = SyncConfig("git", _normalize_git_url(config.url, settings), config.branch)
    memdir = memory_dir(settings)
    (memdir / "team").mkdir(parents=True, exist_ok=True)
    backend = open_backend(config, settings)
    try:
        snap = backend.snapshot()
    finally:
        backend.close()
    path = save_config(memdir, config)
    where = f"branch {config.branch} of " if config.backend == "git" else ""
    state = f"{len(snap.checksums)} memories there" if snap.version else "nothing there yet"
    output.success(f"teamsync will sync {memdir / 'team'} with {where}{sanitize_url(config.url)}")
    output.info(f"{state}; configuration written to {path}. Next: `teamsync sync`.")
    output.emit(
        {"config": str(path), "backend": config.backend, "remote_entries": len(snap.checksums)}
    )
    return 0


def describe_remote(config: SyncConfig) -> str:
    """The remote as messages name it (credentials masked)."""
    if config.backend == "git":
        return f"branch {config.branch} of {sanitize_url(config.url)}"
    return f"{sanitize_url(config.url)} (repository {config.repo or 'from origin'})"


def safety_for(config: SyncConfig, *, yes: bool, recover: Recovery | None) -> Safety:
    """The guards for one run: the person's flags over teamsync.yaml over the defaults."""
    share = config.mass_change_share
    least = config.mass_change_min
    return Safety(
        yes=yes,
        recover=recover,
        mass_share=DEFAULT_MASS_SHARE if share is None else share,
        mass_min=DEFAULT_MASS_MIN if least is None else least,
    )


def load_allowlist(cwd: Path, memdir: Path) -> frozenset[str]:
    """The reviewed allowlist (project and memory dir); inline comments never count."""
    from teamsync.security.allowlist import load_allowlist as load

    return load(cwd, memdir)


def sync_once(
    settings: Settings,
    *,
    mode: Mode,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
    yes: bool = False,
    recover: Recovery | None = None,
) -> SyncReport:
    """One engine pass for the configured memory directory (the library entry point).

    ``yes`` goes past the mass-change guard; ``recover`` says how to go on when
    the remote lost history (see :mod:`teamsync.sync.guards`).
    """
    memdir = memory_dir(settings)
    config = load_config(memdir)
    team = SafeDir(memdir / "team", create=True)
    try:
        backend = open_backend(config, settings)
        try:
            state = open_state(settings, team.root, config)
            try:
                return run_sync(
                    team,
                    backend,
                    state,
                    mode=mode,
                    dry_run=dry_run,
                    who=backend.identity(),
                    now=time.time() if now is None else now,
                    freshness_dir=settings.state_dir,
                    progress=progress,
                    safety=safety_for(config, yes=yes, recover=recover),
                    where=describe_remote(config),
                    allowlist=load_allowlist(settings.cwd, memdir),
                )
            finally:
                state.close()
        finally:
            backend.close()
    finally:
        team.close()


def run(
    settings: Settings,
    output: Output,
    *,
    mode: Mode,
    dry_run: bool = False,
    progress: ProgressFactory | None = None,
    yes: bool = False,
    recover: Recovery | None = None,
) -> int:
    """Run one engine pass in ``mode``; print what happened; 1 on conflicts, refusals or a stop."""
    report = sync_once(
        settings,
        mode=mode,
        dry_run=dry_run,
        progress=progress() if progress else None,
        yes=yes,
        recover=recover,
    )
    _print(output, report)
    output.emit(report.to_json())
    return report.exit_code()


def _lines(title: str, keys: list[str]) -> list[str]:
    return [f"{title}:", *(f"  {printable(k)}" for k in keys)] if keys else []


def _print(output: Output, report: SyncReport) -> None:
    def rel(key: str) -> str:
        return printable(f"team/{key}")  # keys may come from a hostile remote

    if report.stop is not None:
        ways = "".join(f"\n  way forward: {way}" for way in report.stop.way_forward)
        head = "sync would stop: " if report.dry_run else "stopped: "
        output.error(head + report.stop.message + ways)
    elif report.mode == "status":
        blocks = (
            _lines("Local changes to push", report.pushed + report.remote_deleted)
            + _lines("Remote changes to pull", report.written + report.deleted)
            + _lines("Would merge", report.merged)
            + _lines("Would conflict", [c.key for c in report.conflicts])
        )
        for line in blocks or ["Up to date: nothing to pull or push."]:
            output.info(line)
    else:
        _print_run(output, report, rel)
    for r in report.rejected:
        output.warn(f"{rel(r.key)}: {printable(r.reason)}")
    for r in report.held_back:
        output.warn(f"{rel(r.key)}: held back, {printable(r.reason)}")
    for r in report.unknown:
        output.warn(f"{rel(r.key)}: {printable(r.reason)}")


def _print_run(output: Output, report: SyncReport, rel: Callable[[str], str]) -> None:
    verb = "would " if report.dry_run else ""
    for c in report.conflicts:
        copy = rel(c.copy) if c.copy else "a conflict copy"
        output.warn(
            f"both sides changed {rel(c.key)}: {verb}keep your version as {copy}; "
            f"theirs is in {rel(c.key)}. Compare them, keep what matters, delete the copy."
        )
    for key in report.merged:
        output.info(f"{verb}merge your edits and the remote's in {rel(key)}")
    if report.recovered:
        output.info(
            f"{len(report.recovered)} memories had no sync record here (a first sync, a lost "
            "state directory or an interrupted push): the remote's history shows you had "
            "synced them, so its later edits and deletions were taken, not undone"
        )
    counts = [
        (len(report.written), "written here"),
        (len(report.deleted), "deleted here"),
        (len(report.pushed), "pushed"),
        (len(report.remote_deleted), "deleted on the remote"),
    ]
    done = [f"{n} {what}" for n, what in counts if n]
    if done:
        output.success(("Dry run: " if report.dry_run else "") + ", ".join(done) + ".")
    elif not (report.rejected or report.held_back or report.conflicts):
        output.success("Already up to date.")

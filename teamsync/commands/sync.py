"""``teamsync init/status/pull/push/sync``: configure a remote and run the engine.

Backends plug in by name (:data:`teamsync.sync.BACKENDS`): each backend module
exposes ``from_config(config: SyncConfig, settings: Settings) -> Backend``.
The base store for a run is keyed by the real team directory and
:func:`remote_id` of the configuration (one name per remote, however spelled).
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable
from pathlib import Path

from teamsync.commands.sync_fast import STATUS_CLEAN, UP_TO_DATE
from teamsync.config import Settings
from teamsync.errors import ConfigError, TeamsyncError, UsageError
from teamsync.limits import DEFAULT_BRANCH
from teamsync.memdir.paths import working_memory_dir
from teamsync.output import Output
from teamsync.security.fs import SafeDir
from teamsync.security.names import printable
from teamsync.sync import BACKENDS
from teamsync.sync.base import Backend, CertifiesNoop, ChecksServer
from teamsync.sync.config import SyncConfig, config_path, load_config, remote_identity, save_config
from teamsync.sync.engine import Mode, Progress, SyncReport, run_sync
from teamsync.sync.gitcmd import project_remote_url
from teamsync.sync.guards import DEFAULT_MASS_MIN, DEFAULT_MASS_SHARE, Recovery, Safety
from teamsync.sync.local import NOT_MEMORY
from teamsync.sync.state import BaseStore, store_path
from teamsync.wire import redact_url, repo_as_written

ProgressFactory = Callable[[], Progress]


def remote_id(config: SyncConfig) -> str:
    """A stable, credential-free name for the remote (keys the base store)."""
    return remote_identity(config)


def _legacy_remote_id(config: SyncConfig) -> str:
    """The name base stores had before URLs were normalised (moved on first use)."""
    where = config.branch if config.backend == "git" else (config.repo or "")
    return f"{config.backend}:{redact_url(config.url)}#{where}"


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
    return _open_state(settings, team_root, ident)


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
        elif re.fullmatch(r"[A-Za-z0-9_-]+", url):  # a bare word: meant as a remote name
            raise ConfigError(
                f"--git {url}: not a remote of the project in {cwd} and not an existing path. "
                "Give a URL or path, or the name of a remote listed by `git remote -v`"
            )
    if "://" in url or (":" in url.split("/", 1)[0] and not Path(url).exists()):
        return url
    path = Path(url).expanduser()
    return str(path if path.is_absolute() else (cwd / path).resolve())


def init(settings: Settings, output: Output, config: SyncConfig, *, force: bool = False) -> int:
    """Check the remote answers, then write ``<memdir>/teamsync.yaml`` (beside ``team/``).

    Refused, with nothing written: a git branch holding files that are not
    memory files (a code branch) unless ``force``; a REST URL that is not a
    team-memory server. Re-running init says what it replaces.
    """
    if config.backend == "git":
        config = SyncConfig("git", _normalize_git_url(config.url, settings), config.branch)
    memdir = working_memory_dir(settings)
    previous = _previous_config(memdir)
    backend = open_backend(config, settings)
    try:
        snap = backend.snapshot()
        if isinstance(backend, ChecksServer):
            backend.check_server()
    finally:
        backend.close()
    foreign = sorted(k for k, why in snap.rejected.items() if why == NOT_MEMORY)
    if config.backend == "git" and foreign and not force:
        shown = ", ".join(printable(k) for k in foreign[:3]) + (", …" if len(foreign) > 3 else "")
        raise ConfigError(
            f"branch {config.branch} of {redact_url(config.url)} holds {len(foreign)} "
            f"file(s) that are not memory files ({shown}): it looks like a code branch, and "
            "`teamsync push` would commit memory files into it. Use a branch of its own "
            "(omit --branch for teamsync/memory), or pass --force if this branch is meant "
            "to hold team memory. Nothing was written."
        )
    (memdir / "team").mkdir(parents=True, exist_ok=True)
    path = _save(memdir, config)
    where = f"branch {config.branch} of " if config.backend == "git" else ""
    if config.backend == "memstore":
        where = f"folder {config.path_prefix or '/'} of {config.memory_store}" + (
            " at " if config.url else ""
        )
    state = f"{len(snap.checksums)} memories there" if snap.version else "nothing there yet"
    if previous is not None and previous != config:
        output.info(f"Replaced the previous configuration: {_describe(previous)}.")
    elif previous == config:
        output.info("The configuration was already this; rewrote it unchanged.")
    output.success(f"teamsync will sync {memdir / 'team'} with {where}{redact_url(config.url)}")
    output.info(f"{state}; configuration written to {path}. Next: `teamsync sync`.")
    output.emit(
        {
            "config": str(path),
            "backend": config.backend,
            "remote_entries": len(snap.checksums),
            "replaced": previous.to_dict() if previous is not None else None,
        }
    )
    return 0


def describe_remote(config: SyncConfig) -> str:
    """The remote as messages name it (credentials masked)."""
    if config.backend == "git":
        return f"branch {config.branch} of {redact_url(config.url)}"
    if config.backend == "memstore":
        return _memstore_name(config)
    return f"{redact_url(config.url)} (repository {config.repo or 'from origin'})"


def safety_for(
    config: SyncConfig, *, yes: bool, recover: Recovery | None, restore_local: bool = False
) -> Safety:
    """The guards for one run: the person's flags over teamsync.yaml over the defaults."""
    share = config.mass_change_share
    least = config.mass_change_min
    return Safety(
        yes=yes,
        recover=recover,
        restore_local=restore_local,
        mass_share=DEFAULT_MASS_SHARE if share is None else share,
        mass_min=DEFAULT_MASS_MIN if least is None else least,
    )


def load_allowlist(cwd: Path, memdir: Path) -> frozenset[str]:
    """The reviewed allowlist as committed (the project's ``HEAD``; the memory dir's file
    outside a git checkout); an uncommitted edit and inline comments never count."""
    from teamsync.security.allowlist import load_committed

    return load_committed(cwd, memdir)


def _memstore_name(config: SyncConfig) -> str:
    at = f" at {redact_url(config.url)}" if config.url else ""
    return f"memory store {config.memory_store}{at} (folder {config.path_prefix or '/'})"


def _describe(config: SyncConfig) -> str:
    if config.backend == "git":
        return f"git {redact_url(config.url)} branch {config.branch}"
    if config.backend == "memstore":
        return _memstore_name(config)
    return f"rest {redact_url(config.url)}" + (f" repo {config.repo}" if config.repo else "")


def _previous_config(memdir: Path) -> SyncConfig | None:
    """The configuration init would replace (None when there is none or it is unreadable)."""
    path = config_path(memdir)
    if path.is_dir():
        raise ConfigError(
            f"{path} is a directory, where teamsync keeps its configuration file. Move it "
            f"away (`mv {path} {path}.old`) and run init again."
        )
    if not path.exists():
        return None
    try:
        return load_config(memdir)
    except ConfigError:
        return None  # unreadable or invalid: init replaces it, as the error message says


def _save(memdir: Path, config: SyncConfig) -> Path:
    try:
        return save_config(memdir, config)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {config_path(memdir)}: {exc.strerror}; check that the memory "
            "directory is writable"
        ) from exc


def config_from_options(
    *,
    git_url: str | None,
    branch: str | None,
    rest_url: str | None = None,
    repo: str | None = None,
    token_file: str | None = None,
    memory_store: str | None = None,
    path_prefix: str | None = None,
    base_url: str | None = None,
) -> SyncConfig:
    """The configuration ``teamsync init`` writes, from its options; UsageError (exit 2) otherwise."""
    if sum(1 for x in (git_url, rest_url, memory_store) if x) > 1:
        raise UsageError("choose one remote: --git URL, --rest URL or --memory-store ID")
    if memory_store:
        return _memstore_config(memory_store, path_prefix, base_url, token_file)
    if path_prefix or base_url:
        raise UsageError("--path-prefix and --base-url go with --memory-store")
    if rest_url:
        return _rest_config(rest_url, repo, token_file)
    if git_url:
        return SyncConfig("git", git_url, branch or DEFAULT_BRANCH)
    raise UsageError(
        "say where to sync: `teamsync init --git URL [--branch NAME]` "
        "or `teamsync init --rest URL [--repo OWNER/NAME]`"
    )


def _rest_config(url: str, repo: str | None, token_file: str | None) -> SyncConfig:
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--rest {url!r}: use an http:// or https:// URL")
    try:
        repo_id = repo_as_written(repo) if repo else None
    except UsageError as exc:
        raise UsageError(f"--repo: {exc}") from exc
    tfile = str(Path(token_file).expanduser().resolve()) if token_file else None
    return SyncConfig("rest", url.rstrip("/"), repo=repo_id, token_file=tfile)


def _memstore_config(
    store: str, prefix: str | None, base_url: str | None, token_file: str | None
) -> SyncConfig:
    from teamsync.sync.memstore import normalize_prefix

    if not re.fullmatch(r"memstore_[A-Za-z0-9]{1,100}", store):
        raise UsageError(f"--memory-store {printable(store)!r}: a store id looks like memstore_…")
    if base_url and not base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url {base_url!r}: use an http:// or https:// URL")
    tfile = str(Path(token_file).expanduser().resolve()) if token_file else None
    return SyncConfig(
        "memstore",
        (base_url or "").rstrip("/"),
        memory_store=store,
        path_prefix=normalize_prefix(prefix),
        token_file=tfile,
    )


def sync_once(
    settings: Settings,
    *,
    mode: Mode,
    dry_run: bool = False,
    progress: Progress | None = None,
    now: float | None = None,
    yes: bool = False,
    recover: Recovery | None = None,
    restore_local: bool = False,
) -> SyncReport:
    """One engine pass for the configured memory directory (the library entry point).

    ``yes`` goes past the mass-change guard; ``recover`` says how to go on when
    the remote lost history; ``restore_local`` downloads again the synced memories
    missing here (see :mod:`teamsync.sync.guards`).
    """
    memdir = working_memory_dir(settings)
    config = load_config(memdir)
    team = SafeDir(memdir / "team", create=True)
    try:
        backend = open_backend(config, settings)
        try:
            state = open_state(settings, team.root, config)
            try:
                report = run_sync(
                    team,
                    backend,
                    state,
                    mode=mode,
                    dry_run=dry_run,
                    who=backend.identity(),
                    now=time.time() if now is None else now,
                    freshness_dir=settings.state_dir,
                    progress=progress,
                    safety=safety_for(
                        config, yes=yes, recover=recover, restore_local=restore_local
                    ),
                    where=describe_remote(config),
                    allowlist=load_allowlist(settings.cwd, memdir),
                )
                if report.exit_code() == 0:
                    _certify_noop(settings, memdir, team.root, config, state, backend)
                return report
            finally:
                state.close()
        finally:
            backend.close()
    finally:
        team.close()


def _certify_noop(
    settings: Settings,
    memdir: Path,
    team_root: Path,
    config: SyncConfig,
    state: BaseStore,
    backend: Backend,
) -> None:
    """Let the next no-op be answered by the CLI's fast path (git backend; see
    :mod:`teamsync.sync.noop`). Only a cache: a failure here changes nothing."""
    if not isinstance(backend, CertifiesNoop):
        return
    import sqlite3

    from teamsync.sync.noop import certify

    try:
        certify(
            state=state,
            store=state.path,
            memdir=memdir,
            team_root=team_root,
            config=config,
            state_dir=settings.state_dir,
            cache_dir=settings.cache_dir,
            git_dir=backend.path,
            listing=backend.noop_listing(),
        )
    except (OSError, sqlite3.Error, ValueError, TeamsyncError):
        return  # no certificate: the next run takes the full path, as without this cache


def _open_state(settings: Settings, team_root: Path, rid: str) -> BaseStore:
    """The base store; a corrupt one is named with the way out (never silently reset)."""
    import sqlite3

    path = store_path(settings.state_dir, team_root, rid)
    try:
        state = BaseStore.open(settings.state_dir, team_root, rid)
        state.checksums()  # reads the table: a damaged file fails here, not mid-run
        return state
    except sqlite3.DatabaseError as exc:
        raise ConfigError(
            f"the sync-state database {path} is damaged ({exc}). Move it aside "
            f"(`mv '{path}' '{path}.damaged'`) and sync again: teamsync then compares both "
            "sides afresh and keeps both versions of any file that differs, so nothing is lost"
        ) from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a directory where the sync-state database should be; "
                          "move it aside and sync again") from exc  # fmt: skip


def run(
    settings: Settings,
    output: Output,
    *,
    mode: Mode,
    dry_run: bool = False,
    progress: ProgressFactory | None = None,
    yes: bool = False,
    recover: Recovery | None = None,
    restore_local: bool = False,
) -> int:
    """Run one engine pass in ``mode``; print what happened; 1 on conflicts, refusals or a stop."""
    bar = progress() if progress else None
    report = sync_once(
        settings,
        mode=mode,
        dry_run=dry_run,
        progress=bar,
        yes=yes,
        recover=recover,
        restore_local=restore_local,
    )
    if report.dry_run:
        report = as_planned(report)
    close = getattr(bar, "close", None)
    if callable(close):
        close()  # the bar's line ends before the summary, which starts on its own line
    _print(output, report)
    output.emit(report.to_json())
    if report.written and not dry_run:
        from teamsync.commands.recall import warm_in_background

        warm_in_background(settings)
    return report.exit_code()


_STAMP = re.compile(r"\.conflict-\d{8}T\d{6}Z-")
"""The clock in a conflict copy's name (:func:`teamsync.sync.plan.conflict_name`)."""


def as_planned(report: SyncReport) -> SyncReport:
    """A dry run's report as a plan (``status``, ``--dry-run``): the conflict copies it
    would make are not remote changes to pull, and their names carry ``<time>`` for the
    clock, so the same state prints the same plan on every run."""
    from dataclasses import replace

    from teamsync.sync.report import Conflict

    copies = {c.copy for c in report.conflicts if c.copy}
    return replace(
        report,
        written=[k for k in report.written if k not in copies],
        conflicts=[
            Conflict(c.key, _STAMP.sub(".conflict-<time>-", c.copy) if c.copy else None)
            for c in report.conflicts
        ],
    )


_FS_REFUSALS = ("permission denied", "read-only file system", "operation not permitted")
"""Reasons (OSError strerror) that mean the team directory is not writable."""


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
            + _lines(
                "Would conflict (your version kept beside it)",
                [f"{c.key} -> {c.copy}" if c.copy else c.key for c in report.conflicts],
            )
        )
        if not blocks:
            unsynced = len(report.rejected) + len(report.held_back)
            blocks = (
                [f"Not in sync: {unsynced} file(s) cannot be synced (see below)."]
                if unsynced
                else [STATUS_CLEAN]
            )
        for line in blocks:
            output.info(line)
    else:
        _print_run(output, report, rel)
    denied = [r for r in report.rejected if r.reason.endswith(_FS_REFUSALS)]
    if denied:
        output.warn(
            f"{len(denied)} file(s) in team/ could not be written or removed "
            f"({denied[0].reason.rpartition(': ')[2]}), e.g. {rel(denied[0].key)}. Make the "
            "team directory and its files writable (`chmod -R u+w` it) and run the command again"
        )
    for r in report.rejected:
        if r in denied:
            continue
        output.warn(f"{rel(r.key)}: {printable(r.reason)}")
    for r in report.held_back:
        output.warn(f"{rel(r.key)}: held back, {printable(r.reason)}")
    for r in report.unknown:
        output.warn(f"{rel(r.key)}: {printable(r.reason)}")


def _print_run(output: Output, report: SyncReport, rel: Callable[[str], str]) -> None:
    dry = report.dry_run
    for c in report.conflicts:
        copy = rel(c.copy) if c.copy else "a conflict copy"
        kept = "would keep" if dry else "kept"
        output.warn(
            f"both sides changed {rel(c.key)}: {kept} your version as {copy} and "
            f"the remote's in {rel(c.key)}; compare them, then delete the copy"
        )
    for key in report.merged:
        merged = "would merge" if dry else "merged"
        output.info(f"{merged} your edits and the remote's in {rel(key)}")
    for line in report.index_conflicts:
        output.warn(f"{rel('MEMORY.md')}: {printable(line)}")
    for pair in report.renamed:
        old, _, new = pair.partition(" -> ")
        output.info(
            f"the team now spells {rel(old)} as {rel(new)}: your version moved to {rel(new)}"
        )
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
        output.success(UP_TO_DATE)

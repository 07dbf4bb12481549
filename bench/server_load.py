"""The server under load: closed-loop keep-alive clients against a real ``teamsync serve``.

Loopback only, every cell bounded in time. On SQLite (``synchronous=FULL``) and on
PostgreSQL with its durability on (``fsync``, synchronous commit, full page
writes), one server process, and for PostgreSQL also two (``--workers 2``):

- ``own-repo PUT``: each client upserts one key of its own repository;
- ``one-repo PUT, per-key CAS``: every client writes its own keys of one busy
  repository, each PUT with ``baseChecksums`` (teamsync's client); the share
  accepted on the first try is printed;
- ``one-repo PUT, If-Match``: the same with a whole-store ``If-Match`` instead
  (Claude Code's own client; the peer in this run): a 412 re-reads the head
  and retries (up to 50 times). Its row counts accepted updates, so latency
  and CPU are per accepted update, retries included;
- ``PUT into N entries``: one-entry PUTs into a repository of 100, 10,000 and
  50,000 entries (the server's CPU per PUT should not grow with N);
- ``304 at N entries``: conditional GETs of those repositories;
- ``full listing``: one GET of the 50,000-entry repository, then eight at once,
  with the server's peak RSS above its resting RSS (``/proc``, ``clear_refs``);
  its p50 column is the wall time of the round.

Each cell prints req/s, p50/p99 (ms), the statuses that were not 200/304 (0: a
transport error, such as a kept-alive connection the server closed while a
starved client thread sat on it),
server CPU per request (ms, all server processes) and server RSS (MB). After
the PUT cells of each database, the bench checks that no update was lost:
every acknowledged PUT's value is in the final listing (each key is written by
one client, so its last acknowledged value must be the stored one) and every
acknowledged PUT is in the repository's history.

First, the one-entry PUT's latency at 1, 8 and 32 clients (own repositories): each
build on a database of its own, builds taking turns for ``--rounds`` rounds, a
fresh server each time; it prints the median and the best p50 of the rounds, the
median CPU per PUT, and old/new ratios. Before it, one 4 KiB write + fdatasync
in the bench's temporary folder is timed: the floor of one durable commit here.

    nice .venv/bin/python bench/server_load.py [--seconds 3] [--clients 8,32,128]
        [--db sqlite,postgres] [--old DIR] [--rounds 3] [--only latency,cells,two]
        [--two-clients 8,32] [--two-sizes 100,10000]

``--old DIR`` runs an older checkout's server in the same run, for before/after
ratios on the same machine at the same time: make one with
``git worktree add /tmp/oldserver COMMIT``. Its ``teamsync`` runs with this
interpreter and its packages (the editable install's finder is dropped, so the
tree's own package is imported; the older code must run on today's dependencies).
``--teamsync`` names the new build's ``teamsync``. The two-process run
(``serve --workers 2``, on each database) is new-build only, with the clients and
store sizes of ``--two-clients`` and ``--two-sizes``, and ends with the same
no-lost-update check. ``--workers 1,2`` runs the latency section with one and
with two server processes (``new x2``); its ``client ms`` column is the bench's
own CPU per request: the clients share the machine's cores with the server.
The client threads share the machine with the server: on two cores, 128
Python clients cost the server CPU time, so read latency at 128 as an upper bound.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.postgres import start_cluster  # noqa: E402
from testing.server import free_port  # noqa: E402

PATH = "/api/claude_code/team_memory"
SIZES = (100, 10_000, 50_000)
IF_MATCH_MOST = 32
"""Whole-store If-Match clients at most: at 128 an accepted update took 88 s (SQLite run),
so that cell alone would outlast the rest of the bench."""
TICK = os.sysconf("SC_CLK_TCK")


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# -- the server process ------------------------------------------------------------------
@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str

    def pids(self) -> list[int]:
        kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        extra = [int(p) for p in kids.read_text().split()] if kids.exists() else []
        return [self.proc.pid, *extra]

    def cpu(self) -> float:
        total = 0.0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / TICK
        return total

    def _status(self, name: str) -> float:
        total = 0.0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(name + ":"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                continue
        return total

    def rss(self) -> float:
        return self._status("VmRSS")

    def peak(self) -> float:
        return self._status("VmHWM")

    def reset_peak(self) -> None:
        for pid in self.pids():
            Path(f"/proc/{pid}/clear_refs").write_text("5")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def serve(teamsync: list[str], db_url: str, workers: int) -> Server:
    port = free_port()
    argv = [*teamsync, "serve", "--port", str(port), "--db", db_url, "--max-entries", "60000"]
    if workers > 1:
        argv += ["--workers", str(workers)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx2.get(url + "/healthz", timeout=1).status_code == 200:
                time.sleep(0.5 if workers > 1 else 0)  # every worker up
                return Server(proc, url)
        except httpx2.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("teamsync serve did not start")


def token(teamsync: list[str], db_url: str, repo: str) -> str:
    made = subprocess.run(
        [*teamsync, "--json", "token", "create", "--repo", repo, "--db", db_url],
        capture_output=True,
        text=True,
        check=True,
    )
    return str(json.loads(made.stdout)["token"])


def tokens_for(teamsync: list[str], db_url: str, repos: list[str]) -> dict[str, str]:
    """A token per repository (a CLI run each, four at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        return dict(zip(repos, pool.map(lambda r: token(teamsync, db_url, r), repos), strict=True))


# -- closed-loop load ---------------------------------------------------------------------
@dataclass
class Cell:
    name: str
    clients: int
    rps: float = 0.0
    p50: float = 0.0
    p99: float = 0.0
    n: int = 0
    other: Counter[int] = field(default_factory=Counter)
    cpu_ms: float = 0.0
    client_ms: float = 0.0
    """The bench process's own CPU per request (its client threads): on this machine the
    clients share the cores with the server."""
    rss: float = 0.0
    note: str = ""


Step = Callable[[httpx2.Client, int, int], int]
"""(client, client id, request number) -> status; may send several requests (retries)."""


def load(
    server: Server,
    name: str,
    clients: int,
    seconds: float,
    step: Step,
    tokens: Callable[[int], str],
) -> Cell:
    lat: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    ready = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def worker(cid: int) -> None:
        mine: list[float] = []
        seen: Counter[int] = Counter()
        auth = {"Authorization": f"Bearer {tokens(cid)}"}
        limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
        with httpx2.Client(base_url=server.url, headers=auth, timeout=60, limits=limits) as c:
            c.get("/healthz")  # the connection, opened before the clock starts
            ready.wait()
            i = 0
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter()
                try:
                    seen[step(c, cid, i)] += 1
                except httpx2.TransportError:  # counted as status 0; the next request reconnects
                    seen[0] += 1
                mine.append(time.perf_counter() - t0)
                i += 1
        with lock:
            lat.extend(mine)
            statuses.update(seen)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    stop_at[0] = time.perf_counter() + 3600
    ready.wait()
    cpu0, mine0, start = server.cpu(), time.process_time(), time.perf_counter()
    stop_at[0] = start + seconds
    for t in threads:
        t.join(seconds + 120)
    wall = time.perf_counter() - start
    cpu, mine = server.cpu() - cpu0, time.process_time() - mine0
    lat.sort()
    cell = Cell(name, clients, n=len(lat), rss=server.rss())
    if lat:
        cell.rps = len(lat) / wall
        cell.p50 = statistics.median(lat) * 1000
        cell.p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        cell.cpu_ms = cpu * 1000 / len(lat)
        cell.client_ms = mine * 1000 / len(lat)
    cell.other = Counter({s: k for s, k in statuses.items() if s not in (200, 304)})
    return cell


class Writes:
    """Every acknowledged PUT: (repo, key) -> checksums in order, for the lost-update check."""

    def __init__(self) -> None:
        self.acked: dict[tuple[str, str], list[str]] = {}
        self.lock = threading.Lock()

    def ack(self, repo: str, key: str, value: str) -> None:
        with self.lock:
            self.acked.setdefault((repo, key), []).append(value)


def put(c: httpx2.Client, repo: str, body: dict[str, object], headers: dict[str, str]) -> int:
    return c.put(PATH, params={"repo": repo}, json=body, headers=headers).status_code


def own_repo(writes: Writes, tag: str) -> Step:
    """Each client upserts one key of its own repository (per-key CAS on its last value;
    one step object for every cell, so a client knows what it wrote in the last one)."""
    last: dict[int, str | None] = {}

    def step(c: httpx2.Client, cid: int, i: int) -> int:
        repo, key, text = f"acme/own{cid}", "note.md", f"{tag} client {cid} put {i}\n"
        status = put(c, repo, {"entries": {key: text}, "baseChecksums": {key: last.get(cid)}}, {})
        if status == 200:
            last[cid] = sha(text)
            writes.ack(repo, key, sha(text))
        elif status == 409:  # never expected: nobody else writes this repository
            got = c.get(PATH, params={"repo": repo, "view": "hashes"}).json()
            last[cid] = got["entryChecksums"].get(key)
        return status

    return step


def one_repo_cas(writes: Writes, repo: str, tag: str, first_try: Counter[bool]) -> Step:
    """Each client writes its own keys of ``repo``; a 409 (never expected) re-reads them."""
    last: dict[tuple[int, int], str | None] = {}

    def step(c: httpx2.Client, cid: int, i: int) -> int:
        key = f"{tag}/c{cid}/k{i % 4}.md"
        text = f"{tag} client {cid} put {i}\n"
        for attempt in range(20):
            base = last.get((cid, i % 4))
            status = put(c, repo, {"entries": {key: text}, "baseChecksums": {key: base}}, {})
            if status == 200:
                with writes.lock:
                    first_try[attempt == 0] += 1
                last[(cid, i % 4)] = sha(text)
                writes.ack(repo, key, sha(text))
                return 200
            if status != 409:
                return status
            got = c.get(PATH, params={"repo": repo, "view": "hashes"}).json()
            last[(cid, i % 4)] = got["entryChecksums"].get(key)
        return 409

    return step


def one_repo_if_match(writes: Writes, repo: str, tag: str, first_try: Counter[bool]) -> Step:
    """Whole-store ``If-Match`` (Claude Code's client): on 412 re-read the head, retry."""
    etags: dict[int, str] = {}

    def step(c: httpx2.Client, cid: int, i: int) -> int:
        key, text = f"{tag}/c{cid}.md", f"{tag} client {cid} put {i}\n"
        for attempt in range(50):
            if cid not in etags:
                head = c.get(PATH, params={"repo": repo, "view": "hashes"})
                if head.status_code != 200:
                    return head.status_code
                etags[cid] = head.json()["checksum"]
            status = put(c, repo, {"entries": {key: text}}, {"If-Match": etags[cid]})
            if status == 200:
                with writes.lock:
                    first_try[attempt == 0] += 1
                writes.ack(repo, key, sha(text))
                etags.pop(cid)
                return 200
            etags.pop(cid, None)
            if status != 412:
                return status
        return 412

    return step


def not_modified(repo: str, etag: str) -> Step:
    def step(c: httpx2.Client, cid: int, i: int) -> int:
        return c.get(PATH, params={"repo": repo}, headers={"If-None-Match": etag}).status_code

    return step


# -- setup and checks ---------------------------------------------------------------------
def prefill(url: str, tok: str, repo: str, n: int) -> str:
    """``n`` entries of about 100 bytes in ``repo`` (batches under 200,000 bytes); its ETag."""
    entries = {f"notes/topic-{i:06}.md": f"memory {i}: " + "x" * 80 + "\n" for i in range(n)}
    keys = sorted(entries)
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {tok}"}, timeout=120) as c:
        for start in range(0, n, 1500):
            batch = {k: entries[k] for k in keys[start : start + 1500]}
            assert put(c, repo, {"entries": batch}, {}) == 200
        return c.get(PATH, params={"repo": repo, "view": "hashes"}).headers["etag"].strip('"')


def check_no_lost_update(url: str, tokens: dict[str, str], writes: Writes) -> str:
    repos = sorted({repo for repo, _ in writes.acked})
    lost_final, lost_history, total = 0, 0, 0
    for repo in repos:
        auth = {"Authorization": f"Bearer {tokens[repo]}"}
        with httpx2.Client(base_url=url, headers=auth, timeout=120) as c:
            listed = c.get(PATH, params={"repo": repo, "view": "hashes"}).json()["entryChecksums"]
            seen: set[tuple[str, str]] = set()
            after = 0
            while True:
                page = c.get(
                    PATH + "/history", params={"repo": repo, "after": after, "limit": 1000}
                )
                data = page.json()
                seen.update((i["key"], i["checksum"]) for i in data["items"])
                if data["next_after"] is None:
                    break
                after = data["next_after"]
        for (r, key), values in writes.acked.items():
            if r != repo:
                continue
            total += len(values)
            lost_final += listed.get(key) != values[-1]
            lost_history += sum((key, v) not in seen for v in values)
    verdict = "OK" if lost_final == lost_history == 0 else "LOST UPDATES"
    return (
        f"{verdict}: {total} acknowledged PUTs in {len(repos)} repositories; "
        f"{lost_final} keys whose final value is not their last acknowledged one, "
        f"{lost_history} acknowledged PUTs missing from the history"
    )


def full_listing(server: Server, repo: str, tok: str) -> list[Cell]:
    out = []
    auth = {"Authorization": f"Bearer {tok}", "Accept-Encoding": "identity"}
    for clients in (1, 8):
        time.sleep(0.5)
        rest = server.rss()
        server.reset_peak()
        sizes: list[int] = []
        lock = threading.Lock()

        def one(sizes: list[int] = sizes, lock: threading.Lock = lock) -> None:
            with httpx2.Client(base_url=server.url, headers=auth, timeout=120) as c:
                body = c.get(PATH, params={"repo": repo}).content
            with lock:
                sizes.append(len(body))

        t0 = time.perf_counter()
        threads = [threading.Thread(target=one) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        wall = time.perf_counter() - t0
        cell = Cell(f"full listing ({sizes[0] / 1e6:.0f} MB)", clients, n=len(sizes))
        cell.rps = len(sizes) / wall
        cell.rss = server.rss()
        cell.p50 = wall * 1000
        cell.note = f"peak RSS {server.peak() - rest:+.0f} MB over resting {rest:.0f} MB"
        out.append(cell)
    return out


# -- the run -------------------------------------------------------------------------------
def run_db(
    label: str,
    db_url: str,
    teamsync: list[str],
    clients: list[int],
    seconds: float,
    workers: int,
    sizes: tuple[int, ...] = SIZES,
) -> list[Cell]:
    repos = {f"acme/own{c}" for c in range(max(clients))}
    repos |= {"acme/busy-cas", "acme/busy-match", *(f"acme/size{n}" for n in sizes)}
    tokens = tokens_for(teamsync, db_url, sorted(repos))
    server = serve(teamsync, db_url, workers)
    cells: list[Cell] = []
    writes = Writes()
    try:
        for size in sizes:
            prefill(server.url, tokens[f"acme/size{size}"], f"acme/size{size}", size)
        for busy in ("acme/busy-cas", "acme/busy-match"):
            prefill(server.url, tokens[busy], busy, 1)
        own = own_repo(writes, label)
        for n in clients:
            cells.append(load(server, "own-repo PUT", n, seconds, own,
                              lambda cid: tokens[f"acme/own{cid}"]))  # fmt: skip
        for n in clients:
            first: Counter[bool] = Counter()
            step = one_repo_cas(writes, "acme/busy-cas", f"{label}{n}", first)
            cell = load(server, "one-repo PUT, per-key CAS", n, seconds, step,
                        lambda cid: tokens["acme/busy-cas"])  # fmt: skip
            cell.note = f"{100 * first[True] / max(1, sum(first.values())):.1f}% first try"
            cells.append(cell)
        for n in [c for c in clients if c <= IF_MATCH_MOST]:
            first = Counter()
            step = one_repo_if_match(writes, "acme/busy-match", f"{label}{n}", first)
            cell = load(server, "one-repo PUT, If-Match", n, seconds, step,
                        lambda cid: tokens["acme/busy-match"])  # fmt: skip
            cell.note = f"{100 * first[True] / max(1, sum(first.values())):.1f}% first try"
            cells.append(cell)
        for size in sizes:
            repo = f"acme/size{size}"
            first = Counter()
            step = one_repo_cas(writes, repo, f"{label}-size", first)
            cells.append(load(server, f"PUT into {size:,} entries", clients[0], seconds, step,
                              lambda cid, r=repo: tokens[r]))  # fmt: skip
        for size in sizes:
            repo = f"acme/size{size}"
            head = httpx2.get(server.url + PATH, params={"repo": repo, "view": "hashes"},
                              headers={"Authorization": f"Bearer {tokens[repo]}"}, timeout=60)  # fmt: skip
            for n in (clients[0], clients[-1]) if size == sizes[-1] else (clients[0],):
                cells.append(load(server, f"304 at {size:,} entries", n, seconds,
                                  not_modified(repo, head.headers["etag"]),
                                  lambda cid, r=repo: tokens[r]))  # fmt: skip
        cells += full_listing(server, f"acme/size{sizes[-1]}", tokens[f"acme/size{sizes[-1]}"])
        print(f"  [{label}] no lost update: {check_no_lost_update(server.url, tokens, writes)}",
              flush=True)  # fmt: skip
    finally:
        server.stop()
    return cells


def show(label: str, cells: list[Cell]) -> None:
    print(f"\n{label}")
    head = f"{'scenario':30} {'clients':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    print(head + f" {'CPU ms/req':>10} {'RSS MB':>7}  other statuses / note")
    for c in cells:
        other = ", ".join(f"{s}×{k}" for s, k in sorted(c.other.items())) or "-"
        print(
            f"{c.name:30} {c.clients:>7} {c.rps:>8.0f} {c.p50:>8.1f} {c.p99:>8.1f}"
            f" {c.cpu_ms:>10.2f} {c.rss:>7.0f}  {other}  {c.note}",
            flush=True,
        )


def targets(label: str, cells: list[Cell]) -> None:
    by = {(c.name, c.clients): c for c in cells}
    into = [c for c in cells if c.name.startswith("PUT into ")]
    small, big = into[0], into[-1]
    own8 = by.get(("own-repo PUT", 8))
    cas32 = by.get(("one-repo PUT, per-key CAS", 32))
    listing = next(c for c in cells if c.name.startswith("full listing") and c.clients == 1)
    print(f"  [{label}] targets (a quiet machine's; this one is shared):")
    if own8:
        print(f"    one-entry PUT p50 at 8 clients: {own8.p50:.1f} ms (target <= 10)")
    ratio = big.cpu_ms / small.cpu_ms if small.cpu_ms else float("nan")
    print(f"    PUT CPU {big.name[4:]} / {small.name[4:]}: {big.cpu_ms:.2f} / "
          f"{small.cpu_ms:.2f} ms = {ratio:.2f}x (target <= 1.5)")  # fmt: skip
    print(f"    {listing.name}: {listing.note} (target <= +100 MB)")
    if cas32:
        print(f"    one repository, per-key CAS, 32 clients: {cas32.note} (target >= 95%)")


def compare(label: str, new: list[Cell], old: list[Cell]) -> None:
    """old / new for every cell both runs have: latency, CPU per request, throughput."""
    before = {(c.name, c.clients): c for c in old}
    print(f"\n{label}: before (--old) / after, same run")
    print(f"{'scenario':30} {'clients':>7} {'p50 ms old/new':>16} {'ratio':>6}"
          f" {'CPU ms old/new':>16} {'ratio':>6} {'req/s old/new':>15}")  # fmt: skip
    for c in new:
        o = before.get((c.name, c.clients))
        if o is None or c.name.startswith("full listing"):
            continue
        p50 = o.p50 / c.p50 if c.p50 else float("nan")
        cpu = o.cpu_ms / c.cpu_ms if c.cpu_ms else float("nan")
        print(f"{c.name:30} {c.clients:>7} {o.p50:>7.1f}/{c.p50:<8.1f} {p50:>6.2f}"
              f" {o.cpu_ms:>7.2f}/{c.cpu_ms:<8.2f} {cpu:>6.2f} {o.rps:>7.0f}/{c.rps:<7.0f}")  # fmt: skip


# -- one-entry PUT latency, old and new interleaved -------------------------------------
LATENCY_CLIENTS = (1, 8, 32)


def fsync_probe(where: str, n: int = 100) -> float:
    """Median ms of one 4 KiB write + fdatasync in ``where`` (the floor of one durable
    commit on this disk: SQLite's WAL commit with synchronous=FULL is one of these)."""
    path = Path(where) / "fsync-probe"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    lat = []
    try:
        for i in range(n):
            os.pwrite(fd, os.urandom(4096), (i % 64) * 4096)
            t0 = time.perf_counter()
            os.fdatasync(fd)
            lat.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(lat) * 1000


def latency(
    builds: dict[str, list[str]],
    db_urls: Callable[[], str],
    seconds: float,
    rounds: int,
    workers: tuple[int, ...] = (1,),
    clients: tuple[int, ...] = LATENCY_CLIENTS,
) -> dict[str, list[Cell]]:
    """One-entry own-repository PUTs at 1, 8 and 32 clients, each build (and process count:
    ``new x2`` is ``serve --workers 2``) on a database of its own (kept across rounds), the
    builds taking turns round after round, a fresh server each time (so a load spike hits
    both)."""
    runs = {
        (name if w == 1 else f"{name} x{w}"): (argv, w)
        for w in workers
        for name, argv in builds.items()
    }
    out: dict[str, list[Cell]] = {name: [] for name in runs}
    urls = {name: db_urls() for name in runs}
    repos = [f"acme/own{cid}" for cid in range(max(clients))]
    tokens = {name: tokens_for(argv, urls[name], repos) for name, (argv, _) in runs.items()}
    steps = {name: own_repo(Writes(), name) for name in runs}  # each knows its last values
    for _ in range(rounds):
        for name, (teamsync, procs) in runs.items():
            server = serve(teamsync, urls[name], procs)
            try:
                step = steps[name]
                for n in clients:
                    cell = load(server, "own-repo PUT", n, seconds, step,
                                lambda cid, t=tokens[name]: t[f"acme/own{cid}"])  # fmt: skip
                    out[name].append(cell)
            finally:
                server.stop()
    return out


def show_latency(
    label: str, runs: dict[str, list[Cell]], clients: tuple[int, ...] = LATENCY_CLIENTS
) -> None:
    print(f"\n{label}: one-entry PUT, own repository (median over rounds; best p50 of the rounds)")
    print(f"{'build':8} {'clients':>7} {'p50 ms':>8} {'best p50':>9} {'p99 ms':>8}"
          f" {'CPU ms/req':>10} {'client ms':>9} {'req/s':>7}  rounds")  # fmt: skip
    med: dict[tuple[str, int], tuple[float, float]] = {}
    for name, cells in runs.items():
        for n in clients:
            mine = [c for c in cells if c.clients == n]
            p50 = statistics.median(c.p50 for c in mine)
            cpu = statistics.median(c.cpu_ms for c in mine)
            med[(name, n)] = (p50, cpu)
            print(f"{name:8} {n:>7} {p50:>8.1f} {min(c.p50 for c in mine):>9.1f}"
                  f" {statistics.median(c.p99 for c in mine):>8.1f} {cpu:>10.2f}"
                  f" {statistics.median(c.client_ms for c in mine):>9.2f}"
                  f" {statistics.median(c.rps for c in mine):>7.0f}  {len(mine)}")  # fmt: skip
    for old in [name for name in runs if name.startswith("old")]:
        new = "new" + old[3:]
        for n in clients:
            (op, oc), (np_, nc) = med[(old, n)], med[(new, n)]
            print(f"  {new:>6} {n:>3} clients: p50 {old}/{new} {op / np_:.2f}x,"
                  f" CPU per PUT {old}/{new} {oc / nc:.2f}x")  # fmt: skip


LAUNCH = (
    "import sys; root = sys.argv.pop(1); sys.path.insert(0, root);"
    " sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)];"
    " import teamsync; assert teamsync.__file__.startswith(root), teamsync.__file__;"
    " from teamsync.cli import main; sys.argv[0] = 'teamsync'; main()"
)
"""Runs the ``teamsync`` of a source tree with this interpreter (and its packages): the
editable install's finder is dropped so the tree's own package is the one imported."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per cell")
    parser.add_argument("--clients", default="8,32,128")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--teamsync", default=str(Path(sys.executable).with_name("teamsync")))
    parser.add_argument("--old", metavar="DIR", help="a checkout of an older server to run too")
    parser.add_argument("--rounds", type=int, default=3, help="of the latency section")
    parser.add_argument("--only", default="latency,cells,two", help="sections to run")
    parser.add_argument("--two-clients", default="8,32", help="clients of the --workers 2 run")
    parser.add_argument("--two-sizes", default="100,10000", help="store sizes of that run")
    parser.add_argument("--workers", default="1", help="process counts of the latency section")
    parser.add_argument("--latency-clients", default="1,8,32", help="of the latency section")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    sections = set(args.only.split(","))
    builds = {"new": [args.teamsync]}
    if args.old:
        builds["old"] = [sys.executable, "-c", LAUNCH, str(Path(args.old).resolve())]
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}; "
          f"{os.cpu_count()} CPUs; builds: {builds}", flush=True)  # fmt: skip
    dbs = args.db.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        print(f"one 4 KiB write + fdatasync here: median {fsync_probe(tmp):.2f} ms", flush=True)
        serial = iter(range(10_000))
        cluster = start_cluster(durable=True) if "postgres" in dbs else None
        try:
            for db in dbs:
                if db == "sqlite":
                    label, fresh = (
                        "SQLite (synchronous=FULL)",
                        lambda: f"sqlite:///{tmp}/s{next(serial)}.sqlite3",
                    )
                else:
                    assert cluster is not None
                    label, fresh = "PostgreSQL (fsync on)", cluster.create_database
                if "latency" in sections:
                    procs = tuple(int(w) for w in args.workers.split(","))
                    lat_clients = tuple(int(c) for c in args.latency_clients.split(","))
                    runs = latency(builds, fresh, args.seconds, args.rounds, procs, lat_clients)
                    show_latency(label, runs, lat_clients)
                if "cells" in sections:
                    runs = {name: run_db(f"{db} {name}", fresh(), argv, clients, args.seconds, 1)
                            for name, argv in builds.items()}  # fmt: skip
                    for name, cells in runs.items():
                        show(f"{label}, 1 process, {name} build", cells)
                        targets(f"{db} {name}", cells)
                    if "old" in runs:
                        compare(label, runs["new"], runs["old"])
                if "two" in sections:  # two processes on one database, new build only
                    two = [int(c) for c in args.two_clients.split(",")]
                    sizes = tuple(int(n) for n in args.two_sizes.split(","))
                    cells = run_db(f"{db} x2", fresh(), builds["new"], two, args.seconds, 2,
                                   sizes)  # fmt: skip
                    show(f"{label}, 2 processes (serve --workers 2)", cells)
                    targets(f"{db} x2", cells)
        finally:
            if cluster is not None:
                cluster.stop()
    print(f"\nload average after: {Path('/proc/loadavg').read_text().strip()}", flush=True)


if __name__ == "__main__":
    main()

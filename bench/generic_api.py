"""The generic layer through detect-secrets' documented ``scan_line``, against the one shipped.

    python bench/generic_api.py [--runs 11]

teamsync's generic layer (:mod:`teamsync.security._generic`) runs detect-secrets'
line pipeline with its own three plugin instances. This script builds the
alternative the issue names, ``scan_line`` under ``transient_settings(_CONFIG)``,
with a ``requests`` stand-in that answers module-level attribute reads (the
annotations two plugins evaluate at import) with a lazy reference, so
``requests`` is imported only if a call uses it. Then it reports:

1. the CPU time of the first ``detect`` on one candidate, in fresh processes
   (median of ``--runs``, the two alternating; teamsync's own modules are
   imported before the clock starts, so this is detect-secrets' import and
   run), and what each loaded;
2. ``teamsync scan --staged`` on a 10-file commit holding one candidate, CPU
   of the process and its git children (median of ``--runs``, byte-compiled
   first as in ``bench/startup.py``), both ways;
3. the findings of both on the candidates of the two 10 MB benchmark corpora
   (``bench/scan.py`` seed 1, ``bench/scan_untuned.py``), on 616 (path, key,
   value) triples fed to the layer directly, and on 1,001 edge lines scanned
   end to end.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import types
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from teamsync.security import _generic as shipped  # noqa: E402
from teamsync.security.rules import looks_like_placeholder  # noqa: E402

Items = Sequence[tuple[str, str, str]]
Flagged = list[tuple[int, str, str]]


def _real(name: str) -> types.ModuleType:
    if isinstance(sys.modules.get(name), _Deferred):
        del sys.modules[name]
    return importlib.import_module(name)


class _Later:
    """An attribute read at import time (an annotation): resolved only if it is used."""

    def __init__(self, module: str, name: str) -> None:
        self._where = (module, name)

    def _resolve(self) -> Any:
        return getattr(_real(self._where[0]), self._where[1])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)


class _Deferred(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if sys._getframe(1).f_code.co_name == "<module>":  # a module body: import time
            return _Later(self.__name__, name)
        return getattr(_real(self.__name__), name)


@contextlib.contextmanager
def _deferred() -> Iterator[None]:
    """The shipped ``_requests_deferred``, with this lazier stand-in."""
    original, shipped._OnFirstUse = shipped._OnFirstUse, _Deferred  # type: ignore[misc]
    try:
        with shipped._requests_deferred():
            yield
    finally:
        shipped._OnFirstUse = original  # type: ignore[misc]


def detect_scan_line(items: Items) -> Flagged:
    """The shipped layer's selection logic around the documented ``scan_line``."""
    from teamsync.security.secrets import fingerprint

    with _deferred():
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import transient_settings

        results: dict[int, tuple[str, str]] = {}
        with transient_settings(shipped._CONFIG):
            for index, (_, key, value) in enumerate(items):
                line = f'{shipped._NON_WORD.sub("_", key)} = "{shipped._word_first(value)}"'
                for potential in scan_line(line):
                    if not potential.secret_value or looks_like_placeholder(value):
                        continue
                    rule_id = shipped._rule_for(str(potential.type))
                    preferred = "generic-high-entropy" if key == "api_key" else "generic-secret"
                    if index not in results or rule_id == preferred:
                        results[index] = (rule_id, fingerprint(rule_id, value))
    return [(i, rule, fp) for i, (rule, fp) in sorted(results.items())]


_PROBE = """
import sys, time
sys.path.insert(0, {bench!r})
items = [("notes/m0.py", "password", "Zq8r" + "T2vLm9Xw")]
import teamsync.security.secrets  # teamsync's own modules are loaded before the clock starts
if sys.argv[1] == "shipped":
    from teamsync.security._generic import detect
else:
    from generic_api import detect_scan_line as detect
start = time.process_time()
flagged = detect(items)
cpu = time.process_time() - start
loaded = len([m for m in sys.modules if m.startswith("detect_secrets")])
print(cpu, len(flagged), loaded, "requests" in sys.modules)
"""


def first_call(runs: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = _PROBE.format(bench=str(ROOT / "bench"))
    samples: dict[str, list[list[str]]] = {"shipped": [], "scan_line": []}
    for _ in range(runs):
        for mode, out in samples.items():
            proc = subprocess.run([sys.executable, "-c", code, mode], env=env,
                                  capture_output=True, text=True, check=True)  # fmt: skip
            out.append(proc.stdout.split())
    print(f"first detect() on one candidate, fresh process, median of {runs}:")
    for mode, out in samples.items():
        cpu = statistics.median(float(s[0]) for s in out) * 1000
        _, flagged, loaded, requests = out[-1]
        print(f"  {mode:9} {cpu:6.1f} ms CPU, {flagged} flagged, {loaded} detect_secrets "
              f"modules, requests imported: {requests}")  # fmt: skip


_STAGED = """
import sys
sys.path.insert(0, {bench!r})
from teamsync.cli import main
if sys.argv[1] == "scan_line":
    from teamsync.security import _generic
    from generic_api import detect_scan_line
    _generic.detect = detect_scan_line
sys.exit(main(["scan", "--staged"]))
"""


def staged(runs: int) -> None:
    """``teamsync scan --staged`` on a 10-file commit with one candidate, both ways."""
    import resource

    from startup import _compile, _environ, _staged_repo

    code = _STAGED.format(bench=str(ROOT / "bench"))
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(_environ("cached", Path(tmp) / "pycache"), PYTHONPATH=str(ROOT))
        _compile({"this": str(ROOT)}, env)  # byte-compiled first, as bench/startup.py does
        repo = _staged_repo(Path(tmp), candidate=True)
        for mode in ("shipped", "scan_line"):  # warm the cache
            subprocess.run([sys.executable, "-c", code, mode], cwd=repo, env=env,
                           capture_output=True, check=False)  # fmt: skip
        samples: dict[str, list[float]] = {"shipped": [], "scan_line": []}
        for _ in range(runs):
            for mode, out in samples.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                proc = subprocess.run([sys.executable, "-c", code, mode], cwd=repo, env=env,
                                      capture_output=True, text=True)  # fmt: skip
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                assert proc.returncode == 1 and "generic-secret" in proc.stdout, proc.stderr
                out.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    print(f"scan --staged, 10 files, one candidate (process and git), median of {runs}:")
    for mode, out in samples.items():
        print(f"  {mode:9} {statistics.median(out) * 1000:6.1f} ms CPU")


def _compare(label: str, items: Items) -> None:
    a, b = set(shipped.detect(items)), set(detect_scan_line(items))
    rules_a, rules_b = {i: r for i, r, _ in a}, {i: r for i, r, _ in b}
    extra = rules_b.keys() - rules_a.keys()
    missed = rules_a.keys() - rules_b.keys()
    changed = [i for i in rules_a.keys() & rules_b.keys() if rules_a[i] != rules_b[i]]
    print(f"  {label}: {len(items)} candidates; shipped flags {len(a)}, scan_line {len(b)}; "
          f"only scan_line {len(extra)}, only shipped {len(missed)}, rule changed {len(changed)}")  # fmt: skip
    if extra or changed:
        ext = [_ext(path) for path, _, _ in items]
        print(f"    by file type, extra {dict(Counter(ext[i] for i in extra))}, "
              f"changed {dict(Counter(ext[i] for i in changed))}")  # fmt: skip


def _corpus_items(root: Path) -> Items:
    from teamsync.security.secrets import Scanner

    scanner = Scanner()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        scanner.add(path.read_text(encoding="utf-8", errors="replace"), str(path.relative_to(root)))
    return [(c.path, c.key, c.value) for c in scanner.take()[1]]


EXTS = [".go", ".c", ".cpp", ".cs", ".m", ".yaml", ".ini", ".toml", ".py", ".js", ".md", ".txt",
        ".env", ""]  # fmt: skip
VALUES = ["Zq8rT2vLm9Xw", "hunter2!x9", 'ab"cdEf93kq', "s3cr3t-P@ss", "get_secret(key)",
          "a=b(c)", "Kx9!mQ2#vL7$", "tR4.nQ8.zW2", "correcthorsebattery", "1234abcd5678",
          "Zq8rT2vLm9XwZq8rT2vLm9XwZq8r+/=="]  # fmt: skip
FORMS = ['password = "{v}"', "password: {v}", "api_key={v}", '"token": "{v}"', 'db_secret := "{v}"',
         "export AWS_SECRET_ACCESS_KEY={v}", "Passwort: {v}"]  # fmt: skip


def _ext(path: str) -> str:
    return os.path.splitext(path)[1] or "(none)"


def findings() -> None:
    import scan as tuned
    import scan_untuned as untuned

    print("findings, shipped layer against scan_line:")
    with tempfile.TemporaryDirectory() as tmp:
        for label, make in (("tuned 10 MB corpus", lambda r: tuned.generate(r, 10**7, seed=1)),
                            ("untuned 10 MB corpus", lambda r: untuned.generate(r, 10**7))):  # fmt: skip
            root = Path(tmp) / label.split()[0]
            make(root)
            _compare(label, _corpus_items(root))
    triples = [(f"d/f{e}", k, v) for e in EXTS for k in ("password", "api_key", "secret", "token")
               for v in VALUES]  # fmt: skip
    _compare("triples fed directly", triples)
    from teamsync.security.secrets import Scanner

    texts = {f"d/f{n}{e}": "".join(f.format(v=v) + "\n" for v in VALUES)
             for e in EXTS[:4] + EXTS[5:] for n, f in enumerate(FORMS)}  # fmt: skip
    ends = []
    for detect in (shipped.detect, detect_scan_line):
        scanner = Scanner()
        original, shipped.detect = shipped.detect, detect
        try:
            for path, text in texts.items():
                scanner.add(text, path)
            ends.append({(f.path, f.line, f.rule, f.fingerprint) for f in scanner.finish()})
        finally:
            shipped.detect = original
    lines = sum(t.count("\n") for t in texts.values())
    print(f"  edge lines end to end: {lines} lines; shipped {len(ends[0])} findings, scan_line "
          f"{len(ends[1])}; only scan_line {len(ends[1] - ends[0])}, only shipped "
          f"{len(ends[0] - ends[1])}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    first_call(args.runs)
    staged(args.runs)
    findings()
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

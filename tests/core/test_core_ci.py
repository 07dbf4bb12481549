"""The CI pieces run for real: the GitHub Action's shell steps and the GitLab template.

Each test installs teamsync from this checkout into a fresh virtualenv with the
very commands the action and the template run (no registry name involved), then
scans a real repository whose range adds a secret, under the shells the CI
services use (GitHub composite ``bash --noprofile --norc -eo pipefail``,
GitLab ``bash -eo pipefail``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.gitrepos import fake_token, git

ROOT = Path(__file__).resolve().parents[2]
ZERO = "0" * 40

pytestmark = pytest.mark.slow


def _repo_with_secret(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A clone whose ``feature`` branch adds a secret; (clone, main sha, clean sha, dirty sha)."""
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    git("clone", "-q", str(origin), str(work))
    (work / "README.md").write_text("hello\n", encoding="utf-8")
    git("add", ".", cwd=work)
    git("commit", "-qm", "first", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    main = git("rev-parse", "HEAD", cwd=work)
    git("checkout", "-qb", "feature", cwd=work)
    (work / "notes.md").write_text("nothing secret here\n", encoding="utf-8")
    git("add", ".", cwd=work)
    git("commit", "-qm", "clean", cwd=work)
    clean = git("rev-parse", "HEAD", cwd=work)
    (work / "config.md").write_text(f"token: {fake_token()}\n", encoding="utf-8")
    git("add", ".", cwd=work)
    git("commit", "-qm", "oops", cwd=work)
    (work / "config.md").unlink()  # removed again: still in the range that would merge
    git("commit", "-qam", "remove", cwd=work)
    dirty = git("rev-parse", "HEAD", cwd=work)
    return work, main, clean, dirty


def _expr(text: str, values: dict[str, str]) -> str:
    """Substitute ``${{ a || b }}`` with the first non-empty known value."""

    def one(match: re.Match[str]) -> str:
        for alt in match.group(1).split("||"):
            value = values.get(alt.strip(), "")
            if value:
                return value
        return ""

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", one, text)


def _run_step(step: dict[str, Any], values: dict[str, str], env: dict[str, str], cwd: Path,
              tmp_path: Path) -> subprocess.CompletedProcess[str]:  # fmt: skip
    script = tmp_path / "step.sh"
    script.write_text(_expr(step["run"], values), encoding="utf-8")
    step_env = {k: _expr(str(v), values) for k, v in (step.get("env") or {}).items()}
    assert step["shell"] == "bash"
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=240,
    )


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_github_action_steps_scan_the_range_upload_sarif_and_fail(tmp_path: Path) -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = {s["name"]: s for s in action["runs"]["steps"]}
    install = steps["Install teamsync from the action's checkout"]
    assert "github.action_path" in install["env"]["ACTION_PATH"]
    assert "pip install teamsync" not in (ROOT / "action.yml").read_text()
    upload = steps["Upload SARIF to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["if"].startswith("always()")  # uploads even when the scan found something

    work, main, clean, dirty = _repo_with_secret(tmp_path)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    gh_path, gh_out = tmp_path / "GITHUB_PATH", tmp_path / "GITHUB_OUTPUT"
    gh_path.write_text("")
    inputs = {f"inputs.{k}": str(v.get("default", "")) for k, v in action["inputs"].items()}
    values = {
        **inputs,
        "github.action_path": str(ROOT),
        "github.event.pull_request.base.sha": main,
        "github.event.pull_request.head.sha": dirty,
        "github.sha": dirty,
        "github.event.repository.default_branch": "main",
    }
    base_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_PATH": str(gh_path),
        "GITHUB_OUTPUT": str(gh_out),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    base_env.update({k: v for k, v in os.environ.items() if k.startswith(("PIP_", "GIT_"))})

    done = _run_step(install, values, base_env, work, tmp_path)
    assert done.returncode == 0, done.stderr
    venv_bin = gh_path.read_text().strip()
    assert Path(venv_bin, "teamsync").exists()
    listed = subprocess.run([f"{venv_bin}/python", "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "anthropic" not in listed.lower()  # the scan installs light
    env = {**base_env, "PATH": f"{venv_bin}:{base_env['PATH']}"}

    # A pull request whose range adds (and then removes) a secret.
    gh_out.write_text("")
    scanned = _run_step(steps["Scan for secrets"], values, env, work, tmp_path)
    assert scanned.returncode == 0, scanned.stderr
    assert _outputs(gh_out)["status"] == "1"
    assert "config.md:1: github-pat" in scanned.stdout  # findings in the log ...
    assert fake_token() not in scanned.stdout + scanned.stderr  # ... never the secret
    sarif = json.loads((work / "teamsync.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["github-pat"]
    fail = steps["Fail on findings"]
    assert "steps.scan.outputs.status != '0'" in fail["if"]
    failed = _run_step(fail, {**values, "steps.scan.outputs.status": "1"}, env, work, tmp_path)
    assert failed.returncode == 1
    assert "::error::teamsync found likely secrets" in failed.stdout

    # A clean range: status 0, an empty SARIF run.
    gh_out.write_text("")
    clean_values = {**values, "github.event.pull_request.head.sha": clean, "github.sha": clean}
    scanned = _run_step(steps["Scan for secrets"], clean_values, env, work, tmp_path)
    assert scanned.returncode == 0, scanned.stderr
    assert _outputs(gh_out)["status"] == "0"
    assert json.loads((work / "teamsync.sarif").read_text())["runs"][0]["results"] == []

    # A new branch pushed with before=000…: scanned from its merge base with main.
    gh_out.write_text("")
    push_values = {**values, "github.event.pull_request.base.sha": "",
                   "github.event.pull_request.head.sha": "", "github.event.before": ZERO}  # fmt: skip
    scanned = _run_step(steps["Scan for secrets"], push_values, env, work, tmp_path)
    assert scanned.returncode == 0, scanned.stderr
    assert _outputs(gh_out)["status"] == "1"

    # A bad range is an error of the step itself, not a "finding".
    gh_out.write_text("")
    bad = {**values, "inputs.range": "nosuchref..HEAD"}
    scanned = _run_step(steps["Scan for secrets"], bad, env, work, tmp_path)
    assert scanned.returncode >= 2
    assert "::error::teamsync scan failed" in scanned.stdout


def test_gitlab_template_passes_under_bash_eo_pipefail(tmp_path: Path) -> None:
    template = yaml.safe_load((ROOT / "ci/gitlab/teamsync-secrets.yml").read_text("utf-8"))
    job = template["teamsync-secrets"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    work, main, clean, dirty = _repo_with_secret(tmp_path)
    venv = tmp_path / "image"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)

    def run_job(sha: str, **ci: str) -> subprocess.CompletedProcess[str]:
        script = "\n".join([*job["before_script"], *job["script"]]) + "\n"
        env = {
            "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
            "HOME": os.environ["HOME"],
            **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "GIT_"))},
            **{k: str(v) for k, v in template["variables"].items()},
            "TEAMSYNC_PIP_SPEC": str(ROOT),
            "CI_COMMIT_SHA": sha,
            "CI_DEFAULT_BRANCH": "main",
            **ci,
        }
        return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=work, env=env,
                              capture_output=True, text=True, timeout=240)  # fmt: skip

    found = run_job(dirty, CI_MERGE_REQUEST_DIFF_BASE_SHA=main)
    assert found.returncode == 1, found.stderr
    log = found.stdout + found.stderr
    assert "config.md:1: github-pat" in log  # the one scan printed the findings
    assert fake_token() not in log
    report = json.loads((work / "teamsync-secrets.json").read_text())
    assert [f["rule"] for f in report["findings"]] == ["github-pat"]

    passed = run_job(clean, CI_COMMIT_BEFORE_SHA=main)
    assert passed.returncode == 0, passed.stderr
    assert json.loads((work / "teamsync-secrets.json").read_text())["findings"] == []

    unset = run_job(clean, TEAMSYNC_PIP_SPEC="")
    assert unset.returncode == 2
    assert "TEAMSYNC_PIP_SPEC is not set" in unset.stderr

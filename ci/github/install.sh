#!/usr/bin/env bash
# Install teamsync from the action's own checkout into a private virtualenv and
# put it on the job's PATH. Never installs from a registry by name.
set -euo pipefail
: "${ACTION_PATH:?ACTION_PATH (the action checkout) is not set}"
venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/teamsync-venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$ACTION_PATH"
echo "$venv/bin" >> "${GITHUB_PATH:?GITHUB_PATH is not set}"
"$venv/bin/teamsync" --version

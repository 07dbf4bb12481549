#!/usr/bin/env bash
# One `teamsync scan`: writes the SARIF report, prints the findings in the log
# and records the status in $GITHUB_OUTPUT (status=0 clean, 1 found). A usage
# or unexpected error (status 2 or more) fails this step at once.
set -euo pipefail
zero=0000000000000000000000000000000000000000
sarif="${TEAMSYNC_SARIF:-teamsync.sarif}"
opts=(--format sarif --output "$sarif" --exit-code 1)
if [ -n "${TEAMSYNC_BASELINE:-}" ]; then
  opts+=(--baseline "$TEAMSYNC_BASELINE")
fi
if [ -n "${TEAMSYNC_ARGS:-}" ]; then
  read -r -a extra <<<"$TEAMSYNC_ARGS"
  opts+=("${extra[@]}")
fi

target=()
if [ -n "${TEAMSYNC_PATHS:-}" ]; then
  read -r -a target <<<"$TEAMSYNC_PATHS"
else
  range="${TEAMSYNC_RANGE:-}"
  if [ -z "$range" ]; then
    head="${HEAD:-HEAD}"
    base="${BASE:-}"
    if [ -z "$base" ] || [ "$base" = "$zero" ]; then
      # A new branch is pushed with before=000…: scan from where it left the default branch.
      base=$(git merge-base "origin/${DEFAULT_BRANCH:-main}" "$head" 2>/dev/null || true)
    fi
    if [ -n "$base" ] && ! git cat-file -e "$base^{commit}" 2>/dev/null; then
      git fetch --no-tags --quiet origin "$base" 2>/dev/null || true
      if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
        echo "::error::base commit $base is not in the checkout; use actions/checkout with fetch-depth: 0"
        exit 2
      fi
    fi
    if [ -n "$base" ]; then
      range="$base..$head"
    fi
  fi
  if [ -n "$range" ]; then
    target=(--git-range "$range")
  else
    echo "No base commit to compare with (first push of a new repository): scanning the whole tree."
    target=(.)
  fi
fi

set +e
teamsync scan "${target[@]}" "${opts[@]}"
status=$?
set -e
echo "status=$status" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
if [ "$status" -gt 1 ]; then
  echo "::error::teamsync scan failed (exit status $status); see the message above"
  exit "$status"
fi

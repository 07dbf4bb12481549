#!/usr/bin/env bash
# Make sure the programs the test suite starts itself are on this machine.
# PostgreSQL: the tests run initdb/pg_ctl as the `postgres` user in a temporary
# directory (see testing/postgres.py); here we only install Debian's package when
# the binaries are missing. Nothing is started here.
set -euo pipefail

find_pg_bin() {
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

if ! find_pg_bin >/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-services: installing PostgreSQL from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq postgresql >/dev/null
  else
    echo "ensure-services: PostgreSQL is missing; install it (e.g. apt-get install postgresql) to run the PostgreSQL tests" >&2
    exit 1
  fi
fi
echo "ensure-services: PostgreSQL binaries in $(find_pg_bin)" >&2

#!/usr/bin/env bash
# Runs before `npm test`: finds or installs what the tests need on a fresh machine, so the README's
# test command works by itself. The browser tests drive Debian's chromium through playwright-core
# (never a downloaded browser); SPOOL_CHROMIUM names another binary instead.
set -euo pipefail
if [ -z "${SPOOL_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "pretest: installing Debian's chromium for the browser tests" >&2
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# The PostgreSQL tests start a throwaway cluster from Debian's server binaries unless SPOOL_TEST_PG
# names a server. Install them when missing (without Debian's default cluster: the tests make their own).
if [ -z "${SPOOL_TEST_PG:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "pretest: installing Debian's postgresql for the PostgreSQL store tests" >&2
  $sudo mkdir -p /etc/postgresql-common
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

#!/usr/bin/env bash
# Installs what Braid's tests and dev stack need when it is missing. Idempotent.
set -euo pipefail
if ! command -v redis-server >/dev/null 2>&1; then
  echo "redis-server not found; installing Debian package redis-server"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
fi
# The Debian package starts a system redis on 6379; Braid never uses it (tests
# and braid dev spawn their own on free ports), so leave it be.
redis-server --version
# The web UI's browser tests drive Debian's Chromium headless.
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "chromium not found; installing Debian package chromium"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
chromium --version 2>/dev/null || /usr/bin/chromium --version

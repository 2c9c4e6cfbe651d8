#!/usr/bin/env bash
# Installs what Braid's tests and dev stack need when it is missing: Debian's
# redis-server, and chromium for the web UI's browser tests. Idempotent: apt
# runs only when something is missing, and another apt or dpkg already at work
# (an install running in the background) is waited for, within APT_WAIT
# seconds, rather than failed on.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
APT_WAIT=${APT_WAIT:-600}

# have_chromium: Debian's chromium, on PATH or where the package puts it.
have_chromium() { command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; }

# missing_packages prints the Debian packages still to install, one a line.
missing_packages() {
  command -v redis-server >/dev/null 2>&1 || echo redis-server
  have_chromium || echo chromium
}

# lock_id is how /proc/locks names a file: major:minor (hex) and inode.
lock_id() {
  local maj min ino
  read -r maj min ino < <(stat -c '%Hd %Ld %i' "$1")
  printf '%02x:%02x:%s' "$maj" "$min" "$ino"
}

# apt_busy succeeds while some process holds one of apt's or dpkg's locks
# (fcntl locks, listed in /proc/locks).
apt_busy() {
  local f
  for f in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock; do
    if [ -e "$f" ] && grep -qw -- "$(lock_id "$f")" /proc/locks 2>/dev/null; then
      return 0
    fi
  done
  return 1
}

# wait_for_apt waits, up to APT_WAIT seconds, until no apt or dpkg is at work.
wait_for_apt() {
  local waited=0
  while apt_busy; do
    if [ "$waited" -ge "$APT_WAIT" ]; then
      echo "apt/dpkg still busy after ${APT_WAIT}s; giving up" >&2
      return 1
    fi
    [ "$waited" -gt 0 ] || echo "another apt/dpkg is at work; waiting for it (up to ${APT_WAIT}s)"
    sleep 2
    waited=$((waited + 2))
  done
}

# apt_install refreshes the package lists and installs the packages given.
# DPkg::Lock::Timeout covers an apt that starts after wait_for_apt returned.
apt_install() {
  echo "installing Debian packages: $*"
  $SUDO apt-get -o DPkg::Lock::Timeout="$APT_WAIT" update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout="$APT_WAIT" install -y -qq "$@" >/dev/null
}

missing=$(missing_packages)
if [ -n "$missing" ]; then
  wait_for_apt
  missing=$(missing_packages) # what was running may have installed them
  # shellcheck disable=SC2086 # one package a word
  [ -z "$missing" ] || apt_install $missing
fi

# The Debian package starts a system redis on 6379; Braid never uses it (tests
# and braid dev spawn their own on free ports), so leave it be.
redis-server --version
# The web UI's browser tests drive Debian's Chromium headless. Its launcher
# script may print a harmless shell warning on stderr (its /dev/shm check);
# the version goes to stdout.
chromium_bin=$(command -v chromium || echo /usr/bin/chromium)
"$chromium_bin" --version 2>/dev/null || "$chromium_bin" --version

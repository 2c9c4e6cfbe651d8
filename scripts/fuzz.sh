#!/usr/bin/env bash
# Runs every fuzz target in the workspace for a bounded time each.
#
# Go 1.26's fuzz coordinator can end a duration-bounded run with a bare
# "context deadline exceeded" failure when -fuzztime expires while a worker
# is mid-input (go.dev/issue/75804, fixed in Go 1.27): nothing was found, no
# failing input is written. Such a run is tried again, up to three times in
# all (two in a row were seen on a quiet machine); any other
# failure, or a failing input written, fails at once.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."

# deadline_only reports whether log ($1) shows only the coordinator's
# deadline race: the bare error, and no failing input, panic or test error.
deadline_only() {
  grep -q '^    context deadline exceeded$' "$1" &&
    ! grep -qE 'Failing input written|^panic:|_test\.go:[0-9]+:|fuzz: minimizing' "$1"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
  dir=$(dirname "$f")
  mod=$dir; while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
    for try in 1 2 3; do
      echo "==> fuzz $dir $target ($fuzztime)"
      if (cd "$mod" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./${dir#"$mod"/}") 2>&1 | tee "$log"; then
        break
      fi
      if [ "$try" = 3 ] || ! deadline_only "$log"; then
        exit 1
      fi
      echo "==> $target: the fuzz coordinator's deadline race (go.dev/issue/75804), nothing found; once more"
    done
  done
done

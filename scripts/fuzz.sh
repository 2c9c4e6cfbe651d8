#!/usr/bin/env bash
# Runs every fuzz target in the workspace for a bounded time each.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
  dir=$(dirname "$f")
  mod=$dir; while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
    echo "==> fuzz $dir $target ($fuzztime)"
    (cd "$mod" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./${dir#"$mod"/}")
  done
done

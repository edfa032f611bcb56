#!/usr/bin/env bash
# Runs every libFuzzer harness for a few seconds over its seed corpus; fails on the first crash, leak or hang.
# Usage: tests/fuzz/run.sh BUILD_DIR [SECONDS_EACH]   (BUILD_DIR from `scripts/setup.sh fuzz`)
# Extra libFuzzer flags go in FUZZ_FLAGS, e.g. FUZZ_FLAGS=-runs=1000000 for the long run the README records;
# FUZZ_ONLY="svg scene" runs only those harnesses.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$1"
seconds="${2:-3}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
artifacts="${FUZZ_ARTIFACTS:-$build_dir/fuzz-artifacts}"
mkdir -p "$artifacts"
status=0
for corpus in "$here"/corpus/*/; do
  harness="$(basename "$corpus")"
  if [ -n "${FUZZ_ONLY:-}" ] && [[ " $FUZZ_ONLY " != *" $harness "* ]]; then continue; fi
  # New inputs go to a scratch folder (listed first), so the checked-in seeds stay as they are.
  mkdir -p "$scratch/$harness"
  # Limits: 2 GB of memory and a single 1 GB allocation are far beyond any sane input's needs. 60 s per input
  # catches hangs while letting the largest legal inputs through: a 65,536-device mesh drawn as SVG takes a
  # few seconds in the release build and 20 times that here (ASan, libxml2 reading 15 MB back), more under load.
  if ! "$build_dir/fuzz_$harness" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=60 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$harness-" ${FUZZ_FLAGS:-} "$scratch/$harness" "$corpus" \
      >"$scratch/$harness.log" 2>&1; then
    echo "fuzz_$harness: FAILED (input saved under $artifacts)" >&2
    tail -n 40 "$scratch/$harness.log" >&2
    status=1
    continue
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$harness.log")"
  took="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$scratch/$harness.log")"
  echo "fuzz_$harness: ${runs:-?} executions in ${took:-?} s, no crash"
done
exit "$status"

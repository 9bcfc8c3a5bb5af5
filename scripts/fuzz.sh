#!/usr/bin/env bash
# Fuzzes attn-mlir: builds the libFuzzer targets of fuzz/ with ASan, UBSan
# and coverage of every project library (ATTN_SANITIZE, in build-sanitize/,
# the build that also runs the sanitized test suite), then runs all targets
# at once for MINUTES minutes each (default 5), in fork mode so that a run
# goes on past a crash, a timeout or an out-of-memory. Each target fuzzes a
# copy of its committed corpus (build-sanitize/fuzz/work/TARGET); what it
# finds goes to build-sanitize/fuzz/crashes/TARGET. Prints a table: target,
# executions, new corpus entries, crashes (crash-, timeout-, oom- and leak-
# files). docs/Testing.md, "Fuzzing", says what to do with a finding.
#
#   bash scripts/fuzz.sh [MINUTES]
set -euo pipefail

MINUTES="${1:-5}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGETS=(attn-fuzz-ir attn-fuzz-manifest attn-fuzz-npy)
export ATTN_BUILD="${ATTN_BUILD:-$ROOT/build-sanitize}" ATTN_SANITIZE=ON
ATTN_TARGETS="${TARGETS[*]}" bash "$ROOT/scripts/setup.sh"

# CMakeLists.txt, ATTN_SANITIZER_ENV, says why.
export ASAN_OPTIONS="allow_user_poisoning=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
OUT="$ATTN_BUILD/fuzz"
for t in "${TARGETS[@]}"; do
  name="${t#attn-fuzz-}"
  rm -rf "$OUT/work/$t" "$OUT/crashes/$t"
  mkdir -p "$OUT/work/$t" "$OUT/crashes/$t"
  cp "$ROOT/fuzz/corpus/$name/"* "$OUT/work/$t/"
  dict=()
  [ -f "$ROOT/fuzz/$name.dict" ] && dict=("-dict=$ROOT/fuzz/$name.dict")
  # A compile under ASan takes up to seconds; 60 s is a hang.
  "$ATTN_BUILD/bin/$t" "$OUT/work/$t" "${dict[@]}" -fork=1 \
    -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=60 \
    -rss_limit_mb=4096 -max_total_time=$((MINUTES * 60)) \
    -artifact_prefix="$OUT/crashes/$t/" >"$OUT/$t.log" 2>&1 &
done
wait

printf '%-20s %12s %12s %8s\n' target executions new-entries crashes
for t in "${TARGETS[@]}"; do
  name="${t#attn-fuzz-}"
  execs=$(grep -o '^#[0-9]*' "$OUT/$t.log" | tail -1 | tr -d '#')
  seeds=$(find "$ROOT/fuzz/corpus/$name" -type f | wc -l)
  found=$(find "$OUT/work/$t" -type f | wc -l)
  crashes=$(find "$OUT/crashes/$t" -type f \( -name 'crash-*' -o \
    -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  printf '%-20s %12s %12s %8s\n' "$t" "${execs:-0}" $((found - seeds)) "$crashes"
done
echo "logs: $OUT/TARGET.log; findings: $OUT/crashes/TARGET"

#!/usr/bin/env bash
# Runs the runtime's unit tests that bench/prepare_gpu_run.sh built and put in
# .carry/bin (the runner-only build with ATTN_RUNNER_ONLY_TESTS), on a GPU
# machine: there the GPU tests (a kernel reading an encoded tensor map, the
# prologue kernel's workspace, opening the device) must run, so a skipped
# test fails this script as a failed one does.
#   bash bench/gpu_unittests.sh [BIN_DIR]    (default: .carry/bin)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/.carry/bin}"
# The explain test reads its golden file from this checkout.
export ATTN_SOURCE_DIR="$ROOT"
status=0
for t in AttnRuntimeTests AttnCudaRuntimeTests; do
  if [ ! -x "$BIN/$t" ]; then
    echo "gpu_unittests: no $BIN/$t (run bench/prepare_gpu_run.sh on the compiler machine)"
    exit 1
  fi
  out="$("$BIN/$t" 2>&1)"
  rc=$?
  echo "$out"
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:.*/\1/p' <<<"$out")
  skipped=${skipped:-0}
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' <<<"$out")
  echo "gpu_unittests: $t: ${passed:-0} passed, $skipped skipped, exit $rc"
  if ((rc != 0 || skipped != 0)); then
    status=1
  fi
done
exit "$status"

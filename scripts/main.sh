#!/usr/bin/env bash
# The main job: builds attn-mlir (installing what is missing), then compiles
# every example under examples/ as far as the pipeline goes today and shows
# the result.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
BIN="$ATTN_BUILD/bin"
for f in "$ATTN_ROOT"/examples/*.mlir; do
  echo "=== $(basename "$f"): parse and verify"
  "$BIN/attn-opt" "$f"
done

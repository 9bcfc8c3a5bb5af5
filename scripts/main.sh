#!/usr/bin/env bash
# The main job: builds attn-mlir (installing what is missing), then takes
# every example under examples/ through the whole compiler:
#   1. the block-level IR after --attn-tile --attn-online-softmax (summary),
#   2. a run on the host through --attn-to-llvm-cpu with --check against the
#      float64 reference (inputs from the example's `attn-run-inputs:` line),
#   3. PTX + launch manifest for sm_90a through attn-translate, and the
#      registers/spills ptxas reports (when ptxas is installed),
#   4. a run on the GPU with --check when one is present.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
BIN="$ATTN_BUILD/bin"
OUT="$ATTN_BUILD/examples"
mkdir -p "$OUT"
PTXAS="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
for f in "$ATTN_ROOT"/examples/*.mlir; do
  name="$(basename "$f" .mlir)"
  inputs="$(sed -n 's|^// attn-run-inputs: ||p' "$f")"
  echo "=== $name"
  echo "--- block-level IR (--attn-tile --attn-online-softmax): ops per kind"
  "$BIN/attn-opt" "$f" --attn-tile --attn-online-softmax --verify-each \
    | grep -oE '(scf|linalg|memref|math)\.[a-z_0-9]+' | sort | uniq -c | sort -rn | head -12
  echo "--- host run: attn-run --target=cpu $inputs --check"
  # shellcheck disable=SC2086
  "$BIN/attn-run" "$f" --target=cpu $inputs --check
  echo "--- GPU kernel: attn-translate --attn-to-ptx --chip=sm_90a"
  "$BIN/attn-translate" --attn-to-ptx "$f" -o "$OUT/$name.ptx"
  echo "wrote $OUT/$name.ptx and $OUT/$name.json"
  grep -E '"(kernel|config|block|grid|shared_memory_bytes)"' "$OUT/$name.json"
  if [ -x "$PTXAS" ]; then
    "$PTXAS" -arch=sm_90a -v "$OUT/$name.ptx" -o "$OUT/$name.cubin" 2>&1 \
      | grep -E 'registers|stack frame' | sed 's/^ */ptxas: /'
  fi
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    echo "--- GPU run: attn-run --target=cuda --check"
    # shellcheck disable=SC2086
    "$BIN/attn-run" "$f" --target=cuda $inputs --check
  fi
done

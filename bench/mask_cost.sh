#!/usr/bin/env bash
# Where the masked seed kernel's time goes: the seed kernel (fp32, mask
# tensor, T=512) on its causal mask and on an all-zero mask (every block
# live), against the `causal` kernel at the mask kernel's 64x16 config and
# at its own default. Two steps:
#   bash bench/mask_cost.sh prepare   # here (MLIR): fills .carry/masks
#   bash bench/mask_cost.sh run       # on the GPU, carrying .carry
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
M="$ROOT/.carry/masks"
case "${1:-}" in
prepare)
  T="${ATTN_BUILD:-$ROOT/build}/bin/attn-translate"
  mkdir -p "$M"
  cat > "$M/seed.mlir" <<'MLIR'
func.func @seed_causal(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}
func.func @seed_mask(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}
MLIR
  "$T" --attn-to-ptx "$M/seed.mlir" -e seed_causal -o "$M/causal32.ptx"
  "$T" --attn-to-ptx "$M/seed.mlir" -e seed_causal --block-n=16 --num-stages=1 -o "$M/causal16.ptx"
  "$T" --attn-to-ptx "$M/seed.mlir" -e seed_mask -o "$M/mask16.ptx"
  # The masks as .npy without numpy: a float32 (1, 1, T, T) array.
  python3 - "$M" <<'PY'
import array, struct, sys
T = 512
def save(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, %d, %d), }" % (T, T)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        array.array("f", values).tofile(f)
save(sys.argv[1] + "/zeros.npy", [0.0] * (T * T))
save(sys.argv[1] + "/causal.npy",
     [float("-inf") if j > i else 0.0 for i in range(T) for j in range(T)])
PY
  ;;
run)
  R="$ROOT/.carry/bin/attn-run"
  I="--input=32x96x512x128xf32 --input=32x96x512x128xf32 --input=32x96x512x128xf32"
  for i in 1 2; do
    echo "causal flag, default config: $($R "$M/causal32.json" $I --bench --iters=30 | tail -1)"
    echo "causal flag, 64x16 1 stage:  $($R "$M/causal16.json" $I --bench --iters=30 | tail -1)"
    echo "mask, causal mask:           $($R "$M/mask16.json" $I --input=@"$M/causal.npy" --bench --iters=30 | tail -1)"
    echo "mask, all-zero mask:         $($R "$M/mask16.json" $I --input=@"$M/zeros.npy" --bench --iters=30 | tail -1)"
  done
  ;;
*)
  echo "usage: bash bench/mask_cost.sh prepare|run" >&2
  exit 2
  ;;
esac

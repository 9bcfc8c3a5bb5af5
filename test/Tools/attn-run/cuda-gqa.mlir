// REQUIRES: cuda-gpu
// attn-run --target=cuda on a small grouped-query, causal bf16 problem:
// compiled for the device's own chip, checked against the float64
// reference, timed; and the same through an emitted PTX + manifest.

func.func @gqa(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// Tq = 200 leaves a partial query block; B*Hq*Tq = 3200 rows, all checked.
// RUN: attn-run %s -e gqa --target=cuda --input=2x8x200x64xbf16 --input=2x2x200x64xbf16 \
// RUN:   --input=2x2x200x64xbf16 --check --bench --iters=5 \
// RUN:   | FileCheck %s --check-prefix=OUT --match-full-lines
// OUT: attn-run: gqa on cuda: q=2x8x200x64xbf16 k=2x2x200x64xbf16 v=2x2x200x64xbf16 -> o=2x8x200x64xbf16
// OUT-NEXT: bench: median_ms={{[0-9.e+-]+}} tflops={{[0-9.e+-]+}} floor_ms={{[0-9.e+-]+}}
// OUT-NEXT: check: PASS rel_l2={{[0-9.e+-]+}} max_abs={{[0-9.e+-]+}}
// OUT-NOT: {{.}}

// --json names the device and its peak rate.
// RUN: attn-run %s -e gqa --target=cuda --input=1x8x64x64xbf16 --input=1x2x64x64xbf16 \
// RUN:   --input=1x2x64x64xbf16 --check --bench --iters=2 --json | FileCheck %s --check-prefix=JSON
// JSON: {"bench":{{{.*}}"device":"{{[^"]+}}"{{.*}}"check":{{{.*}}"status":"PASS"},{{.*}}"target":"cuda"}

// The same kernel through its PTX + manifest gives the same result (sm_80
// code, which every device since the A100 runs).
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s -e gqa --target=cuda --chip=sm_80 --emit-kernel=%t > /dev/null
// RUN: attn-run %t/gqa.json --input=2x8x200x64xbf16 --input=2x2x200x64xbf16 \
// RUN:   --input=2x2x200x64xbf16 --seed=3 --check --output=@%t/manifest.npy \
// RUN:   | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: check: PASS
// RUN: attn-run %s -e gqa --target=cuda --chip=sm_80 --input=2x8x200x64xbf16 \
// RUN:   --input=2x2x200x64xbf16 --input=2x2x200x64xbf16 --seed=3 --output=@%t/mlir.npy
// RUN: cmp %t/manifest.npy %t/mlir.npy

// Self-attention: one argument feeds q, k and v (uploaded once).
func.func @self(%x: tensor<1x4x96x64xf16>) -> tensor<1x4x96x64xf16> {
  %o = attn.attention %x, %x, %x {causal = #attn.causal<bottom_right>} : tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16>, tensor<1x4x96x64xf16> -> tensor<1x4x96x64xf16>
  return %o : tensor<1x4x96x64xf16>
}
// RUN: attn-run %s -e self --target=cuda --input=random --check | FileCheck %s --check-prefix=SELF
// SELF: attn-run: self on cuda: q/k/v=1x4x96x64xf16 -> o=1x4x96x64xf16
// SELF: check: PASS

// attn-run --target=cuda --tensor-copies=auto (the default) compiles Q's,
// K's and V's tiles of this tf32 kernel to TMA tensor copies:
// --emit-kernel writes, without a GPU, the PTX with its cp.async.bulk.tensor
// and a version 3 manifest whose last parameters are Q's, K's and V's
// tensor maps (Q's: one 128-byte atom wide in the 128-byte swizzle, as K's;
// V's: padded rows, no swizzle); the runner-only
// attn-run then runs it on a GPU (bench/results/2026-12-02-h200-tensor-
// copies.log, ...-tf32-v-tensor-copies.log, ...-q-tensor-copy-and-
// setmaxnreg.log). Tensor copies are a GPU lowering: on the
// cpu target, and for a manifest (compiled already), the option is an error.

func.func @seed(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32> -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --target=cuda --tensor-copies=auto --emit-kernel=%t/k \
// RUN:   | FileCheck %s --check-prefix=WROTE --match-full-lines
// WROTE: attn-run: wrote {{.*}}k/seed.ptx and {{.*}}k/seed.json for sm_90a
// RUN: FileCheck %s --check-prefix=PTX < %t/k/seed.ptx
// PTX-COUNT-4: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k/seed.json
// MANIFEST:      "version": 3,
// MANIFEST:      "kind": "tensor_map",
// MANIFEST-NEXT: "operand": "query",
// MANIFEST-NEXT: "box": [1, 1, 64, 32],
// MANIFEST-NEXT: "swizzle": 128
// MANIFEST:      "kind": "tensor_map",
// MANIFEST-NEXT: "operand": "key",
// MANIFEST-NEXT: "box": [1, 1, 32, 32],
// MANIFEST-NEXT: "swizzle": 128
// MANIFEST:      "kind": "tensor_map",
// MANIFEST-NEXT: "operand": "value",
// MANIFEST-NEXT: "box": [1, 1, 32, 132],
// MANIFEST-NEXT: "swizzle": 0

// RUN: not attn-run %s --target=cpu --tensor-copies=auto --input=1x4x8x128xf32 --input=1x4x8x128xf32 --input=1x4x8x128xf32 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU --match-full-lines
// CPU: attn-run: error: '--tensor-copies=auto' is an option of the GPU lowering (--convert-attn-to-nvvm): it needs --target=cuda
// RUN: not attn-run %t/k/seed.json --target=cuda --tensor-copies=auto --input=1x4x8x128xf32 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMPILED
// COMPILED: attn-run: error: {{.*}} and the options of --convert-attn-to-nvvm do not apply to a launch manifest (it is compiled already)

// attn-run --target=cuda --wgmma-tf32-pv (opt-in) compiles the tf32 P V of
// sm_90a scores-ahead kernels of one warpgroup on wgmma as O^T = V^T P^T
// (docs/Wgmma.md); by default it stays on mma.sync. --emit-kernel writes
// the PTX without a GPU. The option is a GPU lowering: on the cpu target it
// is an error. cuda-wgmma-tf32-pv-run.mlir runs the kernels on a GPU.

func.func @seed(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32> -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --target=cuda --wgmma-tf32-pv --emit-kernel=%t/on | FileCheck %s --check-prefix=WROTE
// RUN: attn-run %s --target=cuda --emit-kernel=%t/off | FileCheck %s --check-prefix=WROTE
// WROTE: attn-run: wrote {{.*}}/seed.ptx and {{.*}}/seed.json for sm_90a
// RUN: FileCheck %s --check-prefix=ON < %t/on/seed.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t/off/seed.ptx
// ON:      wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// ON-NOT:  mma.sync.aligned.m16n8k8
// OFF:     mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// OFF-NOT: m64n64k8

// RUN: not attn-run %s --target=cpu --wgmma-tf32-pv --input=1x4x8x128xf32 --input=1x4x8x128xf32 --input=1x4x8x128xf32 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU --match-full-lines
// CPU: attn-run: --wgmma-tf32-pv is a GPU lowering: it needs --target=cuda

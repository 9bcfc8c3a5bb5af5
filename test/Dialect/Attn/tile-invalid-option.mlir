// RUN: not attn-opt %s --attn-tile="block-m=-4" 2>&1 | FileCheck %s
// A config the target cannot run is an error of the pass, at the op, and
// the op is left as it was (no half-tiled output).
// RUN: not attn-opt %s --split-input-file --attn-tile="target=sm_90a block-m=48" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attn-opt %s --split-input-file --attn-tile="target=sm_70" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --split-input-file --attn-tile="target=gpu" 2>&1 | FileCheck %s --check-prefix=NAME

// CHECK: error: attn-tile options must be >= 0
func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  return %q : tensor<1x1x4x8xf32>
}

// -----

// ROWS: error: the kernel config: expects block_m to be a multiple of 16 * num_warps on sm_90a (each warp owns whole 16-row tiles), got block_m = 48, num_warps = 4
// CHIP: error: the kernel config: expects a CUDA chip of sm_80 or newer (the kernels use mma.sync on 16-bit floats and cp.async), got 'sm_70'
// NAME: error: the kernel config: expects target 'cpu' or a CUDA chip sm_XY with an optional 'a' or 'f' suffix (such as sm_90a), got 'gpu'
func.func @g(%q: tensor<1x2x32x64xf16>) -> tensor<1x2x32x64xf16> {
  %o = attn.attention %q, %q, %q : tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16>, tensor<1x2x32x64xf16> -> tensor<1x2x32x64xf16>
  return %o : tensor<1x2x32x64xf16>
}

// -----

// Any head dim compiles for a GPU; rows that are not whole 16-byte vectors
// (Dv = 22 of f32: 88 bytes) take one stage, whose copies are synchronous,
// and a config asking for more is an error.
// RUN: not attn-opt %s --split-input-file --attn-tile="target=sm_90a num-stages=2" 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: attn-opt %s --split-input-file --attn-tile="target=sm_90a" | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --split-input-file --attn-tile="target=cpu" | FileCheck %s --check-prefix=CPU
// DIM: error: the kernel config: expects num_stages = 1 where a head dim's rows are not whole 16-byte vectors (D = 64, Dv = 22 of 'f32'), got 2
// GPU: func.func @dv22
// GPU: attn.block_attention {{.*}}num_stages = 1
// CPU: func.func @dv22
// CPU-NOT: attn.attention
func.func @dv22(%q: tensor<1x2x32x64xf32>, %v: tensor<1x2x32x22xf32>) -> tensor<1x2x32x22xf32> {
  %o = attn.attention %q, %q, %v : tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x22xf32> -> tensor<1x2x32x22xf32>
  return %o : tensor<1x2x32x22xf32>
}


// Every integer option of the tiling and pipelining passes is bounded by the
// limits of #attn.config (kMaxBlockSize, kMaxNumWarps, kMaxNumStages), so that
// no option value makes a pass build unbounded IR.

// RUN: not attn-opt %s --attn-tile --attn-online-softmax --attn-pipeline=num-stages=2147483648 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not attn-opt %s --attn-tile --attn-online-softmax --attn-pipeline=num-stages=17 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attn-opt %s --attn-pipeline=num-stages=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: attn-opt %s --attn-tile --attn-online-softmax --attn-pipeline=num-stages=16 | FileCheck %s --check-prefix=MAX
// HUGE: error: --attn-pipeline: num-stages must be 0 to 16 (the #attn.config bound), got 2147483648
// STAGES: error: --attn-pipeline: num-stages must be 0 to 16 (the #attn.config bound), got 17
// NEG: error: --attn-pipeline: num-stages must be 0 to 16 (the #attn.config bound), got -1
// MAX: attn.pipelined = 16

// RUN: not attn-opt %s --attn-tile=block-m=4097 2>&1 | FileCheck %s --check-prefix=TILE-M
// RUN: not attn-opt %s --attn-tile=block-n=2147483648 2>&1 | FileCheck %s --check-prefix=TILE-N
// RUN: not attn-opt %s --attn-tile=num-warps=33 2>&1 | FileCheck %s --check-prefix=TILE-WARPS
// RUN: not attn-opt %s --attn-tile=num-stages=2147483648 2>&1 | FileCheck %s --check-prefix=TILE-STAGES
// TILE-M: error: the kernel config: expects block_m and block_n <= 4096, got 4097 and 32
// TILE-N: error: the kernel config: expects block_m and block_n <= 4096, got 32 and 2147483648
// TILE-WARPS: error: the kernel config: expects num_warps <= 32 and num_stages <= 16, got 33 and 1
// TILE-STAGES: error: the kernel config: expects num_warps <= 32 and num_stages <= 16, got 1 and 2147483648

// The named pipelines pass their options to --attn-tile.
// RUN: not attn-opt %s --attn-to-llvm-cpu=num-stages=2147483648 2>&1 | FileCheck %s --check-prefix=TILE-STAGES
// RUN: not attn-opt %s --attn-to-gpu-kernels="num-warps=2147483648 block-m=64" 2>&1 | FileCheck %s --check-prefix=GPU-WARPS
// GPU-WARPS: error: the kernel config: expects num_warps <= 32 and num_stages <= 16, got 2147483648 and 2

func.func @f(%q: tensor<1x2x5x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>) -> tensor<1x2x5x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x5x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// Inputs are given in the function's argument order, whatever the order of
// the attention operands; one argument may feed several operands.

// RUN: attn-run %s -e swapped --input=1x4x6x16xf32 --input=1x4x5x8xf32 --input=1x4x6x8xf32 --check \
// RUN:   | FileCheck %s --check-prefix=SWAPPED --match-full-lines
// SWAPPED: attn-run: swapped on cpu: v=1x4x6x16xf32 q=1x4x5x8xf32 k=1x4x6x8xf32 -> o=1x4x5x16xf32
// SWAPPED-NEXT: check: PASS {{.*}}
func.func @swapped(%v: tensor<1x4x6x16xf32>, %q: tensor<1x4x5x8xf32>, %k: tensor<1x4x6x8xf32>) -> tensor<1x4x5x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x4x5x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x16xf32> -> tensor<1x4x5x16xf32>
  return %o : tensor<1x4x5x16xf32>
}

// RUN: attn-run %s -e mask_first --input=1x1x5x6xf32 --input=random --input=random --input=random --check \
// RUN:   | FileCheck %s --check-prefix=MASK-FIRST --match-full-lines
// MASK-FIRST: attn-run: mask_first on cpu: mask=1x1x5x6xf32 q=2x3x5x8xf32 k=2x3x6x8xf32 v=2x3x6x8xf32 -> o=2x3x5x8xf32
// MASK-FIRST-NEXT: check: PASS {{.*}}
func.func @mask_first(%m: tensor<1x1x?x?xf32>, %q: tensor<2x3x5x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>) -> tensor<2x3x5x8xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<1x1x?x?xf32> -> tensor<2x3x5x8xf32>
  return %o : tensor<2x3x5x8xf32>
}

// RUN: attn-run %s -e self --input=random --check | FileCheck %s --check-prefix=SELF --match-full-lines
// SELF: attn-run: self on cpu: q/k/v=1x2x9x8xf32 -> o=1x2x9x8xf32
// SELF-NEXT: check: PASS {{.*}}
func.func @self(%x: tensor<1x2x9x8xf32>) -> tensor<1x2x9x8xf32> {
  %o = attn.attention %x, %x, %x {causal = #attn.causal<top_left>} : tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32> -> tensor<1x2x9x8xf32>
  return %o : tensor<1x2x9x8xf32>
}

// RUN: not attn-run %s -e self --input=random --input=random 2>&1 | FileCheck %s --check-prefix=SELF-COUNT
// SELF-COUNT: attn-run: error: function 'self' takes 1 input (q/k/v: tensor<1x2x9x8xf32>), got 2 --input values

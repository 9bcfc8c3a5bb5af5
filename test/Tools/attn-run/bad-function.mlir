// Functions attn-run refuses: one error line on stderr, exit code 1.

// RUN: not attn-run %s --input=random 2>&1 | FileCheck %s --check-prefix=SEVERAL
// SEVERAL: attn-run: error: several functions; choose one with -e: matmul, none, two, unused, constk, tworesults, decl, attn{{$}}

// RUN: not attn-run %s -e nope --input=random 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: no function 'nope' in the module (functions: matmul, none, two, unused, constk, tworesults, decl, attn)

// RUN: not attn-run %s -e matmul --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MATMUL
// MATMUL: attn-run: error: function 'matmul' contains unsupported op 'linalg.matmul'; attn-run executes functions made of one attn.attention
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// RUN: not attn-run %s -e none --input=random 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: attn-run: error: function 'none' contains no attn.attention; attn-run executes functions made of one attn.attention
func.func @none(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %a : tensor<4x8xf32>
}

// RUN: not attn-run %s -e two --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWO
// TWO: attn-run: error: function 'two' contains 2 attn.attention ops; attn-run executes functions made of one attn.attention
func.func @two(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  %p = attn.attention %o, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %p : tensor<1x1x4x8xf32>
}

// RUN: not attn-run %s -e unused --input=random --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNUSED
// UNUSED: attn-run: error: argument #3 of 'unused' is not an operand of its attn.attention; attn-run executes functions made of one attn.attention
func.func @unused(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>, %w: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// RUN: not attn-run %s -e constk --input=random --input=random 2>&1 | FileCheck %s --check-prefix=CONSTK
// CONSTK: attn-run: error: operand 'k' of the attn.attention in 'constk' is not a function argument; attn-run passes q, k, v, the mask, kv_lengths, cu_seqlens and block_table as arguments
func.func @constk(%q: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %k = arith.constant dense<1.0> : tensor<1x1x4x8xf32>
  %o = attn.attention %q, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// RUN: not attn-run %s -e tworesults --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RESULTS
// RESULTS: attn-run: error: function 'tworesults' must return the result of its attn.attention and nothing else
func.func @tworesults(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
  %o = attn.attention %q, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
}

// RUN: not attn-run %s -e decl --input=random 2>&1 | FileCheck %s --check-prefix=DECL
// DECL: attn-run: error: function 'decl' is a declaration without a body
func.func private @decl(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>

// A supported function in the same module runs once selected; arith.constant
// ops may appear beside the attention.
// RUN: attn-run %s -e attn --input=random --input=random --input=random --check \
// RUN:   | FileCheck %s --check-prefix=OK
// OK: attn-run: attn on cpu: q=1x1x4x8xf32 k=1x1x4x8xf32 v=1x1x4x8xf32 -> o=1x1x4x8xf32
// OK-NEXT: check: PASS
func.func @attn(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %c = arith.constant 0.5 : f32
  %o = attn.attention %q, %k, %v : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// The per-batch key counts of attn.attention (kv_lengths) are not run by
// attn-run yet: one clear error, not an i32 tensor taken for a mask.
// RUN: not attn-run %s --input=2x2x3x16xf32 --input=2x2x5x16xf32 --input=2x2x5x16xf32 --input=2xi32 --check 2>&1 \
// RUN:   | FileCheck %s
// CHECK: attn-run: error: the attn.attention in 'f' has kv_lengths, which attn-run does not run yet{{$}}
func.func @f(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %l: tensor<?xi32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of attn.attention in every attribute and shape form.

// CHECK-LABEL: func @plain_bf16
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16> -> tensor<2x8x128x64xbf16>
func.func @plain_bf16(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x8x128x64xbf16>, %v: tensor<2x8x128x64xbf16>) -> tensor<2x8x128x64xbf16> {
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16> -> tensor<2x8x128x64xbf16>
  return %o : tensor<2x8x128x64xbf16>
}

// CHECK-LABEL: func @gqa_dynamic_f16
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>, scale = 1.250000e-01 : f32} : tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<?x32x?x128xf16>
func.func @gqa_dynamic_f16(%q: tensor<?x32x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x32x?x128xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, scale = 0.125 : f32} : tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<?x32x?x128xf16>
  return %o : tensor<?x32x?x128xf16>
}

// CHECK-LABEL: func @mqa_bottom_right
// CHECK: {causal = #attn.causal<bottom_right>}
// CHECK-SAME: tensor<?x?x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<?x?x?x64xbf16>
func.func @mqa_bottom_right(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x?x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// CHECK-LABEL: func @f32_precisions
// CHECK: attn.attention {{.*}} {precision = #attn.precision<tf32>} : tensor<1x1x17x80xf32>
// CHECK: attn.attention {{.*}} {precision = #attn.precision<ieee>} : tensor<1x1x17x80xf32>
// CHECK: attn.attention {{.*}} : tensor<1x1x17x80xf32>
func.func @f32_precisions(%q: tensor<1x1x17x80xf32>, %k: tensor<1x1x33x80xf32>, %v: tensor<1x1x33x80xf32>) -> (tensor<1x1x17x80xf32>, tensor<1x1x17x80xf32>, tensor<1x1x17x80xf32>) {
  %a = attn.attention %q, %k, %v {precision = #attn.precision<tf32>} : tensor<1x1x17x80xf32>, tensor<1x1x33x80xf32>, tensor<1x1x33x80xf32> -> tensor<1x1x17x80xf32>
  %b = attn.attention %q, %k, %v {precision = #attn.precision<ieee>} : tensor<1x1x17x80xf32>, tensor<1x1x33x80xf32>, tensor<1x1x33x80xf32> -> tensor<1x1x17x80xf32>
  %c = attn.attention %q, %k, %v : tensor<1x1x17x80xf32>, tensor<1x1x33x80xf32>, tensor<1x1x33x80xf32> -> tensor<1x1x17x80xf32>
  return %a, %b, %c : tensor<1x1x17x80xf32>, tensor<1x1x17x80xf32>, tensor<1x1x17x80xf32>
}

// Dv != D.
// CHECK-LABEL: func @value_head_dim
// CHECK: attn.attention {{.*}} : tensor<4x2x9x32xf16>, tensor<4x2x11x32xf16>, tensor<4x2x11x256xf16> -> tensor<4x2x9x256xf16>
func.func @value_head_dim(%q: tensor<4x2x9x32xf16>, %k: tensor<4x2x11x32xf16>, %v: tensor<4x2x11x256xf16>) -> tensor<4x2x9x256xf16> {
  %o = attn.attention %q, %k, %v : tensor<4x2x9x32xf16>, tensor<4x2x11x32xf16>, tensor<4x2x11x256xf16> -> tensor<4x2x9x256xf16>
  return %o : tensor<4x2x9x256xf16>
}

// Additive float mask, rank 4 broadcast over batch and heads, with causal.
// CHECK-LABEL: func @float_mask_rank4
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
func.func @float_mask_rank4(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

// Boolean mask, rank 2 (Tq x Tk), and a per-(batch, head) rank-4 bf16 mask.
// CHECK-LABEL: func @i1_mask_rank2
// CHECK: mask(%{{.*}}) : tensor<2x4x77x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x90x64xbf16>, tensor<77x90xi1> -> tensor<2x4x77x64xbf16>
// CHECK: mask(%{{.*}}) : tensor<2x4x77x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x1x90xbf16> -> tensor<2x4x77x64xbf16>
func.func @i1_mask_rank2(%q: tensor<2x4x77x64xbf16>, %k: tensor<2x4x90x64xbf16>, %v: tensor<2x4x90x64xbf16>, %m: tensor<77x90xi1>, %m2: tensor<2x4x1x90xbf16>) -> (tensor<2x4x77x64xbf16>, tensor<2x4x77x64xbf16>) {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<2x4x77x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x90x64xbf16>, tensor<77x90xi1> -> tensor<2x4x77x64xbf16>
  %o2 = attn.attention %q, %k, %v mask(%m2) : tensor<2x4x77x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x90x64xbf16>, tensor<2x4x1x90xbf16> -> tensor<2x4x77x64xbf16>
  return %o, %o2 : tensor<2x4x77x64xbf16>, tensor<2x4x77x64xbf16>
}

// f16 mask on dynamic dims, rank 2 with a broadcast row.
// CHECK-LABEL: func @f16_mask_dynamic
// CHECK: mask(%{{.*}}) {causal = #attn.causal<bottom_right>, scale = 5.000000e-01 : f32} : tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<1x?xf16> -> tensor<?x?x?x16xf16>
func.func @f16_mask_dynamic(%q: tensor<?x?x?x16xf16>, %k: tensor<?x?x?x16xf16>, %v: tensor<?x?x?x16xf16>, %m: tensor<1x?xf16>) -> tensor<?x?x?x16xf16> {
  %o = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>, scale = 0.5 : f32} : tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<?x?x?x16xf16>, tensor<1x?xf16> -> tensor<?x?x?x16xf16>
  return %o : tensor<?x?x?x16xf16>
}

// Block level: one program of the grid, with its kernel config.
// CHECK-LABEL: func @block_level
// CHECK: attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}}) outs(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] {causal = #attn.causal<bottom_right>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90a">, scale = 1.250000e-01 : f32} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x?x64xf16>
// CHECK: attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}})) outs(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, precision = #attn.precision<ieee>, scale = 5.000000e-01 : f32} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> mask memref<?x?xi1> outs memref<?x8x?x64xf16>
func.func @block_level(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %m: memref<?x?xi1>, %o: memref<?x8x?x64xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<bottom_right>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90a">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x?x64xf16>
  attn.block_attention ins(%q, %k, %v mask(%m)) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, precision = #attn.precision<ieee>, scale = 0.5 : f32} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> mask memref<?x?xi1> outs memref<?x8x?x64xf16>
  return
}

// The optional log-sum-exp result.
// CHECK-LABEL: func @with_lse
// CHECK: %{{.*}}, %{{.*}} = attn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
func.func @with_lse(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}

// Per-batch key counts (a KV cache).
// CHECK-LABEL: func @with_kv_lengths
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} kv_lengths(%{{.*}} : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>
func.func @with_kv_lengths(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %lens: tensor<?xi32>) -> tensor<?x32x1x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lengths(%lens : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>
  return %o : tensor<?x32x1x128xbf16>
}

// A paged KV cache (block_table, printed before kv_lengths): pools of
// pages of 64 keys, the decode form.
// CHECK-LABEL: func @with_block_table
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} block_table(%{{.*}} : tensor<?x?xi32>) kv_lengths(%{{.*}} : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x1x128xbf16>, tensor<?x8x64x128xbf16>, tensor<?x8x64x128xbf16> -> tensor<?x32x1x128xbf16>
func.func @with_block_table(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x64x128xbf16>, %v: tensor<?x8x64x128xbf16>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> tensor<?x32x1x128xbf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x1x128xbf16>, tensor<?x8x64x128xbf16>, tensor<?x8x64x128xbf16> -> tensor<?x32x1x128xbf16>
  return %o : tensor<?x32x1x128xbf16>
}

// Packed variable-length sequences (cu_seqlens): batch 1, the log-sum-exp.
// CHECK-LABEL: func @with_cu_seqlens
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<top_left>} : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
func.func @with_cu_seqlens(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<top_left>} : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
}

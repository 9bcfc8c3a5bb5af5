// Chained key loops (--attn-pipeline's `chain`): the unmasked loop's loads
// run on into the diagonal loop's blocks that are whole tiles; the
// diagonal loop's prologue loads only a partial block.
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline --verify-each \
// RUN:   | FileCheck %s --check-prefixes=CHAIN,F32
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline="chain=none" \
// RUN:   | FileCheck %s --check-prefixes=NONE
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline="chain=all" \
// RUN:   | FileCheck %s --check-prefixes=CHAIN,ALL
// RUN: not attn-opt %s --split-input-file --attn-pipeline="chain=some" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: --attn-pipeline: chain must be 'all', 'f32' or 'none', got 'some'

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 2, target = "sm_90a">

// Loop 1's prologue and kernel copy block j (whole, 8 rows) while j is
// below loop 2's end and loop 2 would copy it whole.
// CHAIN-LABEL: func @causal_f32
// CHAIN:         %[[WHOLE:.*]] = arith.cmpi sge, %{{.*}}, %c8{{.*}} : index
// CHAIN:         %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[UB2:.*]] : index
// CHAIN:         %[[P:.*]] = arith.andi %[[IN]], %[[WHOLE]] : i1
// CHAIN:         arith.select %[[P]], %c8{{.*}}, %c0{{.*}} : index
// CHAIN:         linalg.copy {attn.async_copy}
// CHAIN:         linalg.copy {attn.async_copy}
// CHAIN:         scf.for %{{.*}} = %[[LB1:[^ ]*]] to %[[UB1:[^ ]*]] step
// CHAIN:           arith.cmpi slt, %{{.*}}, %[[UB2]] : index
// CHAIN:           arith.andi
// CHAIN-COUNT-2:   linalg.copy {attn.async_copy}
// CHAIN:         } {attn.pipelined = 2 : i64}
// Loop 2's prologue: zero-fill and copy only a partial block (0 < rows < 8).
// CHAIN-NOT:     linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x32xf32
// CHAIN:         %[[GT:.*]] = arith.cmpi sgt, %[[ROWS:.*]], %c0{{.*}} : index
// CHAIN:         %[[LT:.*]] = arith.cmpi slt, %[[ROWS]], %c8{{.*}} : index
// CHAIN:         %[[PART:.*]] = arith.andi %[[GT]], %[[LT]] : i1
// CHAIN:         %[[FILL:.*]] = arith.select %[[PART]], %c8{{.*}}, %c0{{.*}} : index
// CHAIN:         memref.subview %{{.*}}[0, 0] [%[[FILL]], 32] [1, 1]
// CHAIN-NEXT:    linalg.fill
// CHAIN:         linalg.copy {attn.async_copy}
// CHAIN:         linalg.fill
// CHAIN:         linalg.copy {attn.async_copy}
// Loop 2's slots count on from loop 1's lower bound.
// CHAIN:         scf.for %[[IV2:.*]] = %[[UB1]] to %[[UB2]] step
// CHAIN:           %[[REL:.*]] = arith.subi %{{.*}}, %[[LB1]] : index
// CHAIN:           arith.remui %[[REL]], %c2
// CHAIN:         } {attn.pipelined = 2 : i64}
// NONE-LABEL: func @causal_f32
// NONE-NOT:      arith.andi
// NONE:          } {attn.pipelined = 2 : i64}
// NONE:          linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x32xf32
// NONE:          scf.for
// NONE:          } {attn.pipelined = 2 : i64}
func.func @causal_f32(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  } {attn.config = #cfg}
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 16, num_warps = 1, num_stages = 2, target = "sm_90a">

// 16-bit tiles: chained only with chain=all (the default chains 32-bit
// tiles only: 16-bit kernels sit at the register limit).
// F32-LABEL: func @full_f16
// F32:         } {attn.pipelined = 2 : i64}
// F32:         linalg.fill ins(%{{.*}} : f16) outs(%{{.*}} : memref<16x32xf16
// F32:         scf.for
// ALL-LABEL: func @full_f16
// ALL:         arith.andi
// ALL:         } {attn.pipelined = 2 : i64}
// ALL-NOT:     linalg.fill ins(%{{.*}} : f16) outs(%{{.*}} : memref<16x32xf16
// ALL:         scf.for
func.func @full_f16(%q: memref<?x4x?x32xf16>, %k: memref<?x4x?x32xf16>, %v: memref<?x4x?x32xf16>, %o: memref<?x4x?x32xf16>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x4x?x32xf16>, memref<?x4x?x32xf16> outs memref<?x4x?x32xf16>
  } {attn.config = #cfg}
  return
}

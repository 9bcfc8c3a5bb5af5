// --attn-pipeline="scores-ahead=all": a two-stage key loop whose block
// math starts with the scores (the unmasked loop) computes the next block's
// scores into a second register block before this block's softmax and P V,
// and copies them into S at the end of the iteration: K's loads run two
// blocks ahead, V's one, and both tiles keep two slots.
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline="scores-ahead=all" --verify-each \
// RUN:   --canonicalize --cse | FileCheck %s
// Without the option, nothing is scores-ahead:
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline \
// RUN:   | FileCheck %s --check-prefix=OFF
// OFF-NOT: scores_ahead

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 2, target = "sm_90a">

// CHECK-LABEL: func @causal_f32
// CHECK:         %[[Q:.*]] = memref.alloca() : memref<16x32xf32>
// CHECK-NEXT:    %[[K:.*]] = memref.alloca() : memref<2x8x32xf32>
// CHECK-NEXT:    %[[V:.*]] = memref.alloca() : memref<2x8x32xf32>
// CHECK-NEXT:    %[[NEXT:.*]] = memref.alloca() : memref<16x8xf32>
// CHECK-NEXT:    %[[S:.*]] = memref.alloca() : memref<16x8xf32>
// Prologue (lb = 0): K of blocks 0 and 1 into slots 0 and 1, V of block 0,
// then S = Q K(0)^T. K(0)'s copy needs 0 <= the loop's end %UB1 (%FROM).
// CHECK:         %[[FROM:.*]] = arith.cmpi sge, %[[UB1:[^ ]*]], %c0 : index
// CHECK:         %[[K0:.*]] = memref.subview %[[K]][0, 0, 0]
// CHECK:         linalg.copy {attn.async_copy}
// CHECK:         memref.subview %[[K]][1, 0, 0]
// CHECK:         linalg.copy {attn.async_copy}
// CHECK:         memref.subview %[[V]][0, 0, 0]
// CHECK:         linalg.copy {attn.async_copy}
// CHECK-NEXT:    linalg.fill {attn.scores_ahead} ins(%{{.*}} : f32) outs(%[[NEXT]] : memref<16x8xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[Q]], %[[K0]] : {{.*}}) outs(%[[NEXT]] : memref<16x8xf32>) attrs = {attn.scores_ahead}
// CHECK:         linalg.copy {attn.scores_ahead} ins(%[[NEXT]] : memref<16x8xf32>) outs(%[[S]] : memref<16x8xf32>)
// The loop: the scores of i + 1 on K's slot (i + 1) mod 2 first, then the
// copies of K of block i + 2 into slot (i + 2) mod 2 and V of i + 1 into
// slot (i + 1) mod 2 (after the scores, so that the wgmma does not wait for
// the copies' registers on the GPU); then the softmax of S, P V on V's slot
// i mod 2, and S = the next scores.
// Chained to the diagonal loop, K's and V's copies run on into its first
// block only (block <= this loop's end %UB1), whole tiles below its end.
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %[[UB1]] step
// CHECK:           %[[B2:.*]] = arith.addi %[[I]], %c2
// CHECK:           arith.cmpi slt, %[[B2]], %[[UB2:[^ ]*]] : index
// CHECK:           arith.cmpi sle, %[[B2]], %[[UB1]] : index
// CHECK:           %[[S2:.*]] = arith.remui %[[B2]], %c2
// CHECK-NEXT:      %[[KSLOT:.*]] = memref.subview %[[K]][%[[S2]], 0, 0]
// CHECK:           %[[KDST:.*]] = memref.subview %[[KSLOT]][0, 0]
// CHECK:           %[[B1:.*]] = arith.addi %[[I]], %c1
// CHECK:           %[[S1:.*]] = arith.remui %[[B1]], %c2
// CHECK-NEXT:      %[[VSLOT:.*]] = memref.subview %[[V]][%[[S1]], 0, 0]
// CHECK:           %[[VDST:.*]] = memref.subview %[[VSLOT]][0, 0]
// CHECK-NOT:       linalg.copy
// CHECK:           linalg.fill {attn.scores_ahead} ins(%{{.*}} : f32) outs(%[[NEXT]] : memref<16x8xf32>)
// CHECK-NEXT:      %[[KV:.*]] = memref.subview %[[K]][%[[S1]], 0, 0]
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[Q]], %[[KV]] : {{.*}}) outs(%[[NEXT]] : memref<16x8xf32>) attrs = {attn.scores_ahead}
// CHECK:           linalg.copy {attn.async_copy} ins(%{{.*}}) outs(%[[KDST]] :
// CHECK-NEXT:      linalg.copy {attn.async_copy} ins(%{{.*}}) outs(%[[VDST]] :
// CHECK:           linalg.generic {{.*}} ins(%[[S]] : memref<16x8xf32>) outs(%{{.*}} : memref<16xf32>)
// CHECK:           %[[S0:.*]] = arith.remui %[[I]], %c2
// CHECK-NEXT:      %[[VV:.*]] = memref.subview %[[V]][%[[S0]], 0, 0]
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[S]], %[[VV]] : {{.*}}) outs(%{{.*}} : memref<16x32xf32>)
// CHECK:           linalg.copy {attn.scores_ahead} ins(%[[NEXT]] : memref<16x8xf32>) outs(%[[S]] : memref<16x8xf32>)
// CHECK-NEXT:    } {attn.pipelined = 2 : i64, attn.scores_ahead}
// The diagonal loop (its scores under the block-skip branch) keeps the
// two-stage schedule; the loop before loaded its first block, so its
// prologue copies only a partial block.
// CHECK:         %[[GT:.*]] = arith.cmpi sgt, %[[ROWS:.*]], %c0 : index
// CHECK:         %[[LT:.*]] = arith.cmpi slt, %[[ROWS]], %c8 : index
// CHECK:         arith.andi %[[GT]], %[[LT]] : i1
// CHECK:         linalg.copy {attn.async_copy}
// CHECK:         linalg.copy {attn.async_copy}
// Its first block's scores are the ones the last iteration of the loop
// before computed into S (K's loads ran on into that block), or with that
// loop empty (0 = %UB1) its prologue, when the block is whole: there its
// Q K^T is skipped (0 <= %UB1: the loop ran, or it is empty from 0).
// CHECK:         scf.for %[[D:.*]] = %[[UB1]] to %[[UB2]] step
// CHECK:           scf.if
// CHECK-NEXT:        %[[FIRSTD:.*]] = arith.cmpi eq, %[[D]], %[[UB1]] : index
// CHECK-NEXT:        %[[H1:.*]] = arith.andi %[[FIRSTD]], %[[FROM]] : i1
// CHECK-NEXT:        %[[WHOLE:.*]] = arith.cmpi sge, %{{.*}}, %c8 : index
// CHECK-NEXT:        %[[H2:.*]] = arith.andi %[[H1]], %[[WHOLE]] : i1
// CHECK-NEXT:        %[[QK:.*]] = arith.xori %[[H2]], %true : i1
// CHECK-NEXT:        scf.if %[[QK]] {
// CHECK-NEXT:          linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : memref<16x8xf32>)
// CHECK:               linalg.generic {{.*}} outs(%[[S]] : memref<16x8xf32>)
// CHECK:             } {attn.scores_handed}
// CHECK:         } {attn.pipelined = 2 : i64}
func.func @causal_f32(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  } {attn.config = #cfg}
  return
}

// -----

// Three stages: the loop keeps the usual schedule.
#cfg3 = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 3, target = "sm_90a">
// CHECK-LABEL: func @full_three_stages
// CHECK-NOT:     scores_ahead
// CHECK:         } {attn.pipelined = 3 : i64}
func.func @full_three_stages(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg3, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  } {attn.config = #cfg3}
  return
}

// The schedule alone, on the online-softmax loops of one program with
// num_stages = 3 in its config:
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline="phase=schedule" \
// RUN:   | FileCheck %s --check-prefix=SCHED
// The expansion alone, on a loop annotated by hand:
// RUN: attn-opt %s --split-input-file --attn-pipeline="phase=expand" | FileCheck %s --check-prefix=EXPAND
// Both, and the pass leaving one-stage programs alone:
// RUN: attn-opt %s --split-input-file --attn-online-softmax --attn-pipeline --verify-each \
// RUN:   | FileCheck %s --check-prefix=ALL

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 3, target = "sm_90a">

// K and V tiles get a leading slot dimension of 3.
// SCHED-LABEL: func @causal_program
// SCHED-DAG:     %[[KT:.*]] = memref.alloca() : memref<3x8x32xf16>
// SCHED-DAG:     %[[VT:.*]] = memref.alloca() : memref<3x8x32xf16>
// SCHED-NOT:     memref.alloca() : memref<8x32xf16>
// Loop 1 (unmasked blocks): the loads and their address arithmetic are
// stage 0; the slot of iteration %iv is (%iv - lb) mod 3.
// SCHED:         scf.for %[[IV:.*]] = %[[LB:.*]] to %{{.*}} step %c1 {
// SCHED-NEXT:      %[[COL0:.*]] = arith.muli %[[IV]], %c8 {attn.pipeline_stage = 0 : i64}
// SCHED-NEXT:      %[[KSRC:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, %[[COL0]], 0] [1, 1, 8, 32] {{.*}}{attn.pipeline_stage = 0 : i64}
// SCHED-NEXT:      %[[REL:.*]] = arith.subi %[[IV]], %[[LB]] {attn.pipeline_stage = 0 : i64}
// SCHED-NEXT:      %[[C3:.*]] = arith.constant {attn.pipeline_stage = 0 : i64} 3 : index
// SCHED-NEXT:      %[[SLOT:.*]] = arith.remui %[[REL]], %[[C3]] {attn.pipeline_stage = 0 : i64}
// SCHED-NEXT:      %[[KSLOT:.*]] = memref.subview %[[KT]][%[[SLOT]], 0, 0] [1, 8, 32] [1, 1, 1] {attn.pipeline_stage = 0 : i64} : memref<3x8x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
// SCHED:           linalg.copy {attn.pipeline_stage = 0 : i64} ins(%[[KSRC]] {{.*}} outs(
// SCHED:           linalg.copy {attn.pipeline_stage = 0 : i64}
// Everything else is stage 2, and reads the slot of its own iteration.
// SCHED-NEXT:      linalg.fill {attn.pipeline_stage = 2 : i64}
// SCHED:           %[[KSLOT2:.*]] = memref.subview %[[KT]][%{{.*}}, 0, 0] [1, 8, 32] [1, 1, 1] {attn.pipeline_stage = 2 : i64}
// SCHED-NEXT:      linalg.generic {{.*}} ins(%{{.*}}, %[[KSLOT2]] : {{.*}} attrs = {attn.pipeline_stage = 2 : i64}
// SCHED-NOT:       attn.pipeline_stage = 0
// SCHED:         } {attn.pipeline_stages = 3 : i64}
// Loop 2 (masked blocks): the K/V zero fills are loads too; the column
// arithmetic both stages use is duplicated, one copy per stage.
// SCHED:         scf.for %[[IV2:.*]] =
// SCHED-NEXT:      arith.muli %[[IV2]], %c8 {attn.pipeline_stage = 2 : i64}
// SCHED-NEXT:      arith.muli %[[IV2]], %c8 {attn.pipeline_stage = 0 : i64}
// SCHED:           linalg.fill {attn.pipeline_stage = 0 : i64} ins(%{{.*}} : f16)
// SCHED:           linalg.copy {attn.pipeline_stage = 0 : i64}
// SCHED:           linalg.fill {attn.pipeline_stage = 0 : i64} ins(%{{.*}} : f16)
// SCHED:           linalg.copy {attn.pipeline_stage = 0 : i64}
// SCHED-NOT:       attn.pipeline_stage = 0
// SCHED:         } {attn.pipeline_stages = 3 : i64}

// Expanded: a prologue loading blocks lb and lb + 1 (each copy limited to 0
// rows when the block does not exist), then a loop whose head loads block
// %iv + 2 and whose math reads block %iv. No peeled epilogue.
// ALL-LABEL: func @causal_program
// Q rows of 64 bytes: loaded in place, not prefetched.
// ALL-NOT:     linalg.copy {attn.async_copy} ins(%{{.*}} : memref<?x32xf16
// ALL:         %[[P0:.*]] = arith.cmpi slt, %{{.*}}, %[[UB:.*]] : index
// ALL:         %[[R0:.*]] = arith.select %[[P0]], %c8{{.*}}, %c0{{.*}} : index
// ALL:         linalg.copy {attn.async_copy}
// ALL:         linalg.copy {attn.async_copy}
// ALL:         arith.cmpi slt, %{{.*}}, %[[UB]] : index
// ALL:         linalg.copy {attn.async_copy}
// ALL:         linalg.copy {attn.async_copy}
// In the loop, block %iv + 2's loads come after S = Q K^T of block %iv.
// ALL:         scf.for %{{.*}} = %{{.*}} to %[[UB]] step %c1 {
// ALL-NOT:       linalg.copy {attn.async_copy}
// ALL:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// ALL-NOT:       linalg.generic
// ALL-COUNT-2:   linalg.copy {attn.async_copy}
// ALL:           linalg.generic
// ALL-NOT:       linalg.copy {attn.async_copy}
// ALL:         } {attn.pipelined = 3 : i64}
// ALL:         scf.for
// ALL:         } {attn.pipelined = 3 : i64}
// ALL-NOT:     attn.pipeline_stage
func.func @causal_program(%q: memref<?x4x?x32xf16>, %k: memref<?x2x?x32xf16>, %v: memref<?x2x?x32xf16>, %o: memref<?x4x?x32xf16>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x2x?x32xf16>, memref<?x2x?x32xf16> outs memref<?x4x?x32xf16>
  } {attn.config = #cfg}
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 2, target = "sm_90a">

// An f32 causal program for a GPU: the diagonal blocks' Q K^T sits alone
// under the scf.if of its live check; the loads of the next block come
// after that scf.if (as after a plain Q K^T), before the live check and
// the scf.if that guard the rest of the block's math.
// ALL-LABEL: func @causal_f32_program
// ALL:         } {attn.pipelined = 2 : i64}
// ALL:         scf.for
// ALL-NOT:       linalg.copy {attn.async_copy}
// ALL:           linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}}outs(%{{.*}} : memref<i1>) attrs = {attn.program_live}
// ALL:           %[[QKLIVE:.*]] = memref.load %{{.*}}[] : memref<i1>
// ALL-NOT:       linalg.copy {attn.async_copy}
// ALL:           scf.if %[[QKLIVE]] {
// ALL-NOT:         linalg.copy
// ALL:             linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// ALL:           }
// ALL-COUNT-2:   linalg.copy {attn.async_copy}
// ALL-NOT:       linalg.copy {attn.async_copy}
// ALL:           linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}}outs(%{{.*}} : memref<i1>) attrs = {attn.program_live} {
// ALL:           %[[LIVE:.*]] = memref.load %{{.*}}[] : memref<i1>
// ALL:           scf.if %[[LIVE]] {
// ALL-NOT:         linalg.copy {attn.async_copy}
// ALL:         } {attn.pipelined = 2 : i64}
func.func @causal_f32_program(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  } {attn.config = #cfg}
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// One stage: nothing to pipeline.
// SCHED-LABEL: func @one_stage
// SCHED-NOT:     attn.pipeline_stage
// SCHED:         memref.alloca() : memref<8x32xf32>
// SCHED-NOT:     attn.pipeline_stage
// ALL-LABEL: func @one_stage
// ALL-NOT:     attn.async_copy
// ALL-NOT:     attn.pipelined
func.func @one_stage(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  } {attn.config = #cfg}
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 16, num_warps = 1, num_stages = 2, target = "sm_90a">

// The Q tile (rows of 128 bytes), read only inside pipelined loops, is
// loaded asynchronously too: the first loop's wait covers it.
// ALL-LABEL: func @prefetch_q
// ALL:         linalg.fill
// ALL-NEXT:    memref.subview %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 1, %{{.*}}, 64]
// ALL-NEXT:    memref.subview
// ALL-NEXT:    linalg.copy {attn.async_copy}
// ALL:         scf.for
// ALL:         } {attn.pipelined = 2 : i64}
// SCHED-LABEL: func @prefetch_q
// SCHED-NOT:   attn.async_copy
// SCHED:       } {attn.pipeline_stages = 2 : i64}
func.func @prefetch_q(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>, %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.125 : f32} : memref<?x4x?x64xf16>, memref<?x4x?x64xf16>, memref<?x4x?x64xf16> outs memref<?x4x?x64xf16>
  } {attn.config = #cfg}
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 16, num_warps = 1, num_stages = 2, target = "sm_90a">

// An f32 Q tile (rows of 256 bytes) is prefetched as well: the GPU lowering
// waits for it (with the first K/V block) before the first loop and reads
// its tf32 fragments into registers there.
// ALL-LABEL: func @f32_q_prefetched
// ALL:         linalg.fill
// ALL-NEXT:    memref.subview %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, 0] [1, 1, %{{.*}}, 64]
// ALL-NEXT:    memref.subview
// ALL-NEXT:    linalg.copy {attn.async_copy}
// ALL:         linalg.copy {attn.async_copy}
// ALL:         scf.for
// ALL:         } {attn.pipelined = 2 : i64}
func.func @f32_q_prefetched(%q: memref<?x4x?x64xf32>, %k: memref<?x4x?x64xf32>, %v: memref<?x4x?x64xf32>, %o: memref<?x4x?x64xf32>, %b: index, %h: index, %qb: index) {
  scf.forall (%i) in (1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.125 : f32} : memref<?x4x?x64xf32>, memref<?x4x?x64xf32>, memref<?x4x?x64xf32> outs memref<?x4x?x64xf32>
  } {attn.config = #cfg}
  return
}

// -----

// The expansion of any annotated loop. The prologue: iterations 0 and 1 of
// stage 0, each copy limited to `select(lb + i < n, 8, 0)` rows.
// SCHED-LABEL: func @expand
// ALL-LABEL: func @expand
// ALL:         } {attn.pipelined = 3 : i64}
// EXPAND-LABEL: func @expand
// EXPAND-SAME:    (%[[SRC:.*]]: memref<?x32xf16>, %[[ACC:.*]]: memref<8x32xf32>, %[[N:.*]]: index)
// EXPAND:         %[[BUF:.*]] = memref.alloca() : memref<3x8x32xf16>
// EXPAND:         %[[P0:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// EXPAND:         %[[R0:.*]] = arith.select %[[P0]], %c8{{.*}}, %c0{{.*}} : index
// EXPAND:         %[[S0:.*]] = memref.subview %{{.*}}[0, 0] [%[[R0]], 32] [1, 1]
// EXPAND:         %[[D0:.*]] = memref.subview %{{.*}}[0, 0] [%[[R0]], 32] [1, 1]
// EXPAND:         linalg.copy {attn.async_copy} ins(%[[S0]] {{.*}} outs(%[[D0]]
// EXPAND:         %[[P1:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : index
// EXPAND:         arith.select %[[P1]]
// EXPAND:         linalg.copy {attn.async_copy}
// The kernel: stage 0 of iteration %iv + 2 while %iv + 2 < n, then stage 2
// of iteration %iv on slot %iv mod 3.
// EXPAND:         scf.for %[[IV:.*]] = %c0 to %[[N]] step %c1 {
// EXPAND:           %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// EXPAND:           %[[PK:.*]] = arith.cmpi slt, %[[IV]], %[[LAST]] : index
// EXPAND:           %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : index
// EXPAND:           arith.muli %[[AHEAD]], %c8
// EXPAND:           arith.select %[[PK]]
// EXPAND:           linalg.copy {attn.async_copy}
// EXPAND:           %[[SLOT:.*]] = arith.remui %{{.*}}, %c3
// EXPAND:           %[[TILE:.*]] = memref.subview %[[BUF]][%[[SLOT]], 0, 0] [1, 8, 32]
// EXPAND:           linalg.generic {{.*}} ins(%[[TILE]] {{.*}} outs(%[[ACC]]
// EXPAND-NOT:       attn.pipeline_stage
// EXPAND:         } {attn.pipelined = 3 : i64}
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @expand(%src: memref<?x32xf16>, %acc: memref<8x32xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c3 = arith.constant 3 : index
  %buf = memref.alloca() : memref<3x8x32xf16>
  scf.for %i = %c0 to %n step %c1 {
    %row = arith.muli %i, %c8 {attn.pipeline_stage = 0 : i64} : index
    %s = memref.subview %src[%row, 0] [8, 32] [1, 1] {attn.pipeline_stage = 0 : i64} : memref<?x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
    %slot = arith.remui %i, %c3 {attn.pipeline_stage = 0 : i64} : index
    %t = memref.subview %buf[%slot, 0, 0] [1, 8, 32] [1, 1, 1] {attn.pipeline_stage = 0 : i64} : memref<3x8x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
    linalg.copy {attn.pipeline_stage = 0 : i64} ins(%s : memref<8x32xf16, strided<[32, 1], offset: ?>>) outs(%t : memref<8x32xf16, strided<[32, 1], offset: ?>>)
    %slot2 = arith.remui %i, %c3 {attn.pipeline_stage = 2 : i64} : index
    %t2 = memref.subview %buf[%slot2, 0, 0] [1, 8, 32] [1, 1, 1] {attn.pipeline_stage = 2 : i64} : memref<3x8x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t2 : memref<8x32xf16, strided<[32, 1], offset: ?>>) outs(%acc : memref<8x32xf32>) attrs = {attn.pipeline_stage = 2 : i64} {
    ^bb0(%x: f16, %y: f32):
      %e = arith.extf %x : f16 to f32
      %a = arith.addf %y, %e : f32
      linalg.yield %a : f32
    }
  } {attn.pipeline_stages = 3 : i64}
  return
}

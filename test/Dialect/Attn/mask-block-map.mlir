// --attn-mask-block-map: a map of block classes per mask (batch, head) slice,
// written by a classification grid before the program grid, freed after it,
// and read by the programs instead of their mask elements.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-mask-block-map -cse \
// RUN:   | FileCheck %s --check-prefix=MAP
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-mask-block-map -cse \
// RUN:   --attn-online-softmax -cse | FileCheck %s --check-prefix=PROG
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-mask-block-map -cse \
// RUN:   --attn-online-softmax -cse | FileCheck %s --check-prefix=RANGE

// A mask broadcast over batch and heads: one slice.
// MAP-LABEL: func.func @broadcast
// MAP: %[[NI:.*]] = arith.ceildivui %{{.*}}, %c64
// MAP: %[[NJ:.*]] = arith.ceildivui %{{.*}}, %c32
// MAP: %[[MAP:.*]] = memref.alloc(%[[NI]], %[[NJ]]) {attn.workspace = "mask_block_map"} : memref<1x1x?x?xi8>
// MAP: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]], %[[KB:.*]]) in (1, 1, %[[NI]], %[[NJ]])
// MAP:   %[[ROW0:.*]] = arith.muli %[[QB]], %c64
// MAP:   %[[COL0:.*]] = arith.muli %[[KB]], %c32
// MAP:   %[[R:.*]]:3 = scf.for %{{.*}} = %c0 to %c2048 step %c1 iter_args(%{{.*}} = %false, %{{.*}} = %false, %{{.*}} = %false) -> (i1, i1, i1)
// MAP:     %[[I:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// MAP:     %[[J:.*]] = arith.addi %[[COL0]], %{{.*}} : index
// MAP:     %[[INSIDE:.*]] = arith.cmpi slt, %[[J]], %[[TK:.*]] : index
// MAP:     memref.load %{{.*}} : memref<1x1x?x?xf32
// MAP:     %[[TERM:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEGINF:.*]] : f32
// MAP:     %[[LIVE:.*]] = arith.cmpf une, %[[TERM]], %[[NEGINF]]
// MAP:     %[[NONZERO:.*]] = arith.cmpf une, %[[TERM]], %[[ZERO:.*]] : f32
// The triangular class's term: 0 up to the diagonal (top-left without
// causal) and before Tk, else -inf.
// MAP:     %[[DIAG:.*]] = arith.addi %[[I]], %c1 : index
// MAP:     %[[LIMIT:.*]] = arith.minsi %[[TK]], %[[DIAG]] : index
// MAP:     %[[SEEN:.*]] = arith.cmpi slt, %[[J]], %[[LIMIT]] : index
// MAP:     %[[TRI:.*]] = arith.select %[[SEEN]], %[[ZERO]], %[[NEGINF]] : f32
// MAP:     %[[NOTTRI:.*]] = arith.cmpf une, %[[TERM]], %[[TRI]] : f32
// MAP:   } {attn.block_reduce}
// MAP:   %[[TERMS:.*]] = arith.select %[[R]]#2, %c2_i8, %c3_i8 : i8
// MAP:   %[[NZ:.*]] = arith.select %[[R]]#1, %[[TERMS]], %c1_i8 : i8
// MAP:   %[[CLS:.*]] = arith.select %[[R]]#0, %[[NZ]], %c0_i8 : i8
// MAP:   memref.store %[[CLS]], %[[MAP]][%[[B]], %[[H]], %[[QB]], %[[KB]]]
// MAP: } {attn.mask_block_map = #attn.config<block_m = 64, block_n = 32
// MAP: scf.forall
// MAP:   attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) block_map(%[[MAP]]))
// MAP: } {attn.config
// MAP: memref.dealloc %[[MAP]] : memref<1x1x?x?xi8>

// PROG-LABEL: func.func @broadcast
// PROG: scf.forall
// PROG: } {attn.mask_block_map
// PROG: scf.forall (%[[PB:.*]], %[[PH:.*]], %[[PQB:.*]]) in
// One stage: no scan of the map row; every block up to the causal bound is
// visited, and a removed one skips its loads with its math.
// PROG-NOT: -> (index, index)
// PROG: scf.for %[[KB:.*]] =
// PROG-NOT: linalg.generic
// PROG:   %[[CLS:.*]] = memref.load %{{.*}}[%c0, %c0, %[[PQB]], %[[KB]]] : memref<1x1x?x?xi8>
// PROG:   %[[LIVE:.*]] = arith.cmpi ne, %[[CLS]], %c0_i8
// PROG:   scf.if %[[LIVE]] {
// PROG:     linalg.copy
// PROG:     linalg.copy
// An f32 program for a GPU has a flag of whether the rows see any key of
// the block, and runs the rest of the block under it; the GPU lowering ORs
// it over each warp's rows or elements, so a warp whose rows see no key of
// the block skips its softmax and P V. A triangular block (class 3) sets it
// before Q K^T from the diagonal alone (some row sees the block's first
// key), and Q K^T runs under it too.
// PROG:     %[[TRI:.*]] = arith.cmpi eq, %[[CLS]], %c3_i8
// PROG:     scf.if %[[TRI]] {
// PROG-NEXT:  linalg.fill ins(%false : i1) outs(%[[FLAG:.*]] : memref<i1>)
// PROG-NEXT:  linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : memref<64xf32>) outs(%[[FLAG]] : memref<i1>)
// PROG:         %[[LIM:.*]] = arith.minsi
// PROG-NEXT:    arith.cmpi slt, %[[COL0:.*]], %[[LIM]] : index
// PROG:     } else {
// PROG-NEXT:  linalg.fill ins(%true : i1) outs(%[[FLAG]] : memref<i1>)
// PROG-NEXT: }
// PROG-NEXT: %[[QK:.*]] = memref.load %[[FLAG]][] : memref<i1>
// PROG-NEXT: scf.if %[[QK]] {
// PROG-NEXT:   linalg.fill
// PROG-NEXT:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// PROG:          linalg.yield
// PROG-NEXT:   }
// PROG-NEXT: }
// Its scores: -inf past the diagonal and Tk, from indices alone (no mask
// read; the scale is folded into the exponent).
// PROG-NEXT: scf.if %[[TRI]] {
// PROG-NEXT:   linalg.generic {{.*}} outs(%[[S:.*]] : memref<64x32xf32>)
// PROG-NEXT:   ^bb0(%[[OUT:.*]]: f32):
// PROG-NOT:      memref.load
// PROG:          %[[LIMIT:.*]] = arith.minsi
// PROG-NEXT:     %[[SEEN:.*]] = arith.cmpi slt, %{{.*}}, %[[LIMIT]]
// PROG-NOT:      memref.load
// PROG:          arith.select %[[SEEN]], %[[OUT]], %{{.*}} : f32
// A mixed block reads its terms, ORs "term != -inf" into the flag and
// applies them; a block of zero terms needs nothing (no mask read, no
// select, no scale).
// PROG:      } else {
// PROG-NEXT:   %[[MIXED:.*]] = arith.cmpi ne, %[[CLS]], %c1_i8
// PROG-NEXT:   scf.if %[[MIXED]] {
// PROG-NEXT:     linalg.generic {{.*}} outs(%[[TERMS:.*]] : memref<64x32xf32>)
// PROG:            memref.load %{{.*}} : memref<1x1x?x?xf32
// PROG:          linalg.fill ins(%false : i1) outs(%[[FLAG]] : memref<i1>)
// PROG-NEXT:     linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[TERMS]] : memref<64x32xf32>) outs(%[[FLAG]] : memref<i1>)
// PROG:            arith.cmpf une
// PROG:            arith.ori
// PROG:          linalg.generic {{.*}} ins(%[[TERMS]] : memref<64x32xf32>) outs(%[[S]] : memref<64x32xf32>)
// PROG:            math.fma
// PROG:            linalg.yield
// PROG-NEXT:     }
// PROG-NEXT:   }
// PROG-NEXT: }
// PROG-NEXT: %[[KEEP:.*]] = memref.load %[[FLAG]][] : memref<i1>
// PROG-NEXT: scf.if %[[KEEP]] {
// PROG:        math.exp2
// PROG:        linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// Two stages: the pipeliner would load every block of its loop a block
// ahead, removed or not, so the program first scans its map row for the
// first and one past the last live block (starting from numVisit and 0, an
// empty range) and for the end of the run of zero-term blocks (class 1)
// that starts at the first live one. An f32 program runs that run with the
// unmasked step (no class load, no skip branch, whole blocks: below the
// tail bound too), then the rest of the range with the masked step, its
// loads at the head of the body, outside the skip branch.
// RANGE-LABEL: func.func @broadcast
// RANGE: } {attn.mask_block_map
// RANGE: scf.forall (%[[PB:.*]], %[[PH:.*]], %[[PQB:.*]]) in
// RANGE: %[[NV:.*]] = arith.ceildivsi
// RANGE: %[[FULL:.*]] = arith.divsi
// RANGE: %[[BOUND:.*]] = arith.minsi %[[FULL]], %[[NV]] : index
// The scan runs in 32 bits (the GPU's index is 64-bit, where its compares
// and selects were pairs of instructions).
// RANGE: %[[NV32:.*]] = arith.index_cast %[[NV]] : index to i32
// RANGE: %[[R:.*]]:4 = scf.for %[[J:.*]] = %c0_i32 to %[[NV32]] step %c1_i32 iter_args(%[[FIRST:.*]] = %[[NV32]], %[[LAST:.*]] = %c0_i32, %[[ZEND:.*]] = %[[NV32]], %[[NTRI:.*]] = %c0_i32) -> (i32, i32, i32, i32) : i32 {
// RANGE-NEXT: %[[JI:.*]] = arith.index_cast %[[J]] : i32 to index
// RANGE-NEXT: %[[C:.*]] = memref.load %{{.*}}[%c0, %c0, %[[PQB]], %[[JI]]] : memref<1x1x?x?xi8>
// RANGE-NEXT: %[[L:.*]] = arith.cmpi ne, %[[C]], %c0_i8 : i8
// RANGE-NEXT: %[[MIN:.*]] = arith.minsi %[[FIRST]], %[[J]] : i32
// RANGE-NEXT: %[[F:.*]] = arith.select %[[L]], %[[MIN]], %[[FIRST]] : i32
// RANGE-NEXT: %[[NEXT:.*]] = arith.addi %[[J]], %c1_i32 : i32
// RANGE-NEXT: %[[E:.*]] = arith.select %[[L]], %[[NEXT]], %[[LAST]] : i32
// RANGE-NEXT: %[[STARTED:.*]] = arith.cmpi sle, %[[F]], %[[J]] : i32
// RANGE-NEXT: %[[RUNNING:.*]] = arith.cmpi eq, %[[ZEND]], %[[NV32]] : i32
// RANGE-NEXT: %[[NOTZERO:.*]] = arith.cmpi ne, %[[C]], %c1_i8 : i8
// RANGE-NEXT: %[[A:.*]] = arith.andi %[[STARTED]], %[[RUNNING]] : i1
// RANGE-NEXT: %[[ENDS:.*]] = arith.andi %[[A]], %[[NOTZERO]] : i1
// RANGE-NEXT: %[[Z:.*]] = arith.select %[[ENDS]], %[[J]], %[[ZEND]] : i32
// RANGE-NEXT: %[[ISTRI:.*]] = arith.cmpi eq, %[[C]], %c3_i8 : i8
// RANGE-NEXT: %[[TRI1:.*]] = arith.extui %[[ISTRI]] : i1 to i32
// RANGE-NEXT: %[[T:.*]] = arith.addi %[[NTRI]], %[[TRI1]] : i32
// RANGE-NEXT: scf.yield %[[F]], %[[E]], %[[Z]], %[[T]] : i32, i32, i32, i32
// RANGE: %[[R0:.*]] = arith.index_cast %[[R]]#0 : i32 to index
// RANGE-NEXT: %[[R1:.*]] = arith.index_cast %[[R]]#1 : i32 to index
// RANGE-NEXT: %[[R2:.*]] = arith.index_cast %[[R]]#2 : i32 to index
// RANGE-NEXT: %[[R3:.*]] = arith.index_cast %[[R]]#3 : i32 to index
// A row whose classes are the triangular mask's (here top-left: live up to
// the block of key row0 + rows - 1, zero terms below the block of key
// row0 + 1, triangular between) runs a causal program's loops, bounded by
// those formulas, with no class load or mask read; any other row the
// map's loops.
// RANGE: %[[VISIT:.*]] = arith.minsi %{{.*}}, %[[NV]] : index
// RANGE: %[[BELOW0:.*]] = arith.minsi %{{.*}}, %[[FULL]] : index
// RANGE-NEXT: %[[BELOW:.*]] = arith.minsi %[[BELOW0]], %[[VISIT]] : index
// RANGE-NEXT: %[[AT0:.*]] = arith.cmpi eq, %[[R0]], %c0 : index
// RANGE-NEXT: %[[ATV:.*]] = arith.cmpi eq, %[[R1]], %[[VISIT]] : index
// RANGE-NEXT: %[[S1:.*]] = arith.andi %[[AT0]], %[[ATV]] : i1
// RANGE-NEXT: %[[ATB:.*]] = arith.cmpi eq, %[[R2]], %[[BELOW]] : index
// RANGE-NEXT: %[[NT:.*]] = arith.subi %[[R1]], %[[R2]] : index
// RANGE-NEXT: %[[ALLTRI:.*]] = arith.cmpi eq, %[[R3]], %[[NT]] : index
// RANGE-NEXT: %[[S2:.*]] = arith.andi %[[ATB]], %[[ALLTRI]] : i1
// RANGE-NEXT: %[[S3:.*]] = arith.andi %[[S1]], %[[S2]] : i1
// RANGE-NEXT: %[[ANY:.*]] = arith.cmpi sgt, %[[VISIT]], %c0 : index
// RANGE-NEXT: %[[SHAPED:.*]] = arith.andi %[[S3]], %[[ANY]] : i1
// RANGE-NEXT: scf.if %[[SHAPED]] {
// RANGE-NEXT: scf.for %{{.*}} = %c0 to %[[BELOW]] step %c1 {
// RANGE-NOT: xi8>
// RANGE: scf.for %[[KBC:.*]] = %[[BELOW]] to %[[VISIT]] step %c1 {
// The diagonal blocks' skip flag, from the diagonal alone (a causal
// program's), then Q K^T and the scores under it.
// RANGE-NOT: xi8>
// RANGE: linalg.fill ins(%false : i1) outs(%[[FLAG:.*]] : memref<i1>)
// RANGE: %[[LIVEC:.*]] = memref.load %[[FLAG]][] : memref<i1>
// RANGE-NEXT: scf.if %[[LIVEC]] {
// RANGE-NOT: xi8>
// RANGE: } else {
// RANGE-NEXT: %[[M1:.*]] = arith.minsi %[[R2]], %[[R1]] : index
// RANGE-NEXT: %[[M2:.*]] = arith.minsi %[[M1]], %[[BOUND]] : index
// RANGE-NEXT: %[[PLAIN:.*]] = arith.maxsi %[[M2]], %[[R0]] : index
// RANGE-NEXT: scf.for %{{.*}} = %[[R0]] to %[[PLAIN]] step %c1 {
// RANGE-NOT: scf.if
// RANGE-NOT: xi8>
// RANGE: scf.for %[[KB:.*]] = %[[PLAIN]] to %[[R1]] step %c1 {
// RANGE: linalg.copy ins(%subview
// RANGE: linalg.copy ins(%subview
// RANGE: %[[CLS:.*]] = memref.load %{{.*}}[%c0, %c0, %[[PQB]], %[[KB]]] : memref<1x1x?x?xi8>
// RANGE: scf.if
// RANGE-NOT: linalg.copy ins(%subview
// RANGE: } {attn.config
func.func @broadcast(%q: tensor<?x8x?x64xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x8x?x64xf32> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<1x1x?x?xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// A per-batch mask over a dynamic batch: one slice per batch, indexed by it.
// MAP-LABEL: func.func @per_batch
// MAP: %[[MAP:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) {attn.workspace = "mask_block_map"} : memref<?x1x?x?xi8>
// MAP: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 1, %{{.*}}, %{{.*}})
// PROG-LABEL: func.func @per_batch
// PROG: } {attn.mask_block_map
// PROG: scf.forall (%[[PB:.*]], %[[PH:.*]], %[[PQB:.*]]) in
// PROG: memref.load %{{.*}}[%[[PB]], %c0, %[[PQB]], %{{.*}}] : memref<?x1x?x?xi8>
// f16: no terms flag (Q K^T for every live block); a triangular block's
// scores come from the diagonal (here bottom-right: Tk - Tq), with no mask
// read; the others read their terms unless they are all zero.
// PROG-NOT: memref<i1>
// PROG: %[[T16:.*]] = arith.cmpi eq, %[[C16:.*]], %c3_i8 : i8
// PROG-NEXT: scf.if %[[T16]] {
// PROG-NOT: memref<?x1x?x?xf16
// PROG: %[[LIM16:.*]] = arith.minsi
// PROG-NEXT: arith.cmpi slt, %{{.*}}, %[[LIM16]]
// PROG-NOT: memref<?x1x?x?xf16
// PROG: } else {
// PROG-NEXT: %[[M16:.*]] = arith.cmpi ne, %[[C16]], %c1_i8 : i8
// PROG-NEXT: scf.if %[[M16]] {
// PROG: memref.load %{{.*}} : memref<?x1x?x?xf16
// PROG-NOT: } else {
// PROG-NOT: memref<i1>
// PROG: return
func.func @per_batch(%q: tensor<?x8x?x64xf16>, %m: tensor<?x1x?x?xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %q, %q mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x1x?x?xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// A per-head i1 mask with static heads: the map has 8 head slices. 16-bit
// programs keep one masked loop over the live range (a second copy of the
// block math made ptxas spill at head dim 64).
// RANGE-LABEL: func.func @per_head_bool
// RANGE: } {attn.mask_block_map
// RANGE: scf.forall (%{{.*}}, %[[H16:.*]], %[[QB16:.*]]) in
// RANGE: %[[R16:.*]]:4 = scf.for
// RANGE: scf.yield
// RANGE-NEXT: }
// RANGE-NEXT: %[[F16:.*]] = arith.index_cast %[[R16]]#0 : i32 to index
// RANGE-NEXT: %[[E16:.*]] = arith.index_cast %[[R16]]#1 : i32 to index
// RANGE:      scf.for %[[KB16:.*]] = %[[F16]] to %[[E16]] step %c1 {
// RANGE: memref.load %{{.*}}[%c0, %[[H16]], %[[QB16]], %[[KB16]]] : memref<1x8x?x?xi8>
// RANGE: scf.if
// MAP-LABEL: func.func @per_head_bool
// MAP: memref.alloc(%{{.*}}, %{{.*}}) {attn.workspace = "mask_block_map"} : memref<1x8x?x?xi8>
// MAP: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, %{{.*}}, %{{.*}})
func.func @per_head_bool(%q: tensor<?x8x?x64xbf16>, %m: tensor<1x8x?x?xi1>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<1x8x?x?xi1> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// No mask: no map.
// MAP-LABEL: func.func @no_mask
// MAP-NOT: attn.workspace
// MAP-NOT: attn.mask_block_map
// MAP: return
func.func @no_mask(%q: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %q, %q {causal = #attn.causal<top_left>} : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// Per-batch key counts: no map (its classes take one Tk for all batches);
// the programs read the mask per element.
// MAP-LABEL: func.func @kv_lengths
// MAP-NOT: attn.workspace
// MAP-NOT: attn.mask_block_map
// MAP: attn.block_attention ins({{.*}} mask({{.*}}) kv_lengths({{.*}}))
// MAP: return
func.func @kv_lengths(%q: tensor<?x8x?x64xf16>, %m: tensor<?x?xi1>, %l: tensor<?xi32>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %q, %q mask(%m) kv_lengths(%l : tensor<?xi32>) : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x?xi1> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

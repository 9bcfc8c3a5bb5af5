// RUN: attn-opt %s --attn-online-softmax --split-input-file | FileCheck %s
// The expansion lowers and runs on the host (bounds, regions, tanh):
// RUN: attn-opt %s --attn-online-softmax --split-input-file --convert-attn-to-llvm-cpu | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: attn.
// LLVM-NOT: affine.
// LLVM: llvm.intr.tanh

// Variants (SPEC.md section 1.1) in the expansion of a program. Row i sees
// keys i + off - L <= j <= i + off + U (U = 0 under causal, R otherwise).
// For the program's first row r0 = qb * block_m and last valid row
// r1 = min(r0 + block_m, Tq) - 1, the key loop runs over the blocks
//   start = max(0, floor((r0 + off - L) / bn)),
//   end   = min(ceil(Tk / bn), floor((r1 + off + U) / bn) + 1),
// and the blocks every row sees entirely run unmasked:
//   fullStart = min(floor(Tk / bn), ceil((r1 + off - L) / bn)),
//   fullEnd   = min(floor(Tk / bn), floor((r0 + off + U + 1) / bn)),
// clamped into [start, end] (fullStart also to floor(Tk / bn): the left
// edge's blocks are whole and load K and V without a tail): loops
// [start, fullStart) masked,
// [fullStart, fullEnd) unmasked, [fullEnd, end) masked.

// Causal bottom_right (off = Tk - Tq) with a window of 100 keys to the left;
// block_m = 64, block_n = 32; s0 = Tq, s1 = Tk.
// CHECK-DAG:   #[[START:.*]] = affine_map<(d0)[s0, s1] -> (0, (d0 * 64 - s0 + s1 - 100) floordiv 32)>
// CHECK-DAG:   #[[END:.*]] = affine_map<(d0)[s0, s1] -> (s1 ceildiv 32, (d0 * 64 - s0 + s1 + 63) floordiv 32 + 1, (s1 - 1) floordiv 32 + 1)>
// CHECK-DAG:   #[[FULL_START:.*]] = affine_map<(d0)[s0, s1] -> (s1 floordiv 32, (d0 * 64 - s0 + s1 - 37) ceildiv 32, (s1 - 101) ceildiv 32)>
// CHECK-DAG:   #[[FULL_END:.*]] = affine_map<(d0)[s0, s1] -> (s1 floordiv 32, (d0 * 64 - s0 + s1 + 1) floordiv 32)>
// CHECK-LABEL: func @causal_window
// CHECK-SAME:    %[[QB:[a-z0-9]+]]: index) {
// CHECK-DAG:     %[[TQ:.*]] = memref.dim %{{.*}}, %c2 : memref<?x4x?x64xf16>
// CHECK-DAG:     %[[TK:.*]] = memref.dim %{{.*}}, %c2 : memref<?x2x?x64xf16>
// CHECK:         %[[S:.*]] = affine.max #[[START]](%[[QB]])[%[[TQ]], %[[TK]]]
// CHECK:         %[[E:.*]] = affine.min #[[END]](%[[QB]])[%[[TQ]], %[[TK]]]
// CHECK:         %[[FS0:.*]] = affine.min #[[FULL_START]](%[[QB]])[%[[TQ]], %[[TK]]]
// CHECK:         %[[FE0:.*]] = affine.min #[[FULL_END]](%[[QB]])[%[[TQ]], %[[TK]]]
// CHECK:         %[[FS1:.*]] = arith.minsi %[[FS0]], %[[E]]
// CHECK:         %[[FS:.*]] = arith.maxsi %[[S]], %[[FS1]]
// CHECK:         %[[FE1:.*]] = arith.minsi %[[FE0]], %[[E]]
// CHECK:         %[[FE:.*]] = arith.maxsi %[[FS]], %[[FE1]]
// Left edge blocks: whole K and V tiles (no tail), the causal limit
// (j < min(Tk, i + off + 1)) and the window's first key
// (j >= i + off - 100), one compare each.
// CHECK:         scf.for %{{.*}} = %[[S]] to %[[FS]]
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      memref.subview %{{.*}} [1, 1, 32, 64] [1, 1, 1, 1] : memref<?x2x?x64xf16> to memref<32x64xf16
// CHECK:           linalg.generic
// CHECK:             arith.cmpi slt
// CHECK:             arith.cmpi sge
// CHECK:             arith.select
// Full blocks: no compare, the scale folded into the exponent.
// CHECK:         scf.for %{{.*}} = %[[FS]] to %[[FE]]
// CHECK-NOT:       arith.cmpi
// CHECK:           math.fma
// Diagonal and tail blocks.
// CHECK:         scf.for %{{.*}} = %[[FE]] to %[[E]]
// CHECK:             arith.cmpi slt
// CHECK:             arith.cmpi sge
func.func @causal_window(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<bottom_right>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32, window = #attn.window<left = 100, right = 0>} : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// -----

// A window on both sides without causal (off = 0): 16 keys left, 8 right.
// CHECK-DAG:   #[[START:.*]] = affine_map<(d0)[s0, s1] -> (0, d0 * 2 - 1)>
// CHECK-DAG:   #[[END:.*]] = affine_map<(d0)[s0, s1] -> (s1 ceildiv 32, d0 * 2 + 3, (s0 + 7) floordiv 32 + 1)>
// CHECK-DAG:   #[[FULL_START:.*]] = affine_map<(d0)[s0, s1] -> (s1 floordiv 32, (d0 * 64 + 47) ceildiv 32, (s0 - 17) ceildiv 32)>
// CHECK-DAG:   #[[FULL_END:.*]] = affine_map<(d0)[s0, s1] -> (s1 floordiv 32, d0 * 2)>
// CHECK-LABEL: func @window_both_sides
// CHECK:         affine.max #[[START]]
// CHECK:         affine.min #[[END]]
// CHECK:         affine.min #[[FULL_START]]
// CHECK:         affine.min #[[FULL_END]]
// The right side: j < min(Tk, i + 9); the left: j >= i - 16.
// CHECK:         scf.for
// CHECK:           %[[I:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[J:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:           %[[LAST:.*]] = arith.addi %[[I]], %c9 : index
// CHECK:           %[[LIMIT:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK:           arith.cmpi slt, %[[J]], %[[LIMIT]] : index
// CHECK:           %[[FIRST:.*]] = arith.addi %[[I]], %c-16 : index
// CHECK:           arith.cmpi sge, %[[J]], %[[FIRST]] : index
func.func @window_both_sides(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32, window = #attn.window<left = 16, right = 8>} : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// -----

// softcap and an ALiBi score_mod: every block's scores in natural units,
//   s = 30 * tanh((0.125 / 30) * (Q K^T)) + slopes[h] * (j - i),
// then S = log2(e) * s for the exponent (the scale is not folded).
// CHECK-LABEL: func @softcap_alibi
// CHECK-SAME:    %[[SLOPES:[a-z0-9]+]]: memref<4xf32>, %{{[a-z0-9]+}}: index, %[[H:[a-z0-9]+]]: index
// CHECK-DAG:     %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG:     %[[CAP:.*]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG:     %[[SCALE_CAP:.*]] = arith.constant 0.00416666688 : f32
// Full blocks.
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK:           ^bb0(%[[QK:[a-z0-9_]+]]: f32):
// CHECK:             %[[IC:.*]] = arith.minsi
// CHECK:             %[[JC:.*]] = arith.minsi
// CHECK:             %[[D:.*]] = arith.mulf %[[QK]], %[[SCALE_CAP]] : f32
// CHECK:             %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK:             %[[C:.*]] = arith.mulf %[[CAP]], %[[T]] : f32
// CHECK:             %[[SLOPE:.*]] = memref.load %[[SLOPES]][%[[H]]] : memref<4xf32>
// CHECK:             arith.subi %[[JC]], %[[IC]] : index
// CHECK:             %[[MOD:.*]] = arith.addf %[[C]], %{{.*}} : f32
// CHECK:             %[[EXP2:.*]] = arith.mulf %[[MOD]], %[[LOG2E]] : f32
// CHECK:             linalg.yield %[[EXP2]] : f32
// P = exp2(S - mu), no fma with the scale.
// CHECK-NOT:       math.fma
// CHECK:         scf.for
func.func @softcap_alibi(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %slopes: memref<4xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v captures(%slopes)) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32, softcap = 30.0 : f32}
    score_mod {
    ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %j: index):
      %slope = memref.load %slopes[%hh] : memref<4xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %t = arith.addf %s, %bias : f32
      attn.yield %t : f32
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> captures memref<4xf32> outs memref<?x4x?x64xf16>
  return
}

// -----

// A mask tensor and a document mask_mod under causal: any key may be
// removed, so one masked loop over the causal blocks, without a block-skip
// check; the key is kept when the causal limit, the mask (not -inf) and
// doc[b, i] == doc[b, j] all keep it, with i and j clamped into Tq and Tk.
// CHECK-LABEL: func @document
// CHECK-SAME:    %[[M:[a-z0-9]+]]: memref<?x?xf16>, %[[DOC:[a-z0-9]+]]: memref<?x?xi32>, %[[B:[a-z0-9]+]]: index
// CHECK:         %[[S:.*]] = affine.max
// CHECK:         %[[E:.*]] = affine.min
// CHECK-NOT:     scf.for
// CHECK:         scf.for %{{.*}} = %[[S]] to %[[E]]
// CHECK-NOT:       scf.if
// CHECK:           %[[CAUSAL:.*]] = arith.cmpi slt
// CHECK:           memref.load %[[M]]
// CHECK:           %[[KEEP:.*]] = arith.andi %[[CAUSAL]], %{{.*}} : i1
// CHECK:           %[[IC:.*]] = arith.minsi
// CHECK:           %[[JC:.*]] = arith.minsi
// CHECK:           %[[DI:.*]] = memref.load %[[DOC]][%[[B]], %[[IC]]] : memref<?x?xi32>
// CHECK:           %[[DJ:.*]] = memref.load %[[DOC]][%[[B]], %[[JC]]] : memref<?x?xi32>
// CHECK:           %[[SAME:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK:           %[[ALL:.*]] = arith.andi %[[KEEP]], %[[SAME]] : i1
// CHECK:           arith.select %[[ALL]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @document(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %m: memref<?x?xf16>, %doc: memref<?x?xi32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v mask(%m) captures(%doc)) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32}
    mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index):
      %di = memref.load %doc[%bb, %i] : memref<?x?xi32>
      %dj = memref.load %doc[%bb, %j] : memref<?x?xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> mask memref<?x?xf16> captures memref<?x?xi32> outs memref<?x4x?x64xf16>
  return
}

// -----

// A mask_mod of index arithmetic and compares is classified per block on
// intervals: rows i in [r0, r1] (r1 the last valid row), keys j in
// [c0, c1] (c1 = min(c0 + 31, Tk - 1)). Prefix-LM, j < 20 || j <= i:
//   may keep = c0 < 20 || c0 <= r1,   may drop = c1 >= 20 && c1 > r0.
// A scan of "may keep" over the bounds gives [first, last), into which
// every loop bound is clamped; in the loops, a block it cannot keep is
// skipped and a whole block it cannot drop runs without the mask_mod.
// CHECK-LABEL: func @prefix_lm
// CHECK:         %[[P:.*]] = arith.constant 20 : index
// CHECK:         %[[R0:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK:         %[[R63:.*]] = arith.addi %[[R0]], %c63 : index
// CHECK:         %[[R1:.*]] = arith.minsi %[[R63]], %{{.*}} : index
// CHECK:         %[[SCAN:.*]]:2 = scf.for %[[SB:.*]] = %[[S:.*]] to %[[E:.*]] step %c1 iter_args(%[[F:.*]] = %[[E]], %[[L:.*]] = %[[S]])
// CHECK:           %[[SC0:.*]] = arith.muli %[[SB]], %c32 : index
// CHECK:           %[[ST1:.*]] = arith.cmpi slt, %[[SC0]], %[[P]] : index
// CHECK:           %[[ST2:.*]] = arith.cmpi sle, %[[SC0]], %[[R1]] : index
// CHECK:           %[[SKEEP:.*]] = arith.ori %[[ST1]], %[[ST2]] : i1
// CHECK:           %[[SMIN:.*]] = arith.minsi %[[F]], %[[SB]] : index
// CHECK:           arith.select %[[SKEEP]], %[[SMIN]], %[[F]] : index
// CHECK:           %[[SNEXT:.*]] = arith.addi %[[SB]], %c1 : index
// CHECK:           arith.select %[[SKEEP]], %[[SNEXT]], %[[L]] : index
// CHECK:         %[[FIRST:.*]] = arith.maxsi %[[S]], %[[SCAN]]#0 : index
// CHECK:         %[[LO:.*]] = arith.maxsi %[[S]], %[[FIRST]] : index
// CHECK:         %[[START:.*]] = arith.minsi %[[LO]], %[[SCAN]]#1 : index
// CHECK:         scf.for %{{.*}} = %[[START]] to
// Whole blocks:
// CHECK:         scf.for %[[KB:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[C0:.*]] = arith.muli %[[KB]], %c32 : index
// CHECK:           %[[C1:.*]] = arith.minsi
// CHECK:           %[[T1:.*]] = arith.cmpi slt, %[[C0]], %[[P]] : index
// CHECK:           %[[F1:.*]] = arith.cmpi sge, %[[C1]], %[[P]] : index
// CHECK:           %[[T2:.*]] = arith.cmpi sle, %[[C0]], %[[R1]] : index
// CHECK:           %[[F2:.*]] = arith.cmpi sgt, %[[C1]], %[[R0]] : index
// CHECK:           %[[KEEP:.*]] = arith.ori %[[T1]], %[[T2]] : i1
// CHECK:           %[[DROP:.*]] = arith.andi %[[F1]], %[[F2]] : i1
// CHECK:           scf.if %[[KEEP]] {
// CHECK:             scf.if %[[DROP]] {
// CHECK:               arith.cmpi sle
// CHECK:               arith.ori
// CHECK:               arith.select
// CHECK:             } else {
// CHECK-NEXT:        }
// CHECK:             math.exp2
// Key tail:
// CHECK:         scf.for
// CHECK:           scf.if
func.func @prefix_lm(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  %prefix = arith.constant 20 : index
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32}
    mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index):
      %in = arith.cmpi slt, %j, %prefix : index
      %seen = arith.cmpi sle, %j, %i : index
      %keep = arith.ori %in, %seen : i1
      attn.yield %keep : i1
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// -----

// A data-reading mask_mod's block map: a scan of the map row over the
// causal bounds clamps the key loop to the blocks it keeps, and a removed
// block inside is skipped.
// CHECK-LABEL: func @document_map
// CHECK:         %[[SCAN:.*]]:2 = scf.for %[[SB:.*]] = %[[S:.*]] to %[[E:.*]] step %c1 iter_args
// CHECK:           %[[SC:.*]] = memref.load %[[MAP:.*]][%{{.*}}, %c0, %{{.*}}, %[[SB]]] : memref<?x1x?x?xi8>
// CHECK:           arith.cmpi ne, %[[SC]], %c0_i8 : i8
// CHECK:         %[[FIRST:.*]] = arith.maxsi %[[S]], %[[SCAN]]#0 : index
// CHECK:         scf.for %[[KB:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK:           %[[C:.*]] = memref.load %[[MAP]][%{{.*}}, %c0, %{{.*}}, %[[KB]]] : memref<?x1x?x?xi8>
// CHECK:           %[[LIVE:.*]] = arith.cmpi ne, %[[C]], %c0_i8 : i8
// CHECK:           scf.if %[[LIVE]] {
func.func @document_map(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %doc: memref<?x?xi32>, %map: memref<?x1x?x?xi8>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v block_map(%map) captures(%doc)) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32}
    mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index):
      %di = memref.load %doc[%bb, %i] : memref<?x?xi32>
      %dj = memref.load %doc[%bb, %j] : memref<?x?xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      attn.yield %same : i1
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> block_map memref<?x1x?x?xi8> captures memref<?x?xi32> outs memref<?x4x?x64xf16>
  return
}

// -----

// Unsigned compares are classified as the signed ones where both sides'
// lower bounds are non-negative, and may be either elsewhere:
//   may keep(j ult 20) = (c0 < 20) || !(c0 >= 0 && 20 >= 0).
// CHECK-LABEL: func @unsigned_prefix
// CHECK:         scf.for %[[SB:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK:           %[[C0:.*]] = arith.muli %[[SB]], %c32 : index
// CHECK:           %[[N1:.*]] = arith.cmpi sge, %[[C0]], %c0 : index
// CHECK:           %[[N2:.*]] = arith.cmpi sge, %c20, %c0 : index
// CHECK:           %[[BOTH:.*]] = arith.andi %[[N1]], %[[N2]] : i1
// CHECK:           %[[UNKNOWN:.*]] = arith.xori %[[BOTH]], %true : i1
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[C0]], %c20 : index
// CHECK:           arith.ori %[[LT]], %[[UNKNOWN]] : i1
func.func @unsigned_prefix(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  %prefix = arith.constant 20 : index
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "cpu">, scale = 0.125 : f32}
    mask_mod {
    ^bb0(%bb: index, %hh: index, %i: index, %j: index):
      %in = arith.cmpi ult, %j, %prefix : index
      %seen = arith.cmpi ule, %j, %i : index
      %keep = arith.ori %in, %seen : i1
      attn.yield %keep : i1
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// RUN: attn-opt %s --attn-online-softmax --split-input-file --verify-each | FileCheck %s

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// One program of a causal (top_left) f16 attention, expanded into the online
// softmax over key blocks of block_n = 8 keys.

// CHECK-LABEL: func @causal_program
// CHECK-SAME:    (%[[Q:.*]]: memref<?x4x?x32xf16>, %[[K:.*]]: memref<?x2x?x32xf16>, %[[V:.*]]: memref<?x2x?x32xf16>, %[[O:.*]]: memref<?x4x?x32xf16>, %[[B:.*]]: index, %[[H:.*]]: index, %[[QB:.*]]: index)
// c = 0.25 * log2(e) = 0.3607; the lazy-rescale threshold 8 / c = 22.18.
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[TAU:.*]] = arith.constant 22.18{{[0-9]*}} : f32
// CHECK-DAG:     %[[NEGC:.*]] = arith.constant -0.3606{{[0-9]*}} : f32
// CHECK-DAG:     %[[C:.*]] = arith.constant 0.3606{{[0-9]*}} : f32
// GQA: kv_head = h / (Hq / Hkv).
// CHECK:         %[[GROUP:.*]] = arith.divui
// CHECK:         %[[KVH:.*]] = arith.divui %[[H]], %[[GROUP]]
// row0 = qb * block_m; rows = min(block_m, Tq - row0).
// CHECK:         %[[ROW0:.*]] = arith.muli %[[QB]], %c16
// CHECK:         %[[ROWS:.*]] = arith.minsi %c16,
// Block buffers: Q tile in the input type, S / m / l / acc in f32.
// CHECK-DAG:     %[[QT:.*]] = memref.alloca() : memref<16x32xf16>
// CHECK-DAG:     %[[KT:.*]] = memref.alloca() : memref<8x32xf16>
// CHECK-DAG:     %[[VT:.*]] = memref.alloca() : memref<8x32xf16>
// CHECK-DAG:     %[[S:.*]] = memref.alloca() : memref<16x8xf32>
// CHECK-DAG:     %[[ACC:.*]] = memref.alloca() : memref<16x32xf32>
// CHECK-NOT:     memref<i1>
// Q rows past Tq are zero.
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[QT]]
// CHECK:         memref.subview %[[Q]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 32]
// CHECK:         linalg.copy
// m = -inf, l = 0, acc = 0.
// CHECK:         linalg.fill ins(%[[NEGINF:.*]] : f32)
// CHECK:         linalg.fill ins(%[[ZERO:.*]] : f32)
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[ACC]]
// Blocks to visit: min(ceil(Tk/8), floor((row0 + rows - 1) / 8) + 1); later
// blocks are above the diagonal for every row and never loaded.
// CHECK:         %[[NB:.*]] = arith.ceildivsi %[[TK:.*]], %c8
// CHECK:         %[[FULLTK:.*]] = arith.divsi %[[TK]], %c8
// CHECK:         arith.floordivsi
// CHECK:         %[[NVISIT:.*]] = arith.minsi %{{.*}}, %[[NB]]
// Unmasked blocks: last key visible from the first row: floor((row0+1)/8).
// CHECK:         arith.floordivsi
// CHECK:         %[[NFULL0:.*]] = arith.minsi %[[FULLTK]],
// CHECK:         %[[NFULL:.*]] = arith.minsi %[[NFULL0]], %[[NVISIT]]
// Loop 1: blocks below the diagonal, no mask at all.
// CHECK:         scf.for %[[KB:.*]] = %c0 to %[[NFULL]] step %c1 {
// CHECK:           %[[COL0:.*]] = arith.muli %[[KB]], %c8
// K/V block of the KV head, full size.
// CHECK:           memref.subview %[[K]][%[[B]], %[[KVH]], %[[COL0]], 0] [1, 1, 8, 32]
// CHECK:           memref.subview %[[V]][%[[B]], %[[KVH]], %[[COL0]], 0] [1, 1, 8, 32]
// S = Q K^T in f32.
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[QT]], %[[KT]] : memref<16x32xf16>, memref<8x32xf16>) outs(%[[S]]
// CHECK:             arith.extf
// CHECK:             arith.mulf
// CHECK:             arith.addf
// The scale (c = 0.25 * log2(e) > 0) is folded into the exponent: S is
// not scaled, the running max is taken on Q K^T.
// CHECK-NEXT:        linalg.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      linalg.copy
// m_new = max(m_old, rowmax(S)).
// CHECK-NEXT:      linalg.generic
// CHECK:             arith.maximumf
// Lazy rescale: the reference max m moves only when the row max exceeds
// it by more than 8 / c (2^8 in P's units): grow = rowmax > m + 8 / c;
// m_new = grow ? rowmax : m; mu = (m_new == -inf) ? 0 : m_new;
// offset = -c * mu; alpha = grow ? exp2(fma(m_old, c, offset)) : 1.
// CHECK:           linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %[[OFFROW:.*]] : memref<16xf32>, memref<16xf32>, memref<16xf32>)
// CHECK-NEXT:      ^bb0(%[[RMAX:.*]]: f32, %[[MOLD:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:        %[[LIMIT:.*]] = arith.addf %[[MOLD]], %[[TAU]] : f32
// CHECK-NEXT:        %[[GROW:.*]] = arith.cmpf ogt, %[[RMAX]], %[[LIMIT]]
// CHECK-NEXT:        %[[MNEW:.*]] = arith.select %[[GROW]], %[[RMAX]], %[[MOLD]]
// CHECK-NEXT:        %[[ISINF:.*]] = arith.cmpf oeq, %[[MNEW]], %[[NEGINF]]
// CHECK-NEXT:        %[[MU:.*]] = arith.select %[[ISINF]], %[[ZERO]], %[[MNEW]]
// CHECK-NEXT:        %[[OFF:.*]] = arith.mulf %[[MU]], %[[NEGC]] : f32
// CHECK-NEXT:        %[[MC:.*]] = arith.mulf %[[MOLD]], %[[C]] : f32
// CHECK-NEXT:        %[[AE:.*]] = arith.addf %[[MC]], %[[OFF]] : f32
// CHECK-NEXT:        %[[EXP:.*]] = math.exp2 %[[AE]]
// CHECK-NEXT:        %[[ALPHA:.*]] = arith.select %[[GROW]], %[[EXP]], %[[ONE]] : f32
// CHECK-NEXT:        linalg.yield %[[MNEW]], %[[ALPHA]], %[[OFF]]
// P = exp2(fma(S, c, offset)): one fma per score in 16-bit kernels (f32
// ones round S * c first, below).
// CHECK:           linalg.generic {{.*}} ins(%[[OFFROW]] : memref<16xf32>) outs(%[[S]] : memref<16x8xf32>)
// CHECK-NEXT:      ^bb0(%[[OFFV:.*]]: f32, %[[SV:.*]]: f32):
// CHECK-NEXT:        %[[PE:.*]] = math.fma %[[SV]], %[[C]], %[[OFFV]] : f32
// CHECK-NEXT:        math.exp2 %[[PE]]
// l = alpha * l + rowsum(P).
// CHECK:           linalg.generic
// CHECK:             arith.mulf
// CHECK:           linalg.generic
// CHECK:             arith.addf
// acc = alpha * acc + P V, P rounded to f16 as the tensor cores see it.
// CHECK:           linalg.generic
// CHECK:             arith.mulf
// CHECK:           linalg.generic
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:             arith.extf
// CHECK:         }
// Loop 2: diagonal and tail blocks, masked.
// CHECK:         scf.for %[[KB2:.*]] = %[[NFULL]] to %[[NVISIT]] step %c1 {
// cols = min(8, Tk - col0); K and V zero past Tk.
// CHECK:           arith.minsi %c8
// CHECK:           linalg.fill
// CHECK:           linalg.copy
// Keep key j of row i when j < Tk and j <= i (top_left), as one compare
// j < min(Tk, i + 1); else -inf. The score is not scaled here either.
// CHECK:           linalg.generic
// CHECK:             linalg.index 0
// CHECK:             linalg.index 1
// CHECK-NOT:         arith.mulf
// CHECK:             %[[NEXT:.*]] = arith.addi %{{.*}}, %c1
// CHECK-NEXT:        %[[LIM:.*]] = arith.minsi %{{.*}}, %[[NEXT]]
// CHECK-NEXT:        arith.cmpi slt, %{{.*}}, %[[LIM]]
// CHECK-NOT:         arith.andi
// CHECK:             arith.select %{{.*}}, %{{.*}}, %[[NEGINF]]
// CHECK:         }
// O = acc * ((l == 0) ? 0 : 1 / l), once after the loop: one division per
// row, a multiply per element.
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[L:.*]] : memref<16xf32>) outs(%[[L]] : memref<16xf32>)
// CHECK:           arith.cmpf oeq
// CHECK:           arith.divf %cst{{.*}}, %
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[L]] : memref<16xf32>) outs(%{{.*}} : memref<16x32xf32>)
// CHECK-NOT:       arith.divf
// CHECK:           arith.mulf
// CHECK-NEXT:      linalg.yield
// Store the valid rows in f16.
// CHECK:         memref.subview %[[O]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 32]
// CHECK:         linalg.generic
// CHECK:           arith.truncf
// CHECK-NOT:     attn.block_attention
func.func @causal_program(%q: memref<?x4x?x32xf16>, %k: memref<?x2x?x32xf16>, %v: memref<?x2x?x32xf16>, %o: memref<?x4x?x32xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x2x?x32xf16>, memref<?x2x?x32xf16> outs memref<?x4x?x32xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// bottom_right: key j visible from row i when j <= i + (Tk - Tq).

// CHECK-LABEL: func @bottom_right
// CHECK:         %[[TQ:.*]] = memref.dim %{{.*}}, %c2 : memref<?x4x?x32xf32>
// CHECK:         %[[TK:.*]] = memref.dim %{{.*}}, %c2 : memref<?x4x?x32xf32>
// CHECK:         %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]]
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK:             %[[OFF1:.*]] = arith.addi %[[OFF]], %c1
// CHECK:             %[[LAST:.*]] = arith.addi %{{.*}}, %[[OFF1]]
// CHECK-NEXT:        %[[LIMIT:.*]] = arith.minsi %[[TK]], %[[LAST]]
// CHECK-NEXT:        arith.cmpi slt, %{{.*}}, %[[LIMIT]]
// f32 inputs: no rounding of P.
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to f16
func.func @bottom_right(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<bottom_right>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// A user mask can remove any key: every block is masked (the unmasked loop
// is not emitted). Each block first reduces "is any (row, key) pair
// visible" into an i1 flag; a block that the mask removes entirely (above
// the diagonal of a causal mask tensor) skips its math under scf.if; with
// one stage, its K/V loads too. A float mask adds log2(e) * bias;
// broadcast dims read index 0; padded rows and tail keys read a clamped
// index.

// CHECK-LABEL: func @float_mask
// 1 / c = 1 / (0.25 * log2(e)):
// CHECK:         %[[INVC:.*]] = arith.constant 2.77258{{[0-9]*}} : f32
// CHECK:         %[[LIVE:.*]] = memref.alloca() : memref<i1>
// CHECK:         %[[ADD:.*]] = memref.alloca() : memref<16x8xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK-NOT:     scf.for
// CHECK-NOT:       linalg.copy
// The mask is read once per block, into the term each score gets:
// log2(e) * bias, or -inf for a removed key (tail, causal, -inf bias).
// CHECK:           linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:          outs(%[[ADD]] : memref<16x8xf32>)
// CHECK:             arith.minsi
// CHECK:             arith.minsi
// CHECK:             arith.cmpi eq
// CHECK:             arith.select
// CHECK:             %[[MB:.*]] = memref.load %{{.*}} : memref<?x?xbf16>
// CHECK:             %[[MB32:.*]] = arith.extf %[[MB]] : bf16 to f32
// CHECK:             %[[VIS:.*]] = arith.cmpf une, %[[MB32]],
// CHECK:             %[[KEEP:.*]] = arith.andi %{{.*}}, %[[VIS]]
// CHECK:             %[[SCALED:.*]] = arith.mulf %[[MB32]], %cst
// CHECK:             %[[TERM:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEGINF:.*]] : f32
// CHECK:             linalg.yield %[[TERM]]
// The block is live if any term is not -inf.
// CHECK:           linalg.fill ins(%false : i1) outs(%[[LIVE]] : memref<i1>)
// CHECK:           linalg.generic {{{.*}}iterator_types = ["reduction", "reduction"]}
// CHECK-SAME:          ins(%[[ADD]] : memref<16x8xf32>) outs(%[[LIVE]] : memref<i1>)
// CHECK:             %[[VIS2:.*]] = arith.cmpf une, %{{.*}}, %[[NEGINF]]
// CHECK:             %[[ANY:.*]] = arith.ori %{{.*}}, %[[VIS2]] : i1
// CHECK:             linalg.yield %[[ANY]]
// CHECK:           %[[L:.*]] = memref.load %[[LIVE]][] : memref<i1>
// CHECK:           scf.if %[[L]] {
// CHECK:             linalg.copy
// CHECK:             linalg.copy
// CHECK:             linalg.generic
// CHECK:               arith.mulf
// The scale is folded into the exponent (c > 0): S = S + term / c, or -inf
// where the term is (even for a NaN score); exp2(fma(S, c, -c * mu)) then
// gives exp(scale * QK^T + bias - max).
// CHECK:             linalg.generic {{{.*}}} ins(%[[ADD]] : memref<16x8xf32>) outs(%{{.*}} : memref<16x8xf32>)
// CHECK-NEXT:        ^bb0(%[[T:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:          %[[REMOVED:.*]] = arith.cmpf oeq, %[[T]], %[[NEGINF]]
// CHECK-NEXT:          %[[SUM:.*]] = math.fma %[[T]], %[[INVC]], %[[S]] : f32
// CHECK-NEXT:          arith.select %[[REMOVED]], %[[NEGINF]], %[[SUM]]
// CHECK-NOT:           memref.load %{{.*}} : memref<?x?xbf16>
func.func @float_mask(%q: memref<?x4x?x32xbf16>, %k: memref<?x4x?x32xbf16>, %v: memref<?x4x?x32xbf16>, %m: memref<?x?xbf16>, %o: memref<?x4x?x32xbf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v mask(%m)) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16>, memref<?x4x?x32xbf16> mask memref<?x?xbf16> outs memref<?x4x?x32xbf16>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 2, target = "cpu">

// An i1 mask keeps the key where true: it joins the keep predicate. With
// two stages the K/V loads stay at the head of the loop body, before the
// skip check, where the GPU pipeliner issues them a block ahead.

// CHECK-LABEL: func @bool_mask
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK:           linalg.copy
// CHECK:           linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK:             %[[KEEP:.*]] = memref.load %{{.*}} : memref<1x1x?x?xi1>
// CHECK:             %[[BOTH:.*]] = arith.andi %{{.*}}, %[[KEEP]]
// CHECK:             arith.select %[[BOTH]], %cst{{.*}}, %cst{{.*}} : f32
// CHECK:           linalg.generic {{{.*}}iterator_types = ["reduction", "reduction"]}
// CHECK:           scf.if
// CHECK-NOT:         linalg.copy
// CHECK-NOT:         memref<1x1x?x?xi1>
// CHECK:           }
func.func @bool_mask(%q: memref<?x4x?x32xf16>, %k: memref<?x4x?x32xf16>, %v: memref<?x4x?x32xf16>, %m: memref<1x1x?x?xi1>, %o: memref<?x4x?x32xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v mask(%m)) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x4x?x32xf16>, memref<?x4x?x32xf16> mask memref<1x1x?x?xi1> outs memref<?x4x?x32xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// A negative scale reverses the order of the scores: the max must be taken
// on scaled scores, so S is scaled by one multiply and P = exp2(S - mu).
// (The lazy-rescale threshold is 8 in those units.)

// CHECK-LABEL: func @negative_scale
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           linalg.generic
// CHECK-NEXT:      ^bb0(%[[SV:.*]]: f32):
// CHECK-NEXT:        %[[SC:.*]] = arith.mulf %[[SV]], %cst
// CHECK-NEXT:        linalg.yield %[[SC]]
// CHECK:           arith.maximumf
// CHECK-NOT:       math.fma
// CHECK:           %[[OFF:.*]] = arith.negf
// CHECK-NEXT:      %[[AE:.*]] = arith.addf %{{.*}}, %[[OFF]]
// CHECK-NEXT:      math.exp2 %[[AE]]
// CHECK:           ^bb0(%[[OFFV:.*]]: f32, %[[SV2:.*]]: f32):
// CHECK-NEXT:        %[[PE:.*]] = arith.addf %[[SV2]], %[[OFFV]]
// CHECK-NEXT:        math.exp2 %[[PE]]
// CHECK-NOT:       math.fma
// CHECK:         return
func.func @negative_scale(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = -0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// f32 inputs: P's exponent rounds S * c before adding the offset (no fma),
// so that the row max gives exp2(0) exactly however large the scores.

// CHECK-LABEL: func @f32_exact_exponent
// CHECK:         scf.for
// CHECK:             math.exp2
// CHECK:           ^bb0(%[[OFFV:[^:]*]]: f32, %[[SV:[^:]*]]: f32):
// CHECK-NEXT:        %[[SC:.*]] = arith.mulf %[[SV]], %{{.*}} : f32
// CHECK-NEXT:        %[[PE:.*]] = arith.addf %[[SC]], %[[OFFV]] : f32
// CHECK-NEXT:        math.exp2 %[[PE]]
// CHECK-NOT:       math.fma
// CHECK:         return
func.func @f32_exact_exponent(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "sm_90a">

// A GPU target: each diagonal block ORs "row i sees key col0" over the
// program's rows (the first key of the block: a row that sees any key of
// it sees col0) into a flag, twice: Q K^T runs under the first, the rest
// of the block's math under the second. Both ORs over the whole program are
// marked true (attn.program_live: the loop holds only blocks the last row
// sees); the GPU lowering ORs each over a warp's rows where what it guards
// is per warp, so a warp above the block skips it, and takes it as true
// where it guards a warpgroup's wgmma. The unmasked loop has none, and the
// CPU target (@causal_program above) none at all.
// CHECK-LABEL: func @causal_gpu
// CHECK:         %[[FLAG:.*]] = memref.alloca() : memref<i1>
// CHECK-NEXT:    %[[QKFLAG:.*]] = memref.alloca() : memref<i1>
// CHECK:         scf.for
// CHECK-NOT:       memref<i1>
// CHECK:         }
// CHECK:         scf.for %[[KB:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK:           %[[COL0:.*]] = arith.muli %[[KB]], %c8
// CHECK:           linalg.fill ins(%false : i1) outs(%[[QKFLAG]] : memref<i1>)
// CHECK:           linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}} : memref<16xf32>) outs(%[[QKFLAG]] : memref<i1>) attrs = {attn.program_live} {
// CHECK-NEXT:      ^bb0(%{{.*}}: f32, %[[OR:.*]]: i1):
// CHECK-NEXT:        %[[I:.*]] = linalg.index 0
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %{{.*}}, %[[I]]
// CHECK-NEXT:        %[[LAST:.*]] = arith.addi %[[ROW]], %{{.*}}
// CHECK-NEXT:        %[[LIMIT:.*]] = arith.minsi %{{.*}}, %[[LAST]]
// CHECK-NEXT:        %[[SEES:.*]] = arith.cmpi slt, %[[COL0]], %[[LIMIT]]
// CHECK-NEXT:        %[[ANY:.*]] = arith.ori %[[OR]], %[[SEES]]
// CHECK-NEXT:        linalg.yield %[[ANY]]
// CHECK:           %[[QKLIVE:.*]] = memref.load %[[QKFLAG]][]
// CHECK-NEXT:      scf.if %[[QKLIVE]] {
// CHECK-NEXT:        linalg.fill
// CHECK-NEXT:        linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:               linalg.yield
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      linalg.fill ins(%false : i1) outs(%[[FLAG]] : memref<i1>)
// CHECK-NEXT:      linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}} : memref<16xf32>) outs(%[[FLAG]] : memref<i1>) attrs = {attn.program_live} {
// CHECK:           %[[LIVE:.*]] = memref.load %[[FLAG]][]
// CHECK-NEXT:      scf.if %[[LIVE]] {
// CHECK:             arith.minsi
// CHECK-NEXT:        arith.cmpi slt
// CHECK:             math.exp2
// CHECK:             linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:               linalg.yield
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         return
func.func @causal_gpu(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "sm_90a">

// Exact f32 keeps one flag, unmarked, for both scf.if (its P V passes P
// through shared memory: the thread block's work, ORed over the program).
// CHECK-LABEL: func @causal_gpu_ieee
// CHECK:         memref.alloca() : memref<i1>
// CHECK-NOT:     memref.alloca() : memref<i1>
// CHECK-NOT:     attn.program_live
// CHECK:         %[[LIVE:.*]] = memref.load %{{.*}}[] : memref<i1>
// CHECK-NEXT:    scf.if %[[LIVE]] {
// CHECK:         scf.if %[[LIVE]] {
// CHECK:         return
func.func @causal_gpu_ieee(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #cfg, precision = #attn.precision<ieee>, scale = 0.25 : f32} : memref<?x4x?x32xf32>, memref<?x4x?x32xf32>, memref<?x4x?x32xf32> outs memref<?x4x?x32xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// The log-sum-exp of each row, after the key loops and before l is
// inverted: ln(2) * (log2(l) - offset), offset = -c * m (0 for m = -inf)
// as the step computes it; -inf where l == 0 (no kept key). The valid rows
// are stored to lse[b, h, row0 : row0 + rows].
// CHECK-LABEL: func @with_lse
// CHECK-SAME:    %[[L:[a-z0-9]*]]: memref<?x4x?xf32>, %[[B:.*]]: index, %[[H:.*]]: index, %[[QB:.*]]: index)
// CHECK-DAG:     %[[NEGC:.*]] = arith.constant -0.3606{{[0-9]*}} : f32
// CHECK-DAG:     %[[LN2:.*]] = arith.constant 0.693147{{[0-9]*}} : f32
// CHECK:         %[[ROW0:.*]] = arith.muli %[[QB]], %c16
// CHECK:         %[[ROWS:.*]] = arith.minsi %c16,
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<16xf32>, memref<16xf32>) outs(%[[LROW:.*]] : memref<16xf32>)
// CHECK-NEXT:    ^bb0(%[[SUM:.*]]: f32, %[[M:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[MU:.*]] = arith.select %{{.*}}, %{{.*}}, %[[M]]
// CHECK:           %[[OFF:.*]] = arith.mulf %[[MU]], %[[NEGC]]
// CHECK:           %[[LOG:.*]] = math.log2 %[[SUM]]
// CHECK:           %[[D:.*]] = arith.subf %[[LOG]], %[[OFF]]
// CHECK:           %[[X:.*]] = arith.mulf %[[D]], %[[LN2]]
// CHECK:           %[[EMPTY:.*]] = arith.cmpf oeq, %[[SUM]], %{{.*}}
// CHECK:           arith.select %[[EMPTY]], %{{.*}}, %[[X]]
// CHECK:         %[[TO:.*]] = memref.subview %[[L]][%[[B]], %[[H]], %[[ROW0]]] [1, 1, %[[ROWS]]] [1, 1, 1]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<?xf32, strided<[1]>>) outs(%[[TO]]
// Then O = acc / l.
// CHECK:         arith.divf
func.func @with_lse(%q: memref<?x4x?x32xf16>, %k: memref<?x2x?x32xf16>, %v: memref<?x2x?x32xf16>, %o: memref<?x4x?x32xf16>, %l: memref<?x4x?xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v) outs(%o lse(%l)) at [%b, %h, %qb] {config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x2x?x32xf16>, memref<?x2x?x32xf16> outs memref<?x4x?x32xf16> lse memref<?x4x?xf32>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// Split %s of %n reads key blocks [s * per, min((s + 1) * per, NB)), per =
// ceil(NB / n), NB = ceil(Tk / 8): both loops (unmasked, then the diagonal
// and tail blocks) are clamped to that run. Its output is f32: no truncf.
// CHECK-LABEL: func @key_split
// CHECK-SAME:    %[[S:[a-z0-9]*]]: index, %[[N:[a-z0-9]*]]: index)
// CHECK:         %[[NB:.*]] = arith.ceildivsi %[[TK:.*]], %c8
// CHECK:         %[[PER:.*]] = arith.ceildivsi %[[NB]], %[[N]]
// CHECK:         %[[START:.*]] = arith.muli %[[S]], %[[PER]]
// CHECK:         %[[NEXT:.*]] = arith.addi %[[START]], %[[PER]]
// CHECK:         %[[END:.*]] = arith.minsi %[[NEXT]], %[[NB]]
// CHECK:         %[[LB1:.*]] = arith.maxsi %c0{{.*}}, %[[START]]
// CHECK:         %[[UB1:.*]] = arith.minsi %{{.*}}, %[[END]]
// CHECK:         scf.for %{{.*}} = %[[LB1]] to %[[UB1]] step %c1
// CHECK:         %[[LB2:.*]] = arith.maxsi %{{.*}}, %[[START]]
// CHECK:         %[[UB2:.*]] = arith.minsi %{{.*}}, %[[END]]
// CHECK:         scf.for %{{.*}} = %[[LB2]] to %[[UB2]] step %c1
// CHECK:         math.log2
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @key_split(%q: memref<?x4x?x32xf16>, %k: memref<?x2x?x32xf16>, %v: memref<?x2x?x32xf16>, %o: memref<?x4x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>, %l: memref<?x4x?xf32, strided<[?, ?, 1], offset: ?>>, %b: index, %h: index, %s: index, %n: index) {
  %c0 = arith.constant 0 : index
  attn.block_attention ins(%q, %k, %v) outs(%o lse(%l)) at [%b, %h, %c0] key_split [%s of %n] {causal = #attn.causal<bottom_right>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x2x?x32xf16>, memref<?x2x?x32xf16> outs memref<?x4x?x32xf32, strided<[?, ?, ?, 1], offset: ?>> lse memref<?x4x?xf32, strided<[?, ?, 1], offset: ?>>
  return
}

// -----

#cfg = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// kv_lengths: the batch's key count, clamped to 0..Tk, is Tk for the whole
// program: the key blocks, the tail and the bottom_right offset.
// CHECK-LABEL: func @kv_lengths
// CHECK-SAME:    %[[KL:[a-z0-9]*]]: memref<?xi32>, %[[O:.*]]: memref<?x4x?x32xf16>, %[[B:.*]]: index, %[[H:.*]]: index, %[[QB:.*]]: index)
// CHECK:         %[[TK:.*]] = memref.dim %{{.*}}, %c2 : memref<?x2x?x32xf16>
// CHECK:         %[[LEN32:.*]] = memref.load %[[KL]][%[[B]]] : memref<?xi32>
// CHECK:         %[[LEN:.*]] = arith.index_cast %[[LEN32]] : i32 to index
// CHECK:         %[[POS:.*]] = arith.maxsi %[[LEN]], %c0
// CHECK:         %[[KEYS:.*]] = arith.minsi %[[POS]], %[[TK]]
// CHECK:         arith.ceildivsi %[[KEYS]], %c8
// The bottom_right offset: keys - Tq.
// CHECK:         arith.subi %[[KEYS]], %{{.*}}
// CHECK:         scf.for
// CHECK:         return
func.func @kv_lengths(%q: memref<?x4x?x32xf16>, %k: memref<?x2x?x32xf16>, %v: memref<?x2x?x32xf16>, %kl: memref<?xi32>, %o: memref<?x4x?x32xf16>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v kv_lengths(%kl)) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<bottom_right>, config = #cfg, scale = 0.25 : f32} : memref<?x4x?x32xf16>, memref<?x2x?x32xf16>, memref<?x2x?x32xf16> kv_lengths memref<?xi32> outs memref<?x4x?x32xf16>
  return
}

// -----

// No block_attention: nothing changes.
// CHECK-LABEL: func @nothing
// CHECK-NEXT:    return
func.func @nothing() {
  return
}

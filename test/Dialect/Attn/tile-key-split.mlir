// Split-KV (flash-decoding) in --attn-tile: a static Tq that fits one query
// block splits the keys over S programs per (batch, head), S evaluated from
// the launch's sizes; GPUs split by default (264 program slots), the host does
// not.
// RUN: attn-opt %s --attn-tile --split-input-file | FileCheck %s --check-prefix=HOST
// RUN: attn-opt %s --attn-tile="split-programs=64" --split-input-file --verify-each | FileCheck %s
// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file | FileCheck %s --check-prefix=SM90
// The split programs expand and print back:
// RUN: attn-opt %s --attn-tile="split-programs=64" --attn-online-softmax --split-input-file --verify-each \
// RUN:   | attn-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: not attn-opt %s --attn-tile="split-programs=-2" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: split-programs must be >= -1

// HOST-LABEL: func @decode
// HOST-NOT:     key_split
// HOST-NOT:     attn.split_combine

// S = min(ceil(Tk / (4 * block_n)), ceil(64 / (B * Hq / p))), block_n = 32:
// the 4 query heads of a KV head (Tq 3) are packed into one program's rows,
// p = 4.
// CHECK-LABEL: func @decode
// CHECK:         %[[TK:.*]] = memref.dim %{{.*}}, %c2 : memref<?x2x?x64xf16
// CHECK:         %[[BYKEYS:.*]] = arith.ceildivui %[[TK]], %c128
// CHECK:         %[[BH:.*]] = arith.muli %{{.*}}, %c2
// CHECK:         %[[BYPROGRAMS:.*]] = arith.ceildivui %c64, %[[BH]]
// CHECK:         %[[S:.*]] = arith.minui %[[BYKEYS]], %[[BYPROGRAMS]]
// Each split's softmax (normalized O, f32) and log-sum-exp.
// CHECK:         %[[PO:.*]] = memref.alloc(%[[S]], %{{.*}}) {attn.workspace = "split_output"} : memref<?x?x8x3x64xf32>
// CHECK:         %[[PL:.*]] = memref.alloc(%[[S]], %{{.*}}) {attn.workspace = "split_lse"} : memref<?x?x8x3xf32>
// CHECK:         scf.forall (%[[IB:.*]], %[[IH:.*]], %[[IS:.*]]) in (%{{.*}}, 2, %[[S]]) {
// CHECK:           %[[VO:.*]] = memref.subview %[[PO]][%[[IS]], 0, 0, 0, 0] [1, %{{.*}}, 8, 3, 64]
// CHECK:           %[[VL:.*]] = memref.subview %[[PL]][%[[IS]], 0, 0, 0] [1, %{{.*}}, 8, 3]
// CHECK:           attn.block_attention {{.*}} outs(%[[VO]] lse(%[[VL]])) at[%[[IB]], %[[IH]], %c0] key_split[%[[IS]] of %[[S]]]
// CHECK-SAME:        packed_heads = 4
// CHECK:         } {attn.config = {{.*}}, attn.key_splits = array<i64: 128, 64>}
// The combine: per row, m = max_s L_s, w_s = exp(L_s - m), O = sum_s w_s O_s / sum_s w_s.
// CHECK:         scf.forall (%[[CB:.*]], %[[CH:.*]], %[[CI:.*]]) in (%{{.*}}, 8, 3) {
// CHECK:           %[[M:.*]] = scf.for %{{.*}} = %c0 to %[[S]] step %c1 iter_args
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %[[S]] step %c1 iter_args
// CHECK:             math.exp
// CHECK:           scf.for %[[D:.*]] = %c0 to %c64 step %c1 {
// CHECK:             scf.for %{{.*}} = %c0 to %[[S]]
// CHECK:               memref.load %[[PO]]
// CHECK:               math.fma
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:             memref.store %{{.*}}, %[[O:.*]][%[[CB]], %[[CH]], %[[CI]], %[[D]]]
// CHECK:           } {attn.thread_loop}
// lse = m + log(sum), -inf where every split was empty.
// CHECK:           math.log %[[SUM]]
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[CB]], %[[CH]], %[[CI]]] : memref<?x8x3xf32>
// CHECK:         } {attn.split_combine}
// CHECK:         memref.dealloc %[[PO]]
// CHECK:         memref.dealloc %[[PL]]

// SM90-LABEL: func @decode
// SM90:         arith.ceildivui %c264,
// SM90:         attn.key_splits = array<i64: 256, 264>
// SM90:         attn.split_combine

// ROUNDTRIP-LABEL: func @decode
// ROUNDTRIP:       scf.for
// ROUNDTRIP:       attn.split_combine
func.func @decode(%q: tensor<?x8x3x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x3x64xf16>, tensor<?x8x3xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x3x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
  return %o, %l : tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
}

// -----

// A dynamic Tq, or one of several query blocks, keeps one program per query
// block.
// CHECK-LABEL: func @prefill
// CHECK-NOT:     key_split
// CHECK-NOT:     attn.split_combine
// SM90-LABEL: func @prefill
// SM90-NOT:     key_split
func.func @prefill(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

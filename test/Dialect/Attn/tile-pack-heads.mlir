// GQA decode packing in --attn-tile: with one query row per head, the g
// query heads of a KV head are the g rows of one program. The grid covers
// (batch, KV head, split), each program reading B x Hq/g x g views of the
// query, the output and the log-sum-exp (Hq expanded to (Hkv, g), the unit
// query dim dropped), without the causal alignment (bottom_right keeps
// every key of the one row).
// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file --verify-each | FileCheck %s
// RUN: attn-opt %s --attn-tile --split-input-file --verify-each | FileCheck %s --check-prefix=HOST
// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file | FileCheck %s --check-prefix=NOPACK
// The packed programs expand and print back:
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --split-input-file --verify-each \
// RUN:   | attn-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ROUNDTRIP

// S = min(ceil(Tk / 256), ceil(264 / (B * Hkv))): the programs count KV heads.
// CHECK-LABEL: func @decode
// CHECK:         %[[Q:.*]] = bufferization.to_buffer %arg0
// CHECK:         %[[BH:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:         %[[S:.*]] = arith.minui
// CHECK:         %[[PO:.*]] = memref.alloc(%[[S]], %{{.*}}) {attn.workspace = "split_output"} : memref<?x?x32x1x128xf32>
// CHECK:         scf.forall (%[[IB:.*]], %[[IH:.*]], %[[IS:.*]]) in (%{{.*}}, 8, %[[S]]) {
// CHECK:           %[[QE:.*]] = memref.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 8, 4, 1, 128]
// CHECK:           %[[QP:.*]] = memref.collapse_shape %[[QE]] {{\[}}[0], [1], [2, 3], [4]]
// CHECK-SAME:        to memref<?x8x4x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK:           memref.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 8, 4, 1, 128]
// CHECK:           memref.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3]] output_shape [%{{.*}}, 8, 4, 1]
// CHECK:           attn.block_attention ins(%[[QP]], {{.*}} kv_lengths({{.*}})) outs({{.*}}) at[%[[IB]], %[[IH]], %c0] key_split[%[[IS]] of %[[S]]]
// CHECK-NOT:         causal
// CHECK-SAME:        : memref<?x8x4x128xbf16, {{.*}} outs memref<?x8x4x128xf32, {{.*}} lse memref<?x8x4xf32,
// The combine grid merges into the unpacked B x Hq x 1 output.
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 32, 1) {
// CHECK:         } {attn.split_combine}

// HOST-LABEL: func @decode
// HOST:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 8, 1) {
// HOST:           attn.block_attention {{.*}} : memref<?x8x4x128xbf16,

// ROUNDTRIP-LABEL: func @decode
// ROUNDTRIP:       attn.split_combine
func.func @decode(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %l: tensor<?xi32>) -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>, softcap = 30.0 : f32} : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %o, %lse : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}

// -----

// Where the packed rows would not all see the same keys, or a region reads
// the head or the row, each query head keeps its programs (grid y = Hq).
// Each op's programs and its combine grid: 12 grids over 32 heads.
// CHECK-LABEL: func @not_packed
// CHECK-COUNT-12: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 32, {{.*}}) {
// NOPACK-LABEL: func @not_packed
// NOPACK-NOT:     memref.expand_shape
func.func @not_packed(%q: tensor<?x32x1x64xf16>, %q3: tensor<?x32x3x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %m: tensor<?x32x1x?xi1>) -> (tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x3x64xf16>, tensor<?x32x1x64xf16>) {
  // top_left: the one row sees key 0 only.
  %o1 = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x32x1x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x32x1x64xf16>
  %o2 = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100, right = 0>} : tensor<?x32x1x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x32x1x64xf16>
  %o3 = attn.attention %q, %k, %v mask(%m) : tensor<?x32x1x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x32x1x?xi1> -> tensor<?x32x1x64xf16>
  %o4 = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %hi = arith.index_cast %h : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %t = arith.addf %s, %hf : f32
    attn.yield %t : f32
  } : tensor<?x32x1x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x32x1x64xf16>
  // Three query rows per head with a softcap.
  %o5 = attn.attention %q3, %k, %v {softcap = 30.0 : f32} : tensor<?x32x3x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x32x3x64xf16>
  // No GQA: nothing to pack.
  %o6 = attn.attention %q, %q, %q : tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16> -> tensor<?x32x1x64xf16>
  return %o1, %o2, %o3, %o4, %o5, %o6 : tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x1x64xf16>, tensor<?x32x3x64xf16>, tensor<?x32x1x64xf16>
}

// -----

// Several query rows per head (speculative decoding): p query heads of a KV
// head, the largest p dividing g with p x Tq <= block_m (64 on sm_90a, 32 on
// the host), become one program's p x Tq rows. The program reads the
// operands as they are (packed_heads: row r is query r mod Tq of head
// h * p + r / Tq) and keeps the causal alignment, which applies per row.
// g = 8, Tq = 16: p = 4 (two programs per KV head, grid y = Hq / 4 = 8);
// g = 4, Tq = 2: p = 4 (grid y = Hkv = 8). Tq = 17 is not packed.
// CHECK-LABEL: func @speculative
// CHECK:         %[[Q:.*]] = bufferization.to_buffer %arg0
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 8, %{{.*}}) {
// CHECK:           attn.block_attention ins(%[[Q]],
// CHECK-SAME:        causal = #attn.causal<bottom_right>
// CHECK-SAME:        packed_heads = 4
// CHECK-SAME:        : memref<?x32x16x64xf16,
// CHECK:         } {attn.split_combine}
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 8, %{{.*}}) {
// CHECK:           attn.block_attention
// CHECK-SAME:        causal = #attn.causal<top_left>
// CHECK-SAME:        packed_heads = 4
// CHECK:         } {attn.split_combine}
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 32, %{{.*}}) {
// CHECK-NOT:       packed_heads
// CHECK:         } {attn.split_combine}

// HOST-LABEL: func @speculative
// HOST:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 16, 1) {
// HOST:           attn.block_attention {{.*}}packed_heads = 2

// ROUNDTRIP-LABEL: func @speculative
// ROUNDTRIP:       attn.split_combine
func.func @speculative(%q: tensor<?x32x16x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>, %q2: tensor<?x32x2x64xf16>, %k8: tensor<?x8x?x64xf16>, %v8: tensor<?x8x?x64xf16>, %q17: tensor<?x32x17x64xf16>) -> (tensor<?x32x16x64xf16>, tensor<?x32x2x64xf16>, tensor<?x32x17x64xf16>) {
  %o1 = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x32x16x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x32x16x64xf16>
  %o2 = attn.attention %q2, %k8, %v8 {causal = #attn.causal<top_left>} : tensor<?x32x2x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x32x2x64xf16>
  %o3 = attn.attention %q17, %k, %v : tensor<?x32x17x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x32x17x64xf16>
  return %o1, %o2, %o3 : tensor<?x32x16x64xf16>, tensor<?x32x2x64xf16>, tensor<?x32x17x64xf16>
}

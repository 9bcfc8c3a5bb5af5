// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --split-input-file --verify-each | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --attn-online-softmax --split-input-file --verify-each | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --attn-online-softmax --split-input-file \
// RUN:   | attn-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ROUNDTRIP

// A paged KV cache (block_table): K and V are pools of pages of 16 keys.
// --attn-tile passes the table to every program; GQA decode packing (Hq 4
// over Hkv 2, one row per head) and split-KV stay, the splits counted over
// the logical keys Tk = P * page. On sm_90a the key block is the page:
// block_n = min(64, 16).
// TILE-LABEL: func @paged_decode
// TILE: %[[BT:.*]] = bufferization.to_buffer %arg4
// TILE: attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} kv_lengths(%{{.*}}) block_table(%[[BT]]))
// TILE-SAME: block_table memref<?x?xi32, strided<[?, 1], offset: ?>>
// GPU-LABEL: func @paged_decode
// GPU: %[[BT:.*]] = bufferization.to_buffer %arg4
// GPU: %[[P:.*]] = memref.dim %[[BT]], %c1
// GPU: %[[TK:.*]] = arith.muli %[[P]], %c16
// GPU: arith.ceildivui %[[TK]], %c64
// GPU: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 2, %{{.*}})
// GPU: attn.block_attention {{.*}} block_table(%[[BT]])) {{.*}} key_split
// GPU-SAME: block_m = 64, block_n = 16,

// --attn-online-softmax: Tk = P * page; each key block [col0, col0 + 8)
// lies in page bt[b, min(col0 / 16, P - 1)] (clamped to 0..NP-1; the
// column clamped so that a pipelined load ahead reads the table), from
// row col0 % 16. The table load is marked as address arithmetic.
// CHECK-LABEL: func @paged_decode
// CHECK: %[[K:.*]] = bufferization.to_buffer %arg1
// CHECK: %[[V:.*]] = bufferization.to_buffer %arg2
// CHECK: %[[BT:.*]] = bufferization.to_buffer %arg4
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %{{.*}} : index
// CHECK: %[[P:.*]] = memref.dim %[[BT]], %c1
// CHECK: %[[TK:.*]] = arith.muli %[[P]], %c16
// CHECK: scf.for %[[KB:.*]] = %c0 to
// CHECK:   %[[COL0:.*]] = arith.muli %[[KB]], %c8
// CHECK:   %[[COLUMN:.*]] = arith.divui %[[COL0]], %c16
// CHECK:   %[[P1:.*]] = memref.dim %[[BT]], %c1
// CHECK:   %[[LASTCOL:.*]] = arith.subi %[[P1]], %c1
// CHECK:   %[[SLOT:.*]] = arith.minui %[[COLUMN]], %[[LASTCOL]]
// CHECK:   %[[ID:.*]] = memref.load %[[BT]][%[[B]], %[[SLOT]]] {attn.page_lookup}
// CHECK:   %[[IDX:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:   %[[NP:.*]] = memref.dim %[[K]], %c0
// CHECK:   %[[LAST:.*]] = arith.subi %[[NP]], %c1
// CHECK:   %[[LO:.*]] = arith.maxsi %[[IDX]], %c0
// CHECK:   %[[PAGE:.*]] = arith.minsi %[[LO]], %[[LAST]]
// CHECK:   %[[ROW:.*]] = arith.remui %[[COL0]], %c16
// CHECK:   memref.subview %[[K]][%[[PAGE]], %[[KVH]], %[[ROW]], 0] [1, 1, 8, 64]
// CHECK:   memref.subview %[[V]][%[[PAGE]], %[[KVH]], %[[ROW]], 0] [1, 1, 8, 64]
// ROUNDTRIP-LABEL: func @paged_decode
// ROUNDTRIP: memref.load
func.func @paged_decode(%q: tensor<?x4x1x64xf16>, %k: tensor<?x2x16x64xf16>, %v: tensor<?x2x16x64xf16>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> tensor<?x4x1x64xf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>}
     : tensor<?x4x1x64xf16>, tensor<?x2x16x64xf16>, tensor<?x2x16x64xf16> -> tensor<?x4x1x64xf16>
  return %o : tensor<?x4x1x64xf16>
}



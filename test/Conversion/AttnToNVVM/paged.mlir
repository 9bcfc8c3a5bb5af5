// A paged KV cache (block_table) in the sm_90a kernel: the table is a
// kernel argument (a rank-2 memref after q, k, v); each key block's page id
// is one load of it, marked attn.page_lookup, that --attn-pipeline moved
// ahead with the block's copies: it stands before the TMA tensor copies of
// K and V (maps over the whole pool), in the prologue and in the key loop,
// and wgmma reads the tiles.
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s

// CHECK: gpu.func @paged_kernel(%{{.*}}: memref<?x4x?x64xbf16, {{.*}}>, %{{.*}}: memref<?x2x64x64xbf16, {{.*}}>, %{{.*}}: memref<?x2x64x64xbf16, {{.*}}>, %[[BT:.*]]: memref<?x?xi32, strided<[?, 1], offset: ?>>, %{{.*}}: memref<?x4x?x64xbf16, {{.*}}>, %[[KMAP:.*]]: !llvm.ptr, %[[VMAP:.*]]: !llvm.ptr) kernel
// The first block's page, then its copies.
// CHECK: memref.load %[[BT]][%{{.*}}, %{{.*}}] {attn.page_lookup}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]]
// In the key loop: Q K^T, then the next block's page and copies.
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// CHECK: memref.load %[[BT]][%{{.*}}, %{{.*}}] {attn.page_lookup}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]]
func.func @paged(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x64x64xbf16>, %v: tensor<?x2x64x64xbf16>, %bt: tensor<?x?xi32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) {causal = #attn.causal<top_left>}
     : tensor<?x4x?x64xbf16>, tensor<?x2x64x64xbf16>, tensor<?x2x64x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

// Packed sequences (cu_seqlens) in the sm_90a kernel: the offsets are
// kernel arguments (rank-1 memrefs after q, k, v); the program's slot is
// the heavy-first gridDim.x - 1 - blockIdx.x; the sequence lookup is a
// uniform scf.while whose steps load cu_q, before any tile is touched; the
// sequence's keys come from cu_k; K and V still come by TMA tensor copies
// (the whole packed operand's maps), and wgmma reads them.
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s

// CHECK: gpu.func @varlen_kernel(%[[Q:.*]]: memref<1x4x?x64xbf16, {{.*}}>, %{{.*}}: memref<1x2x?x64xbf16, {{.*}}>, %{{.*}}: memref<1x2x?x64xbf16, {{.*}}>, %[[CQ:.*]]: memref<?xi32, strided<[1], offset: ?>>, %[[CK:.*]]: memref<?xi32, strided<[1], offset: ?>>, %{{.*}}: memref<1x4x?x64xbf16, {{.*}}>, %[[KMAP:.*]]: !llvm.ptr, %[[VMAP:.*]]: !llvm.ptr) kernel
// CHECK-SAME: attn.kernel_args = array<i32: 0, 1, 2, 3, 4, -1, -1000, -1001>
// CHECK: %[[NX:.*]] = gpu.grid_dim x
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[SLOT32:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: %[[SLOT:.*]] = arith.index_castui %[[SLOT32]] : i32 to index
// CHECK: memref.dim %[[CQ]]
// CHECK: scf.while
// CHECK: memref.load %[[CQ]][
// CHECK: arith.cmpi sle, %{{.*}}, %[[SLOT]] : index
// CHECK: scf.yield
// CHECK: memref.load %[[CK]][
// CHECK: memref.load %[[CK]][
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]]
func.func @varlen(%q: tensor<1x4x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<top_left>}
     : tensor<1x4x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x4x?x64xbf16>
  return %o : tensor<1x4x?x64xbf16>
}

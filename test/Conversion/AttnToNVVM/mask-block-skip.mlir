// Block skipping under a mask tensor, on the GPU: each thread ORs "is this
// (row, key) visible" over the mask elements it owns (accumulator layout),
// then the threads' predicates are ORed and the block's math runs under
// `scf.if` on the result.
//
// One stage (f32): the K/V tile loads sit under the `if` too, so the whole
// thread block must agree: one `bar.red.or`.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=16 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm \
// RUN:   | FileCheck %s --implicit-check-not="linalg." --implicit-check-not="scf.forall"
//
// Two stages: the loads stay at the head of the loop (cp.async a block
// ahead); the math under the `if` reads the stage of this iteration and is
// all per warp (its rows' scores, softmax and P V), so each warp ORs its
// own lanes (`vote.sync.any`, no barrier) and skips the blocks that are
// masked for its 16 rows.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=16 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=PIPE

// CHECK-LABEL: gpu.func @masked_kernel
// CHECK:         %[[FLAG:.*]] = memref.alloca() : memref<1xi1>
// The mask terms of the block, in registers (accumulator layout).
// CHECK:         %[[TERMS:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for
// The owned mask elements, read once: 2 rows x 2 tiles of 8 keys x 2 per
// lane = 8.
// CHECK-COUNT-8:   memref.load %{{.*}} : memref<1x1x?x?xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK:           memref.store %false, %[[FLAG]]
// CHECK-COUNT-8:   memref.load %[[TERMS]]
// CHECK:           %[[ANY:.*]] = nvvm.barrier #nvvm.reduction<or> %{{.*}} -> i32
// CHECK:           %[[LIVE:.*]] = arith.cmpi ne, %[[ANY]], %c0_i32
// CHECK:           memref.store %[[LIVE]], %[[FLAG]]
// CHECK:           %[[L:.*]] = memref.load %[[FLAG]]
// CHECK:           scf.if %[[L]] {
// CHECK:             gpu.barrier
// CHECK:             vector.load %{{.*}} : memref<?x128xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK:             nvvm.mma.sync
// The scores take the terms from registers: no second read of the mask.
// CHECK-NOT:         memref<1x1x?x?xf32
// CHECK:             memref.load %[[TERMS]]
// CHECK-NOT:         memref<1x1x?x?xf32
// CHECK:           }
// CHECK:         }

// PIPE-LABEL: gpu.func @masked_kernel
// PIPE:         scf.for
// PIPE:           nvvm.cp.async.wait.group 0
// PIPE:           nvvm.cp.async.shared.global
// PIPE-NOT:       nvvm.barrier #nvvm.reduction<or>
// PIPE:           %[[WARP:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// PIPE-NOT:       nvvm.barrier #nvvm.reduction<or>
// PIPE:           memref.store %[[WARP]]
// PIPE:           scf.if
// PIPE-NOT:         nvvm.cp.async
// PIPE:             nvvm.mma.sync
func.func @masked(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}

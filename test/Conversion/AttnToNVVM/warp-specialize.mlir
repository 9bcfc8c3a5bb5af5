// --convert-attn-to-nvvm="warp-specialize=true": a kernel whose async
// copies are all tensor copies and whose 4 warps form one warpgroup (the
// tf32 defaults on sm_90a) gets a producer warpgroup. The thread block is
// 256 threads under .maxnreg 128; every slot of a tensor-copy tile has a
// second, "empty" mbarrier that the 4 consumer warps arrive on; after the
// entry's barrier, threads 0-127 (setmaxnreg.inc 216) run the kernel
// without its copies and release each slot before its refill, and warp 4
// (setmaxnreg.dec 40) runs what the copies need, waits for the slot's
// release and issues them from its first thread.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="warp-specialize=true" | FileCheck %s
// Where the kernel cannot split (cp.async copies, here with
// tensor-copies=none), the option changes nothing:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="warp-specialize=true tensor-copies=none" | FileCheck %s --check-prefix=OFF

// The launch and the kernel: 256 threads, 128 registers at most.
// CHECK-LABEL: func.func @tf32
// CHECK:         gpu.launch_func @attn_kernels::@tf32_kernel {{.*}} threads in (%c256, %{{.*}}, %{{.*}})
// CHECK:         gpu.func @tf32_kernel(
// CHECK-SAME:      known_block_size = array<i32: 256, 1, 1>, nvvm.maxnreg = 128 : i32
// Five full mbarriers (Q; K's two slots; V's two), then five empty ones
// counting the 4 consumer warps, each with the count of the fills its
// consumers released, all before the init fence.
// CHECK-COUNT-5: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}, predicate
// CHECK-COUNT-5: nvvm.mbarrier.init %{{.*}}, %c4_i32{{.*}}, predicate{{.*}}{{$[[:space:]].*}}memref.alloca() : memref<1xi32>
// CHECK:         nvvm.fence.mbarrier.init
// CHECK:         gpu.barrier
// The consumers.
// CHECK:         %[[TID:.*]] = gpu.thread_id  x
// CHECK-NEXT:    %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[CONSUMER:.*]] = arith.cmpi ult, %[[TID]], %[[C128]] : index
// CHECK-NEXT:    scf.if %[[CONSUMER]] {
// CHECK-NEXT:      nvvm.setmaxregister  increase 216
// A consumer release: each warp waits for the slot's latest fill, then
// its lane 0 arrives on the slot's empty mbarrier.
// CHECK:           mbarrier.try_wait.parity
// CHECK-NEXT:      %{{.*}} = arith.constant -1 : i32
// CHECK-NEXT:      nvvm.bar.warp.sync
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<1xi32>
// CHECK-NEXT:      %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[LANE:.*]] = arith.remui %{{.*}}, %[[C32]] : index
// CHECK:           %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[LANE0]] {
// CHECK:             nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// The consumers issue no copy.
// CHECK-NOT:       nvvm.cp.async.bulk.tensor
// CHECK-NOT:       nvvm.mbarrier.arrive.expect_tx
// CHECK:           nvvm.mma.sync
// CHECK:         } else {
// CHECK-NEXT:      nvvm.setmaxregister  decrease 40
// The producer: warp 4 (thread 128 issues), waiting for the slot's
// release from its second fill on.
// CHECK:           %[[ISSUER:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK:           %[[C160:.*]] = arith.constant 160 : index
// CHECK-NEXT:      %[[WARP4:.*]] = arith.cmpi ult, %[[TID]], %[[C160]] : index
// CHECK-NEXT:      scf.if %[[WARP4]] {
// CHECK:             %[[SECOND:.*]] = arith.cmpi uge, %{{.*}}, %c2_i32 : i32
// CHECK:             scf.if %[[SECOND]] {
// CHECK:               mbarrier.try_wait.parity
// CHECK:             scf.if %[[ISSUER]] {
// CHECK:               nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c17408_i32
// CHECK-NEXT:          arith.index_cast
// CHECK:               nvvm.cp.async.bulk.tensor.shared.cluster.global
// The producer runs no MMA.
// CHECK-NOT:       nvvm.mma.sync
// CHECK-NOT:       nvvm.wgmma
// CHECK:           gpu.return

// OFF:           gpu.func @tf32_kernel(
// OFF-NOT:         known_block_size = array<i32: 256
// OFF-NOT:         nvvm.setmaxregister
// OFF:             gpu.return

func.func @tf32(%q: tensor<2x2x100x64xf32>, %k: tensor<2x2x100x64xf32>, %v: tensor<2x2x100x64xf32>) -> tensor<2x2x100x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32> -> tensor<2x2x100x64xf32>
  return %o : tensor<2x2x100x64xf32>
}

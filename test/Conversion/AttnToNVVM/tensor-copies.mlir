// --convert-attn-to-nvvm="tensor-copies=true": K's tile (128-byte swizzle,
// read only by wgmma) is loaded by TMA tensor copies, one per 128-byte atom
// (two at head dim 64 in f32), by thread 0 onto the mbarrier of its slot;
// each wgmma that reads a slot first waits for the phase of the slot's
// latest fill, which every thread counts. V keeps its cp.async copies. The kernel takes the tensor map
// as a last argument, which the host builds from the launch's K buffer.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=true" | FileCheck %s
// Without the option, K comes by cp.async as before:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=OFF
// On sm_80 (no TMA, no wgmma) the option changes nothing:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=true" | FileCheck %s --check-prefix=OFF

// The host: a descriptor of K's box (1 x 1 x 32 keys x 32 f32), passed last.
// CHECK-LABEL: func.func @tf32
// CHECK:         %[[K:.*]] = memref.cast %{{.*}} : memref<2x2x100x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<*xf32>
// CHECK:         %[[D:.*]] = nvgpu.tma.create.descriptor %[[K]] box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<1x1x32x32xf32, 3>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK:         %[[P:.*]] = builtin.unrealized_conversion_cast %[[D]] : {{.*}} to !llvm.ptr
// CHECK:         gpu.launch_func @attn_kernels::@tf32_kernel {{.*}} args({{.*}}, %[[P]] : !llvm.ptr)
// The kernel: the map argument and its manifest entry.
// CHECK:         gpu.func @tf32_kernel({{.*}}, %[[MAP:.*]]: !llvm.ptr) kernel
// CHECK-SAME:      attn.kernel_args = array<i32: 0, 1, 2, -1, -1000>
// CHECK-SAME:      attn.kernel_tensor_maps = [{arg = 1 : i64, box = array<i64: 1, 1, 32, 32>, swizzle = 128 : i64}]
// Thread 0 initializes the two slots' mbarriers (predicated: the entry block
// stays whole); every thread counts each slot's fills in a register.
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST:.*]] :
// CHECK-NEXT:    %[[FILLS0:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]] :
// CHECK-NEXT:    %[[FILLS1:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.fence.mbarrier.init
// A K block: the counts, then thread 0's 8192 expected bytes and two tensor
// copies.
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[FILLS0]]
// CHECK:           memref.store %{{.*}}, %[[FILLS1]]
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.arrive.expect_tx %[[BAR:.*]], %c8192_i32
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %[[BAR]], box[
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %[[BAR]], box[
// CHECK-NOT:         nvvm.cp.async.bulk.tensor
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.cp.async.commit.group
// In the loop: after the head's barrier, the wait for the slot's phase
// (fills + 1) mod 2, then wgmma.
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[FILLS0]]
// CHECK:           memref.load %[[FILLS1]]
// CHECK:           llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK:           wgmma.fence.sync.aligned
// CHECK:         } {attn.pipelined = 2 : i64, attn.scores_ahead}

// OFF-NOT: nvgpu.tma.create.descriptor
// OFF-NOT: mbarrier
// OFF-NOT: cp.async.bulk.tensor
// OFF-NOT: kernel_tensor_maps
func.func @tf32(%q: tensor<2x2x100x64xf32>, %k: tensor<2x2x100x64xf32>, %v: tensor<2x2x100x64xf32>) -> tensor<2x2x100x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32> -> tensor<2x2x100x64xf32>
  return %o : tensor<2x2x100x64xf32>
}

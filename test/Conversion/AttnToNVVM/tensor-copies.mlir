// --convert-attn-to-nvvm's default, tensor-copies=auto (which takes a tf32 K
// together with its V): Q's tile (read once into each
// warp's cached fragments) in the 128-byte swizzle, unpadded, by one tensor
// copy per 128-byte atom (every box in bounds); K's tile (128-byte swizzle,
// read only by wgmma) is loaded by TMA tensor copies, one per 128-byte atom
// (two at head dim 64 in f32), by thread 0 onto the mbarrier of its slot;
// each wgmma that reads a slot first waits for the phase of the slot's
// latest fill, which every thread counts. V's tile (rows padded by 16
// bytes, read by tf32 mma.sync) is loaded by one tensor copy a block, a box
// one pad wider than the head dim whose pad columns TMA fills with zeros,
// into a slot aligned to 128 bytes at run time; P V waits for its slot's
// phase as the wgmma does for K's. The kernel takes the tensor maps as its
// last arguments, which the host builds from the launch's K and V buffers.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s
// With tensor-copies=none, K and V come by cp.async:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=none" | FileCheck %s --check-prefix=OFF
// On sm_80 (no TMA, no wgmma) `auto` is the same:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=auto" | FileCheck %s --check-prefix=OFF

// The host: a descriptor of Q's box (64 rows x 32 f32, one 128-byte atom,
// 128-byte swizzle), one of K's (1 x 1 x 32 keys x 32 f32,
// 128-byte swizzle) and one of V's (32 keys x 68 f32), passed last.
// CHECK-LABEL: func.func @tf32
// CHECK:         %[[Q:.*]] = memref.cast %{{.*}} : memref<2x2x100x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<*xf32>
// CHECK:         %[[DQ:.*]] = nvgpu.tma.create.descriptor %[[Q]] box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<1x1x64x32xf32, 3>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK:         %[[PQ:.*]] = builtin.unrealized_conversion_cast %[[DQ]] : {{.*}} to !llvm.ptr
// CHECK:         %[[K:.*]] = memref.cast %{{.*}} : memref<2x2x100x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<*xf32>
// CHECK:         %[[D:.*]] = nvgpu.tma.create.descriptor %[[K]] box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<1x1x32x32xf32, 3>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK:         %[[P:.*]] = builtin.unrealized_conversion_cast %[[D]] : {{.*}} to !llvm.ptr
// CHECK:         %[[V:.*]] = memref.cast %{{.*}} : memref<2x2x100x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<*xf32>
// CHECK:         %[[DV:.*]] = nvgpu.tma.create.descriptor %[[V]] box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<*xf32> -> <tensor = memref<1x1x32x68xf32, 3>, swizzle = none, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK:         %[[PV:.*]] = builtin.unrealized_conversion_cast %[[DV]] : {{.*}} to !llvm.ptr
// CHECK:         gpu.launch_func @attn_kernels::@tf32_kernel {{.*}} args({{.*}}, %[[PQ]] : !llvm.ptr, %[[P]] : !llvm.ptr, %[[PV]] : !llvm.ptr)
// The kernel: the map arguments and their manifest entries.
// CHECK:         gpu.func @tf32_kernel({{.*}}, %[[QMAP:.*]]: !llvm.ptr, %[[MAP:.*]]: !llvm.ptr, %[[VMAP:.*]]: !llvm.ptr) kernel
// CHECK-SAME:      attn.kernel_args = array<i32: 0, 1, 2, -1, -1000, -1001, -1002>
// CHECK-SAME:      attn.kernel_tensor_maps = [{arg = 0 : i64, box = array<i64: 1, 1, 64, 32>, swizzle = 128 : i64}, {arg = 1 : i64, box = array<i64: 1, 1, 32, 32>, swizzle = 128 : i64}, {arg = 2 : i64, box = array<i64: 1, 1, 32, 68>, swizzle = 0 : i64}]
// Thread 0 initializes the mbarriers of Q's tile, K's two slots and V's two
// (predicated: the entry block stays whole); every thread counts each
// slot's fills in a register.
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST:.*]] :
// CHECK-NEXT:    %[[QFILLS:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]] :
// CHECK-NEXT:    %[[FILLS0:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]] :
// CHECK-NEXT:    %[[FILLS1:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]] :
// CHECK-NEXT:    %[[VFILLS0:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]] :
// CHECK-NEXT:    %[[VFILLS1:.*]] = memref.alloca() : memref<1xi32>
// CHECK:         nvvm.fence.mbarrier.init
// Q's tile: two boxes of 64 x 32 elements (16384 bytes), by thread 0.
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[QFILLS]]
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.arrive.expect_tx %[[QBAR:.*]], %c16384_i32
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %[[QBAR]], box[
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %[[QBAR]], box[
// CHECK-NOT:         nvvm.cp.async.bulk.tensor
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.cp.async.commit.group
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
// A V block: one box of 32 x 68 elements (8704 bytes).
// CHECK:         scf.if
// CHECK:           memref.store %{{.*}}, %[[VFILLS0]]
// CHECK:           memref.store %{{.*}}, %[[VFILLS1]]
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.arrive.expect_tx %[[VBAR:.*]], %c8704_i32
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %[[VBAR]], box[
// CHECK-NOT:         nvvm.cp.async.bulk.tensor
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    nvvm.cp.async.commit.group
// Before the first scores, every thread waits for Q's phase, then reads its
// fragments (no cp.async wait or barrier for them) at their swizzled
// addresses: 16-byte chunk (column / 4) % 8 of a row at that chunk XOR
// row % 8, atoms 64 x 128 = 8192 bytes apart, 8-row groups 1024.
// CHECK:         memref.load %[[QFILLS]]
// CHECK:         llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK-NOT:     gpu.barrier
// CHECK:         arith.xori
// CHECK:         arith.constant 8192 : index
// CHECK:         arith.constant 1024 : index
// CHECK-NOT:     gpu.barrier
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// The prologue's scores wait for K's phase only: with every copy a tensor
// copy and no tile that wgmma reads written by the generic proxy, no
// cp.async wait, proxy fence or barrier precedes them.
// CHECK-NOT:     gpu.barrier
// CHECK-NOT:     nvvm.fence.proxy
// CHECK-NOT:     nvvm.cp.async.wait.group
// CHECK:         memref.load %[[FILLS0]]
// CHECK:         llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK-NOT:     gpu.barrier
// CHECK:         wgmma.fence.sync.aligned
// In the loop: the head keeps only its barrier (after which a slot is
// refilled), then the wait for the K slot's phase (fills + 1) mod 2, then
// wgmma; before P V, the wait for the V slot's phase, then mma.sync on V's
// rows read through the realigned base.
// CHECK:         scf.for
// CHECK-NEXT:      gpu.barrier
// CHECK-NOT:       nvvm.fence.proxy
// CHECK-NOT:       nvvm.cp.async.wait.group
// CHECK:           memref.load %[[FILLS0]]
// CHECK:           memref.load %[[FILLS1]]
// CHECK:           llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK:           wgmma.fence.sync.aligned
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]]
// CHECK:           memref.load %[[VFILLS0]]
// CHECK:           memref.load %[[VFILLS1]]
// CHECK:           llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK:           llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK:           nvvm.mma.sync
// CHECK:         } {attn.pipelined = 2 : i64, attn.scores_ahead}
// Before the exit, every thread waits for Q's phase too (a program that
// reads no key block must not leave with its copy in flight).
// CHECK:         memref.load %[[QFILLS]]
// CHECK-NEXT:    arith.constant 1 : i32
// CHECK:         llvm.inline_asm has_side_effects {{.*}}mbarrier.try_wait.parity.shared::cta.b64
// CHECK-NEXT:    gpu.return

// OFF-NOT: nvgpu.tma.create.descriptor
// OFF-NOT: mbarrier
// OFF-NOT: cp.async.bulk.tensor
// OFF-NOT: kernel_tensor_maps
func.func @tf32(%q: tensor<2x2x100x64xf32>, %k: tensor<2x2x100x64xf32>, %v: tensor<2x2x100x64xf32>) -> tensor<2x2x100x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32> -> tensor<2x2x100x64xf32>
  return %o : tensor<2x2x100x64xf32>
}

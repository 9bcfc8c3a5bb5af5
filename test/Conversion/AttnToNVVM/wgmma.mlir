// Q K^T on wgmma (sm_90a, a warpgroup of 16-row warps), as the
// scores-ahead loops of --attn-pipeline put it there: an f32 (tf32) causal
// attention, head dim 32, tiled for sm_90a into 64-row programs of one
// warpgroup (4 warps of 16 rows), two stages; K and V by cp.async here
// (tensor-copies=none; tensor-copies.mlir has the TMA form, and
// scores-ahead.mlir the schedule and Q's fragments in registers at head
// dim 64-128).
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=none" | FileCheck %s

// Rows under 128 bytes (f16 at head dim 16: 32 bytes) keep the plain
// core-matrix layout: no alignment, no swizzle; Q and K by descriptors with
// leading byte offset 128 (8 << 16) and stride (16 / 8) * 128 = 256 bytes
// (16 << 32), no swizzle bits.
// RUN: sed 's/x32xf32/x16xf16/g' %s \
// RUN:   | attn-opt --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=none" | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT:  arith.xori
// PLAIN-NOT:  %c1023
// PLAIN:      arith.ori %{{.*}}, %c68720001024_i64
// PLAIN:      arith.ori %{{.*}}, %c68720001024_i64
// PLAIN-NEXT: nvvm.wgmma.fence.aligned
// PLAIN:      nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]

// Not for f32 without scores-ahead loops, nor where wgmma cannot run:
// sm_80, 32-row warps (128 rows on 4 warps), exact f32.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=128 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA
// RUN: sed 's/causal = #attn.causal<top_left>/causal = #attn.causal<top_left>, precision = #attn.precision<ieee>/' %s \
// RUN:   | attn-opt --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=FMA

// Q (64 x 32 f32) and K (32 x 32, two slots) have 128-byte rows: both take
// the swizzled core-matrix layout, allocated first and together after 1024
// bytes that align them (Q's view at 0, its base rounded up to 1024; K's
// view at 9216, its base Q's + 8192). V keeps its 16-byte row padding (two
// slots of 32 * 36 * 4 bytes at 17408).
// CHECK:      attn.shared_memory_bytes = 26624
// CHECK:      memref.view {{.*}}[%c0{{.*}}] : {{.*}} to memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[QP:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:      %[[QR:.*]] = arith.addi %[[QP]], %c1023
// CHECK:      %[[QB:.*]] = arith.andi %[[QR]], %c-1024
// CHECK:      memref.view {{.*}}[%c9216{{.*}}] : {{.*}} to memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK:      %[[KB:.*]] = arith.addi %[[QB]], %c8192
// CHECK:      memref.view {{.*}}[%c17408{{.*}}] : {{.*}} to memref<2x32x36xf32, #gpu.address_space<workgroup>>
// The Q tile's cp.async, 8 threads to a row's 128 bytes: chunk (row, col)
// at (col bytes / 128) * 8192 + (row / 8) * 1024 + (row % 8) * 128 +
// ((col bytes / 16) % 8 ^ row % 8) * 16.
// CHECK:      %[[XOR:.*]] = arith.xori %{{.*}}, %[[RM:.*]] : index
// CHECK:      arith.muli %{{.*}}, %c8192{{.*}} : index
// CHECK:      arith.muli %{{.*}}, %c1024{{.*}} : index
// CHECK:      arith.muli %[[RM]], %c128{{.*}} : index
// CHECK:      arith.muli %[[XOR]], %c16{{.*}} : index
// CHECK:      arith.addi %[[QB]], %{{.*}} : index
// CHECK:      nvvm.cp.async.shared.global
// Before the prologue's scores: the wait for Q's and K's copies, each
// thread's fence of its generic-proxy writes for wgmma, the barrier. Then
// the 16 accumulator registers of S and the descriptors of Q (offset 8 row
// groups x 1024 bytes per warpgroup) and K: start address in 16-byte
// units, swizzle mode 1 (128 bytes, 1 << 62), stride byte offset 1024
// (64 << 32), leading byte offset unused (1 << 16); four k steps of 8 (32
// bytes in the atom: +2 in the start field each), issued and waited for in
// place. The wgmma fence comes after all of them, right before the first
// wgmma (ptxas serialized the wgmma of a kernel whose accumulators were
// zeroed after the fence: C7511).
// CHECK:      nvvm.cp.async.wait.group 2
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT:  nvvm.wgmma.fence.aligned
// CHECK-COUNT-16: llvm.insertvalue
// CHECK-NOT:  nvvm.wgmma.fence.aligned
// CHECK:      %[[WG:.*]] = arith.divui %thread_id_x, %c128
// CHECK:      %[[WO:.*]] = arith.muli %[[WG]], %c8192
// CHECK:      arith.addi %[[QB]], %[[WO]]
// CHECK:      arith.andi %{{.*}}, %c262143_i64
// CHECK:      arith.shrui %{{.*}}, %c4_i64
// CHECK:      %[[QD:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64
// CHECK:      %[[KD:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK:      %[[A0:.*]] = arith.addi %[[QD]], %c0_i64
// CHECK:      %[[B0:.*]] = arith.addi %[[KD]], %c0_i64
// CHECK:      nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 32, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK:      arith.addi %[[QD]], %c2_i64
// CHECK:      nvvm.wgmma.mma_async
// CHECK:      arith.addi %[[QD]], %c4_i64
// CHECK:      nvvm.wgmma.mma_async
// CHECK:      arith.addi %[[QD]], %c6_i64
// CHECK:      nvvm.wgmma.mma_async
// CHECK-NOT:  nvvm.wgmma.mma_async
// CHECK:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-16: llvm.extractvalue
// The key loop's head waits for its block's copies and fences them for
// wgmma; P V stays on mma.sync (tf32 wgmma reads B K-major only).
// CHECK:      scf.for
// CHECK:        nvvm.cp.async.wait.group
// CHECK-NEXT:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:   gpu.barrier
// CHECK:        nvvm.cp.async.shared.global
// CHECK:        nvvm.wgmma.mma_async
// CHECK:        nvvm.mma.sync

// MMA-NOT:    nvvm.wgmma
// MMA-NOT:    nvvm.fence.proxy
// MMA:        nvvm.mma.sync
// MMA-NOT:    nvvm.wgmma

// FMA-NOT:    nvvm.wgmma
// FMA:        math.fma
// FMA-NOT:    nvvm.wgmma
func.func @tf32(%q: tensor<2x2x100x32xf32>, %k: tensor<2x2x100x32xf32>, %v: tensor<2x2x100x32xf32>) -> tensor<2x2x100x32xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x2x100x32xf32>, tensor<2x2x100x32xf32>, tensor<2x2x100x32xf32> -> tensor<2x2x100x32xf32>
  return %o : tensor<2x2x100x32xf32>
}

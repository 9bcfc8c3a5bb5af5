// tf32 P V on wgmma as O^T = V^T P^T (--convert-attn-to-nvvm="wgmma-tf32-pv",
// WgmmaPV.cpp), in a scores-ahead kernel of one warpgroup (64x32 blocks,
// head dim 128). In the unmasked loop, after the next block's scores are
// issued: each lane stores its 8 pairs of P into the swizzled P tile and
// the 2 row factors (alpha) it holds into the exchange, waits for the
// previous block's P V, fences the generic proxy's writes for wgmma and
// passes the block's one barrier; then it reads the 16 factors of its
// query columns (8 pairs), loads V^T's A registers (16 8-byte loads: 2 head-
// dim halves x 4 k steps x 2), rescales its 64 accumulators and issues two
// chains of 4 m64n64k8 wgmma (each with its fence), committed and left in
// flight: the next scores' wait leaves one group (this P V) pending. No
// mma.sync anywhere.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma-tf32-pv=true" -cse | FileCheck %s
// Off (the default), P V stays on mma.sync:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=OFF
// Not in a kernel without scores-ahead loops (here: sm_80's), nor at
// 128-row programs of 8 warps (two warpgroups):
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma-tf32-pv=true" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=128 block-n=32 num-warps=8 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma-tf32-pv=true" | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: gpu.func @pv_kernel
// CHECK-NOT:     nvvm.mma.sync
// CHECK:         scf.for
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT:       nvvm.wgmma.wait.group
// CHECK-COUNT-8:   llvm.store %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-COUNT-2:   llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      gpu.barrier
// CHECK-COUNT-24:  llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK-NOT:       llvm.load
// CHECK-COUNT-64:  arith.mulf
// CHECK-NOT:       gpu.barrier
// CHECK:           wgmma.fence.sync.aligned;{{.*}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-COUNT-3:   "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK:           wgmma.fence.sync.aligned;{{.*}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-COUNT-3:   "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 1
// CHECK:         } {attn.pipelined = 2 : i64}
// The epilogue: 1 / l through the exchange (a barrier before its writes and
// one after), then O staged in shared memory (32 pairs a lane) and copied
// out in 16-byte vectors.
// CHECK:         nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:    gpu.barrier
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK-NEXT:    gpu.barrier
// CHECK:         gpu.barrier
// CHECK:         nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: vector.store %{{.*}} : memref<64x132xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT:    gpu.barrier
// CHECK:         vector.load {{.*}} vector<4xf32>
// CHECK-NOT:     nvvm.mma.sync

// OFF-LABEL: gpu.func @pv_kernel
// OFF-NOT:     m64n64k8
// OFF:         nvvm.mma.sync
// OFF-NOT:     m64n64k8

func.func @pv(%q: tensor<2x2x100x128xf32>, %k: tensor<2x2x100x128xf32>,
              %v: tensor<2x2x100x128xf32>) -> tensor<2x2x100x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, precision = #attn.precision<tf32>}
      : tensor<2x2x100x128xf32>, tensor<2x2x100x128xf32>, tensor<2x2x100x128xf32>
        -> tensor<2x2x100x128xf32>
  return %o : tensor<2x2x100x128xf32>
}

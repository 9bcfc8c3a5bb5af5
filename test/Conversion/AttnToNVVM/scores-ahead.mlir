// --attn-pipeline="scores-ahead=all" on the GPU (tf32, head dim 64, 64-row
// programs of one warpgroup, two stages). Scores-ahead loops put the
// kernel's Q K^T on wgmma (the schedule exists for it): the next block's
// scores are issued asynchronously and waited for only where they are
// copied into S, at the end of the iteration, after this block's P V (on
// mma.sync: a wgmma P V would wait for them too). K and V come by cp.async
// here (tensor-copies=none; tensor-copies.mlir has the TMA form).
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=none" | FileCheck %s
// On sm_80 (no wgmma) the same schedule runs on mma.sync, each contraction
// in place:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA
// --attn-pipeline="scores-ahead=tf32" (the default of --attn-to-nvvm) takes
// this loop on sm_90a (f32, head dim 64, 16-row warps in a warpgroup), not
// on sm_80:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" | FileCheck %s --check-prefix=TF32
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" | FileCheck %s --check-prefix=TF32-80
// TF32:        } {attn.pipelined = 2 : i64, attn.scores_ahead}
// TF32-80-NOT: scores_ahead
// "auto" (the default of --attn-to-nvvm since 16-bit runs on wgmma) also
// takes the loop of a 16-bit program at head dim 128 in the sm_90a default
// config (64x64, one warpgroup of 16-row warps), not at head dim 64, and
// "tf32" takes neither:
// RUN: sed 's/x64xf32/x128xbf16/g' %s | attn-opt --attn-tile="target=sm_90a" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=auto" | FileCheck %s --check-prefix=AUTO
// RUN: sed 's/x64xf32/x64xbf16/g' %s | attn-opt --attn-tile="target=sm_90a" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=auto" | FileCheck %s --check-prefix=NOT-AHEAD
// RUN: sed 's/x64xf32/x128xbf16/g' %s | attn-opt --attn-tile="target=sm_90a" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=tf32" | FileCheck %s --check-prefix=NOT-AHEAD
// AUTO:        } {attn.pipelined = 2 : i64, attn.scores_ahead}
// NOT-AHEAD-NOT: scores_ahead
// NOT-AHEAD:     attn.pipelined = 2
// NOT-AHEAD-NOT: scores_ahead
// A bad value is an error:
// RUN: not attn-opt %s --attn-pipeline="scores-ahead=yes" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: --attn-pipeline: scores-ahead must be 'none', 'tf32', 'auto' or 'all', got 'yes'

// The copies before the loop commit a group each: Q, K of lb and lb + 1, V
// of lb. Q's fragments are read into registers once Q's group has landed
// (3 groups after it may be in flight), the prologue's scores (block lb)
// once K(lb)'s has (2), and are waited for in place.
// CHECK-COUNT-4: nvvm.cp.async.commit.group
// CHECK-NOT:    nvvm.cp.async.commit.group
// CHECK:        nvvm.cp.async.wait.group 3
// CHECK-NEXT:   gpu.barrier
// CHECK-NOT:    nvvm.cp.async.commit.group
// CHECK:        nvvm.cp.async.wait.group 2
// CHECK-NEXT:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:   gpu.barrier
// CHECK:        llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;\0A\09wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// CHECK-COUNT-7: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// CHECK-NEXT:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:   nvvm.wgmma.wait.group.sync.aligned 0
// In the loop: the head waits for the copies of the iteration before (K of
// i + 1, V of i), then the next block's scores are committed and not waited
// for, then this iteration's copies (after the wgmma, whose register fence
// would otherwise wait for them); P V runs on mma.sync (no transposed V
// tile, no barrier), then the wait, then S = the next scores.
// CHECK:        scf.for
// CHECK-NEXT:     nvvm.cp.async.wait.group 0
// CHECK-NEXT:     nvvm.fence.proxy
// CHECK-NEXT:     gpu.barrier
// CHECK-NOT:      nvvm.cp.async.shared.global
// CHECK:          llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;\0A\09wgmma.mma_async
// CHECK-COUNT-7:  llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async
// CHECK-NEXT:     nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT:      nvvm.wgmma.wait.group.sync.aligned
// CHECK:          nvvm.cp.async.shared.global
// CHECK-NOT:      nvvm.wgmma.wait.group.sync.aligned
// CHECK-NOT:      gpu.barrier
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT:      nvvm.mma.sync
// CHECK-NOT:      gpu.barrier
// CHECK:          nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:     %c0{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %[[X:.*]] = memref.load %[[NEXT:.*]][%c0{{.*}}] : memref<16xf32>
// CHECK:          memref.store %[[X]], %[[S:.*]][%c0{{.*}}] : memref<16xf32>
// CHECK:        } {attn.pipelined = 2 : i64, attn.scores_ahead}
// The diagonal loop: its Q K^T (wgmma, the warpgroup's) runs under a flag
// whose OR over the program is true (attn.program_live): stored true, with
// no thread-block OR; the rest of its math under a flag each warp votes.
// CHECK-NOT:    nvvm.barrier #nvvm.reduction
// CHECK:        scf.for
// CHECK:          memref.store %true, %[[QKFLAG:.*]][%{{.*}}] : memref<1xi1>
// CHECK-NEXT:     %c0{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %[[QKLIVE:.*]] = memref.load %[[QKFLAG]][%{{.*}}] : memref<1xi1>
// CHECK:          scf.if %[[QKLIVE]] {
// CHECK:            wgmma.mma_async
// CHECK-NOT:      nvvm.barrier #nvvm.reduction
// CHECK:          %[[ANY:.*]] = nvvm.vote.sync  any
// CHECK:          memref.store %[[ANY]], %[[FLAG:.*]][%{{.*}}] : memref<1xi1>
// CHECK:          %[[LIVE:.*]] = memref.load %[[FLAG]]
// CHECK:          scf.if %[[LIVE]] {
// CHECK-NOT:    nvvm.barrier #nvvm.reduction
// CHECK:        } {attn.pipelined = 2 : i64}
// CHECK-NOT:    nvvm.barrier #nvvm.reduction

// MMA-NOT:      wgmma
// MMA:          scf.for
// MMA:            nvvm.mma.sync
// MMA:          } {attn.pipelined = 2 : i64, attn.scores_ahead}
func.func @tf32(%q: tensor<2x2x100x64xf32>, %k: tensor<2x2x100x64xf32>, %v: tensor<2x2x100x64xf32>) -> tensor<2x2x100x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32> -> tensor<2x2x100x64xf32>
  return %o : tensor<2x2x100x64xf32>
}

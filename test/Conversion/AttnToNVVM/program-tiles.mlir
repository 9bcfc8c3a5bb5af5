// Several programs per thread block (`program-tiles`, opt-in): the kernel
// runs `program-tiles` consecutive (batch, head) pairs of one query block in
// an scf.for tagged attn.program_loop, and the launch has that many times
// fewer thread blocks along y.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3" | FileCheck %s
// The default is one program per thread block, with no program loop:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=ONE
// With Q K^T on wgmma (scores ahead), Q, K and V go by tensor copies in the
// loop as without it: the mbarriers are initialized once, at the entry (by
// thread 0 of %tid.x there), and every program's copies count their fills
// on from the program before:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3" | FileCheck %s --check-prefix=TMA
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | not attn-opt --convert-attn-to-nvvm="program-tiles=0" 2>&1 | FileCheck %s --check-prefix=BAD

// Host: x = query blocks, y = ceil(B * Hq / 3).
// CHECK-LABEL: func.func @pt
// CHECK:         %[[QB:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:         %[[BH:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[G:.*]] = arith.ceildivui %[[BH]], %[[C3]] : index
// CHECK:         gpu.launch_func @attn_kernels::@pt_kernel blocks in (%[[QB]], %[[G]], %{{.*}})

// Kernel: programs y * 3 + t for t < min(3, B * Hq - y * 3).
// CHECK:       gpu.func @pt_kernel
// CHECK-SAME:    attn.program_tiles = 3 : i64
// CHECK:         %[[Y:.*]] = gpu.block_id y
// CHECK:         %[[Y32:.*]] = arith.index_castui %[[Y]] : index to i32
// CHECK:         %[[FIRST:.*]] = arith.muli %[[Y32]], %{{.*}} : i32
// CHECK:         %[[LEFT:.*]] = arith.subi %{{.*}}, %[[FIRST]] : i32
// CHECK:         %[[TRIP:.*]] = arith.minui %{{.*}}, %[[LEFT]] : i32
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %[[TRIP]] step %{{.*}} : i32 {
// The thread geometry and the query block are read in the loop, where LLVM
// cannot hoist them (held across the programs, ptxas spilled).
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.x;", "=r"
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %ctaid.x;", "=r"
// CHECK:           %[[BH32:.*]] = arith.addi %[[FIRST]], %[[T]] : i32
// CHECK:           arith.divui %[[BH32]]
// CHECK:           arith.remui %[[BH32]]
// A program's first copies wait until every warp is done with the tiles
// of the one before.
// CHECK:           gpu.barrier
// CHECK:           nvvm.cp.async.shared.global
// Q's tf32 fragments (64 columns: 8 k steps x 4 registers per lane) are
// read once per program in 32 separate volatile loads, which ptxas does not
// merge (merged, it permuted them into the mma quads at every use).
// CHECK-COUNT-32:  llvm.load volatile %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK-NOT:       llvm.load volatile
// CHECK:           nvvm.mma.sync
// CHECK:         } {attn.program_loop}
// CHECK-NEXT:    gpu.return

// TMA:       gpu.func @pt_kernel
// TMA:         %[[TID:.*]] = gpu.thread_id  x
// TMA:         %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// TMA-COUNT-5: nvvm.mbarrier.init %{{.*}}, %{{.*}}, predicate = %[[FIRST]]
// TMA:         nvvm.fence.mbarrier.init
// TMA-NOT:     nvvm.mbarrier.init
// TMA:         scf.for
// TMA:           nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA:           mbarrier.try_wait.parity
// TMA-NOT:       nvvm.cp.async.shared.global
// TMA:         } {attn.program_loop}

// ONE:       gpu.launch_func @attn_kernels::@pt_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// ONE:       gpu.func @pt_kernel
// ONE-NOT:   attn.program_tiles
// ONE-SAME:  {
// ONE-NOT:   llvm.inline_asm
// ONE-NOT:   llvm.load volatile
// ONE-NOT:   attn.program_loop
// ONE:       gpu.return

// BAD: error: 'scf.forall' op expects at least 1 program per thread block, got 0

func.func @pt(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  return %o : tensor<2x4x?x64xf32>
}

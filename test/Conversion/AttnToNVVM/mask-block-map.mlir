// The classification grid of --attn-mask-block-map becomes a kernel of its
// own, launched before the attention kernel with the map as an argument of
// both: one thread block of 128 threads per map entry, the block's (row, key)
// pairs split over the threads, the three flags ORed across the thread block,
// the class stored by thread 0. The attention kernel reads the class instead
// of reducing its mask elements (no bar.red).
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-mask-block-map \
// RUN:   --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm -cse | FileCheck %s

// CHECK-LABEL: func.func @seed_like
// CHECK: %[[MAP:.*]] = memref.alloc({{.*}}) {attn.workspace = "mask_block_map"} : memref<1x1x?x?xi8>
// CHECK: gpu.launch_func @attn_kernels::@seed_like_mask_map blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c128, %c1, %c1) {{.*}} args({{.*}}, %[[MAP]] : memref<1x1x?x?xi8>)
// CHECK: gpu.launch_func @attn_kernels::@seed_like_kernel {{.*}} args({{.*}}, %[[MAP]] : memref<1x1x?x?xi8>)
// CHECK: memref.dealloc %[[MAP]]

// CHECK: gpu.func @seed_like_mask_map({{.*}}, %[[M:.*]]: memref<1x1x?x?xf32, {{.*}}>, %[[W:.*]]: memref<1x1x?x?xi8>) kernel
// CHECK-SAME: attn.kernel_args = array<i32: 0, 0, 1, -100>, attn.kernel_workspaces = ["mask_block_map"]
// CHECK-SAME: attn.mask_block_map = #attn.config<block_m = 64, block_n = 32
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-DAG: %[[BX:.*]] = gpu.block_id  x
// CHECK-DAG: %[[BY:.*]] = gpu.block_id  y
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id  x
// Thread t takes the block's pairs t + 128 i, i < 16 (2048 pairs), in 16
// unrolled copies of the loop body: its mask reads are in flight together.
// CHECK-NOT: scf.for
// CHECK: %[[P0:.*]] = arith.addi %[[TID]], %{{.*}} : index
// CHECK-COUNT-16: memref.load %[[M]]
// CHECK-NOT: memref.load %[[M]]
// CHECK-NOT: scf.for
// CHECK: %[[L:.*]] = arith.extui %{{.*}} : i1 to i32
// CHECK-NEXT: nvvm.barrier #nvvm.reduction<or> %[[L]] -> i32
// CHECK: %[[N:.*]] = arith.extui %{{.*}} : i1 to i32
// CHECK-NEXT: nvvm.barrier #nvvm.reduction<or> %[[N]] -> i32
// CHECK: %[[T:.*]] = arith.extui %{{.*}} : i1 to i32
// CHECK-NEXT: nvvm.barrier #nvvm.reduction<or> %[[T]] -> i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK:   memref.store %{{.*}}, %[[W]][%{{.*}}, %{{.*}}, %[[BY]], %[[BX]]] : memref<1x1x?x?xi8>
// CHECK: }
// CHECK: gpu.return

// CHECK: gpu.func @seed_like_kernel({{.*}}, %[[W2:.*]]: memref<1x1x?x?xi8>) kernel
// CHECK-SAME: attn.kernel_args = array<i32: 0, 0, 0, 1, -1, -100>, attn.kernel_workspaces = ["mask_block_map"]
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// Two stages: the program scans its map row for the live range and its
// zero-term run first; the run goes through a pipelined loop without mask
// code (no class load), the rest of the range through the masked one.
// The scan runs in 32 bits, 32 blocks a step: lane l reads the class of
// block j = step + l (removed past the row), two ballots give the step's
// live and not-zero blocks; the first live block is the lowest live bit of
// the first step that has one, one past the last is past the highest live
// bit, and the zero run ends at the lowest not-zero bit from the first
// live block on. The first step's classes are read first, before Q's copy
// (lanes past the map row read none); later steps read theirs in the step.
// CHECK: %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid : i32
// CHECK-NEXT: %[[ROWLEN:.*]] = memref.dim %[[W2]], %c3 : memref<1x1x?x?xi8>
// CHECK-NEXT: %[[ROWLEN32:.*]] = arith.index_cast %[[ROWLEN]] : index to i32
// CHECK-NEXT: %[[INROW:.*]] = arith.cmpi slt, %[[LANE]], %[[ROWLEN32]] : i32
// CHECK-NEXT: %[[C0:.*]] = scf.if %[[INROW]] -> (i8) {
// CHECK-NEXT:   %[[LI:.*]] = arith.index_cast %[[LANE]] : i32 to index
// CHECK-NEXT:   %[[EARLY:.*]] = memref.load %[[W2]][%c0, %c0, %{{.*}}, %[[LI]]] : memref<1x1x?x?xi8>
// CHECK-NEXT:   scf.yield %[[EARLY]] : i8
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %c0_i8 : i8
// CHECK-NEXT: }
// CHECK: nvvm.cp.async.shared.global
// CHECK: %[[RANGE:.*]]:4 = scf.for %[[STEP:.*]] = %c0_i32 to %[[NV:.*]] step %c32_i32 iter_args(%[[F0:.*]] = %[[NV]], %[[E0:.*]] = %c0_i32, %[[Z0:.*]] = %[[NV]], %[[T0:.*]] = %c0_i32) -> (i32, i32, i32, i32) : i32 {
// CHECK-NEXT: %[[J:.*]] = arith.addi %[[STEP]], %[[LANE]] : i32
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi slt, %[[J]], %[[NV]] : i32
// CHECK-NEXT: %[[LATER:.*]] = arith.cmpi ne, %[[STEP]], %c0_i32 : i32
// CHECK-NEXT: %[[READ:.*]] = arith.andi %[[IN]], %[[LATER]] : i1
// CHECK-NEXT: %[[C:.*]] = scf.if %[[READ]] -> (i8) {
// CHECK-NEXT:   %[[JI:.*]] = arith.index_cast %[[J]] : i32 to index
// CHECK-NEXT:   %[[SCAN:.*]] = memref.load %[[W2]][%c0, %c0, %{{.*}}, %[[JI]]] : memref<1x1x?x?xi8>
// CHECK-NEXT:   scf.yield %[[SCAN]] : i8
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[FROM0:.*]] = arith.select %[[IN]], %[[C0]], %c0_i8 : i8
// CHECK-NEXT:   scf.yield %[[FROM0]] : i8
// CHECK-NEXT: }
// CHECK-NEXT: %[[ISLIVE:.*]] = arith.cmpi ne, %[[C]], %c0_i8 : i8
// CHECK-NEXT: %[[LIVE:.*]] = nvvm.vote.sync  ballot %c-1_i32, %[[ISLIVE]] -> i32
// CHECK-NEXT: %[[NZ1:.*]] = arith.cmpi ne, %[[C]], %c1_i8 : i8
// CHECK-NEXT: %[[NZ2:.*]] = arith.andi %[[IN]], %[[NZ1]] : i1
// CHECK-NEXT: %[[NZ:.*]] = nvvm.vote.sync  ballot %c-1_i32, %[[NZ2]] -> i32
// CHECK: %[[LOW:.*]] = "llvm.intr.cttz"(%[[LIVE]])
// CHECK: %[[NF:.*]] = arith.select %{{.*}}, %{{.*}}, %[[F0]] : i32
// CHECK: "llvm.intr.ctlz"(%[[LIVE]])
// CHECK: %[[NE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[E0]] : i32
// CHECK: %[[ENDS:.*]] = arith.andi %[[NZ]], %{{.*}} : i32
// CHECK: "llvm.intr.cttz"(%[[ENDS]])
// CHECK: %[[NZE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Z0]] : i32
// A third ballot's population count adds up the triangular blocks.
// CHECK-NEXT: %[[ISTRI:.*]] = arith.cmpi eq, %[[C]], %c3_i8 : i8
// CHECK-NEXT: %[[TRIS:.*]] = nvvm.vote.sync  ballot %c-1_i32, %[[ISTRI]] -> i32
// CHECK-NEXT: %[[POP:.*]] = llvm.intr.ctpop(%[[TRIS]]) : (i32) -> i32
// CHECK-NEXT: %[[NT:.*]] = arith.addi %[[T0]], %[[POP]] : i32
// CHECK-NEXT: scf.yield %[[NF]], %[[NE]], %[[NZE]], %[[NT]] : i32, i32, i32, i32
// CHECK: %[[FIRST:.*]] = arith.index_cast %[[RANGE]]#0 : i32 to index
// CHECK: %[[LAST:.*]] = arith.index_cast %[[RANGE]]#1 : i32 to index
// A row of the triangular mask's classes runs the loops of a causal
// program. Each branch issues its first K and V copies, then waits for Q's
// copy only (the two groups after it may still be in flight) and reads Q's
// tf32 fragments into the same registers; the barrier before Q's copy
// covers both branches' prologues (no second one before the K/V copies).
// CHECK: %[[ANYLIVE:.*]] = arith.cmpi sgt, %{{.*}}, %c0 : index
// CHECK-NEXT: %[[SHAPED:.*]] = arith.andi %{{.*}}, %[[ANYLIVE]] : i1
// CHECK-NEXT: scf.if %[[SHAPED]] {
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.load %[[W2]]
// CHECK: } else {
// CHECK: %[[PLAIN:.*]] = arith.maxsi %{{.*}}, %[[FIRST]] : index
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c1 {
// CHECK-NOT: memref.load %[[W2]]
// CHECK: nvvm.mma.sync
// CHECK-NOT: memref.load %[[W2]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[LAST]] step %c1 {
// CHECK: %[[CLS:.*]] = memref.load %[[W2]][%c0, %c0, %{{.*}}, %{{.*}}] : memref<1x1x?x?xi8>
// CHECK: %[[LIVE:.*]] = arith.cmpi ne, %[[CLS]], %c0_i8
// CHECK: scf.if %[[LIVE]] {
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// A triangular block's flag is ORed over the warp's rows (vote, no
// barrier) before Q K^T: a warp whose rows see no key of it skips Q K^T
// and the rest of the block.
// CHECK: %[[TRI:.*]] = arith.cmpi eq, %[[CLS]], %c3_i8
// CHECK-NEXT: scf.if %[[TRI]] {
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: %[[ROWS:.*]] = nvvm.vote.sync any
// CHECK-NEXT: memref.store %[[ROWS]], %[[FLAG:.*]][%c0] : memref<1xi1>
// CHECK: %[[QK:.*]] = memref.load %[[FLAG]][%c0] : memref<1xi1>
// CHECK-NEXT: scf.if %[[QK]] {
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// A mixed block's terms flag is ORed over the warp (vote, no barrier); a
// warp none of whose terms keeps a key skips the rest of the block.
// CHECK: %[[ANY:.*]] = nvvm.vote.sync any
// CHECK-NEXT: memref.store %[[ANY]], %[[FLAG]][%c0] : memref<1xi1>
// CHECK: %[[KEEP:.*]] = memref.load %[[FLAG]][%c0] : memref<1xi1>
// CHECK-NEXT: scf.if %[[KEEP]] {
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: gpu.return
func.func @seed_like(%q: tensor<?x4x?x64xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<1x1x?x?xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// The next program's Q across a program loop (`program-prefetch`, opt-in,
// with `program-tiles`): on sm_90+ the tf32 Q tile, whose fragments the
// kernel reads into registers once per program, is loaded by bulk copies
// (one per row) that complete on an mbarrier of each warp; each warp issues
// the next program's rows as soon as it has read this program's fragments.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 program-prefetch=true" | FileCheck %s
// Not without a program loop, and not before sm_90 (no bulk copies; without
// a program loop the 16-bit kernel's K and V would take tensor copies, which
// tensor-copies=none leaves out here):
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-prefetch=true tensor-copies=none" | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 program-prefetch=true" | FileCheck %s --check-prefix=NONE
// With `program-prefetch-l2` each program also prefetches the next one's
// first K/V blocks into L2 (and Q's rows where no bulk copy loads them):
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 program-prefetch=true program-prefetch-l2=true" | FileCheck %s --check-prefix=L2
// One program per thread block (`prefetch-ahead=2`): after its first
// copies, each prefetches into L2 the first blocks of the thread block
// 2 x nsmid on in launch order:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="prefetch-ahead=2" | FileCheck %s --check-prefix=WAVE
// With `program-prefetch-kv` the diagonal loop's copies past the last block
// take the next program's first K and V blocks, which that program then
// does not copy:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 program-prefetch=true program-prefetch-kv=true" | FileCheck %s --check-prefix=KV
// Program loops without it and without tensor copies (which program loops
// take by default, docs/ProgramLoops.md) keep Q's cp.async:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 tensor-copies=none" | FileCheck %s --check-prefix=NONE

// The tiles take 55296 bytes; the 4 warps' mbarriers 32 more.
// CHECK-LABEL: gpu.func @pp_kernel
// CHECK-SAME:    attn.shared_memory_bytes = 55328
// Before the loop: each warp's mbarrier (lane 0 initializes it, one arrival
// a phase), zeros in the rows past the valid ones (no copy writes them),
// then the first program's rows.
// CHECK:         %[[C55296:.*]] = arith.constant 55296 : index
// CHECK:         %[[MB:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK:         scf.if
// CHECK-NEXT:      arith.constant 1 : i32
// CHECK-NEXT:      nvvm.mbarrier.init %[[MB]], %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT:      nvvm.fence.mbarrier.init
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK:             llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK:         gpu.barrier
// CHECK:         scf.if
// The expected bytes (this warp's valid rows x 256) before any copy.
// CHECK:           arith.muli %{{.*}}, %c256{{.*}} : index
// CHECK:             nvvm.mbarrier.arrive.expect_tx %[[MB]], %{{.*}} : !llvm.ptr<3>, i32
// CHECK:           nvvm.bar.warp.sync
// CHECK:             nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[MB]], %c256_i32 : !llvm.ptr<7>, <1>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %[[TRIP:.*]] step %{{.*}} : i32 {
// The next program's Q view, at the top of the program (few registers live
// there): the (batch, head) pair first + t + 1.
// CHECK:           llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.x;", "=r"
// CHECK:           %[[N1:.*]] = arith.addi %[[T]], %{{.*}} : i32
// CHECK-NEXT:      %[[BH1:.*]] = arith.addi %{{.*}}, %[[N1]] : i32
// CHECK-NEXT:      arith.index_castui
// CHECK-NEXT:      arith.divui %[[BH1]]
// CHECK:           %[[NEXTQ:.*]] = memref.subview %arg0
// A program's first copies are K's and V's only (one run, two groups), and
// nothing waits for a group of Q.
// CHECK:           gpu.barrier
// CHECK-COUNT-8:   nvvm.cp.async.shared.global
// CHECK:           nvvm.cp.async.commit.group
// CHECK-NEXT:      nvvm.cp.async.commit.group
// CHECK-NOT:       nvvm.cp.async.wait.group
// Program t waits for phase t % 2 of its warp's mbarrier, then reads the
// fragments of its warp's rows.
// CHECK:           %[[MBT:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK:           %[[PAR:.*]] = arith.andi %[[T]], %{{.*}} : i32
// CHECK-NEXT:      arith.constant 10000000 : i32
// CHECK-NEXT:      nvvm.mbarrier.try_wait.parity %[[MBT]], %[[PAR]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-COUNT-32:  llvm.load volatile %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// The warp's reads before the copies that overwrite the rows, then the
// next program's rows (if there is one).
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      arith.constant -1 : i32
// CHECK-NEXT:      nvvm.bar.warp.sync
// CHECK-NEXT:      arith.constant 1 : i32
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[T]], %{{.*}} : i32
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %[[TRIP]] : i32
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK:             memref.dim %[[NEXTQ]]
// CHECK:               nvvm.mbarrier.arrive.expect_tx %[[MBT]], %{{.*}} : !llvm.ptr<3>, i32
// CHECK:             memref.extract_strided_metadata %[[NEXTQ]]
// CHECK:               nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %[[MBT]], %c256_i32
// CHECK:           scf.for
// CHECK-NOT:       nvvm.cp.async.bulk
// CHECK:         } {attn.program_loop}

// 16-bit kernels re-read Q's fragments every key block: Q stays on cp.async.
// CHECK-LABEL: gpu.func @pp16_kernel
// CHECK-NOT:     nvvm.mbarrier
// CHECK-NOT:     nvvm.cp.async.bulk
// CHECK:         gpu.return

// At the top of program t, if there is a program t + 1: one prefetch per
// row (thread r, row r) of its first K and V blocks (the first loop's, then
// the diagonal loop's first block); Q's rows come by the bulk copies.
// L2-LABEL: gpu.func @pp_kernel
// L2:         scf.for %[[T:.*]] = %{{.*}} to %[[TRIP:.*]] step %{{.*}} : i32 {
// L2-NEXT:      llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.x;", "=r"
// L2:           %[[N:.*]] = arith.addi %[[T]], %{{.*}} : i32
// L2-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[N]], %[[TRIP]] : i32
// L2-NEXT:      scf.if %[[MORE]] {
// L2:             arith.addi %{{.*}}, %[[N]] : i32
// L2:             memref.subview %arg1
// L2:             scf.if
// L2-NEXT:          arith.muli
// L2:               nvvm.cp.async.bulk.prefetch %{{.*}}, %c256_i32 : <1>
// L2:             memref.subview %arg2
// L2:               nvvm.cp.async.bulk.prefetch
// L2:             memref.subview %arg1
// L2:               nvvm.cp.async.bulk.prefetch
// L2:             memref.subview %arg2
// L2:               nvvm.cp.async.bulk.prefetch
// L2-NOT:           nvvm.cp.async.bulk.prefetch
// L2:           nvvm.mbarrier.try_wait.parity
// L2:         } {attn.program_loop}
// 16-bit kernels' Q is not bulk-copied: its rows are prefetched too.
// L2-LABEL: gpu.func @pp16_kernel
// L2:         scf.for
// L2:           scf.if
// L2:             memref.subview %arg0
// L2:               nvvm.cp.async.bulk.prefetch %{{.*}}, %c128_i32{{.*}} : <1>
// L2-COUNT-4:       nvvm.cp.async.bulk.prefetch
// L2-NOT:           nvvm.cp.async.bulk.prefetch

// WAVE-LABEL: gpu.func @pp_kernel
// WAVE:         %[[BX:.*]] = gpu.block_id x
// WAVE:         %[[BZ:.*]] = gpu.block_id z
// WAVE:         %[[BY:.*]] = gpu.block_id y
// The program's own first copies (Q's, then the first K and V blocks').
// Launch order is x fastest, then y (head), then z (batch).
// WAVE:         nvvm.cp.async.commit.group
// WAVE:         nvvm.cp.async.commit.group
// WAVE-NEXT:    nvvm.cp.async.commit.group
// WAVE-NEXT:    %[[NX:.*]] = gpu.grid_dim x
// WAVE-NEXT:    %[[NY:.*]] = gpu.grid_dim y
// WAVE-NEXT:    %[[NZ:.*]] = gpu.grid_dim z
// WAVE-NEXT:    %[[SMS:.*]] = nvvm.read.ptx.sreg.nsmid : i32
// WAVE-NEXT:    %[[SMSI:.*]] = arith.index_castui %[[SMS]] : i32 to index
// WAVE-NEXT:    %[[NXY:.*]] = arith.muli %[[NX]], %[[NY]] : index
// WAVE-NEXT:    %[[YX:.*]] = arith.muli %[[BY]], %[[NX]] : index
// WAVE-NEXT:    %[[ZXY:.*]] = arith.muli %[[BZ]], %[[NXY]] : index
// WAVE-NEXT:    %[[YZ:.*]] = arith.addi %[[YX]], %[[ZXY]] : index
// WAVE-NEXT:    %[[LIN:.*]] = arith.addi %[[BX]], %[[YZ]] : index
// WAVE-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// WAVE-NEXT:    %[[WAVE:.*]] = arith.muli %[[SMSI]], %[[C2]] : index
// WAVE-NEXT:    %[[AHEAD:.*]] = arith.addi %[[LIN]], %[[WAVE]] : index
// WAVE-NEXT:    %[[ALL:.*]] = arith.muli %[[NXY]], %[[NZ]] : index
// WAVE-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[AHEAD]], %[[ALL]] : index
// WAVE-NEXT:    scf.if %[[IN]] {
// WAVE-NEXT:      %[[PLANE:.*]] = arith.divui %[[AHEAD]], %[[NX]] : index
// WAVE-NEXT:      %[[BX2:.*]] = arith.remui %[[AHEAD]], %[[NX]] : index
// WAVE-NEXT:      %[[BY2:.*]] = arith.remui %[[PLANE]], %[[NY]] : index
// WAVE-NEXT:      %[[BZ2:.*]] = arith.divui %[[PLANE]], %[[NY]] : index
// WAVE-NEXT:      arith.index_castui %[[BZ2]] : index to i32
// WAVE:           arith.index_castui %[[BY2]] : index to i32
// WAVE:           arith.index_castui %[[BX2]] : index to i32
// WAVE:           memref.subview %arg0
// WAVE:             nvvm.cp.async.bulk.prefetch %{{.*}}, %c256_i32 : <1>
// WAVE:           memref.subview %arg1
// WAVE:             nvvm.cp.async.bulk.prefetch
// WAVE:           memref.subview %arg2
// WAVE:             nvvm.cp.async.bulk.prefetch
// WAVE:         nvvm.cp.async.wait.group
// WAVE-NOT:     nvvm.read.ptx.sreg.nsmid
// WAVE:         gpu.return

// A flag per tile (K's, V's), in registers: cleared before the loop; each
// program reads and clears them at its top.
// KV-LABEL: gpu.func @pp_kernel
// KV:         %[[FV:.*]] = memref.alloca() : memref<1xi1>
// KV-NEXT:    %[[FK:.*]] = memref.alloca() : memref<1xi1>
// KV:         memref.store %{{.*}}, %[[FK]][%{{.*}}] : memref<1xi1>
// KV:         memref.store %{{.*}}, %[[FV]][%{{.*}}] : memref<1xi1>
// KV-NEXT:    scf.for %[[T:.*]] = %{{.*}} to %[[TRIP:.*]] step %{{.*}} : i32 {
// KV:           %[[SV:.*]] = memref.load %[[FV]][%{{.*}}] : memref<1xi1>
// KV:           memref.store %{{.*}}, %[[FV]]
// KV:           %[[SK:.*]] = memref.load %[[FK]][%{{.*}}] : memref<1xi1>
// KV:           memref.store %{{.*}}, %[[FK]]
// The first blocks' copies, each skipped where its flag was set (their
// commit groups stay: the waits count them).
// KV:           gpu.barrier
// KV:           %[[NSK:.*]] = arith.xori %[[SK]], %{{.*}} : i1
// KV-NEXT:      scf.if %[[NSK]] {
// KV:             nvvm.cp.async.shared.global
// KV:           %[[NSV:.*]] = arith.xori %[[SV]], %{{.*}} : i1
// KV-NEXT:      scf.if %[[NSV]] {
// KV:             nvvm.cp.async.shared.global
// KV:           nvvm.cp.async.commit.group
// KV-NEXT:      nvvm.cp.async.commit.group
// KV:           } {attn.pipelined = 2 : i64}
// In the diagonal loop: no rows, the block at the loop's end, the first
// block's slot and a next program: that program's first K block, and its
// flag; then V's the same way.
// KV:           scf.for
// KV:             %[[NOROWS:.*]] = arith.xori %{{.*}}, %{{.*}} : i1
// KV:             %[[END:.*]] = arith.muli %{{.*}}, %c32{{.*}} : index
// KV-NEXT:        %[[AT:.*]] = arith.cmpi eq, %{{.*}}, %[[END]] : index
// KV-NEXT:        %[[SLOT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// KV:             %[[N:.*]] = arith.addi %[[T]], %{{.*}} : i32
// KV-NEXT:        %[[MORE:.*]] = arith.cmpi slt, %[[N]], %[[TRIP]] : i32
// KV-NEXT:        %[[A:.*]] = arith.andi %[[NOROWS]], %[[AT]] : i1
// KV-NEXT:        %[[B:.*]] = arith.andi %[[SLOT]], %[[MORE]] : i1
// KV-NEXT:        %[[TAKE:.*]] = arith.andi %[[A]], %[[B]] : i1
// KV-NEXT:        scf.if %[[TAKE]] {
// KV:               arith.addi %{{.*}}, %[[N]] : i32
// KV:               memref.subview %arg1
// KV:               nvvm.cp.async.shared.global
// KV:               memref.store %{{.*}}, %[[FK]][%{{.*}}] : memref<1xi1>
// KV:             scf.if %{{.*}} {
// KV:               memref.subview %arg2
// KV:               nvvm.cp.async.shared.global
// KV:               memref.store %{{.*}}, %[[FV]][%{{.*}}] : memref<1xi1>
// KV:             nvvm.cp.async.commit.group
// KV-NEXT:        nvvm.cp.async.commit.group
// KV:           } {attn.pipelined = 2 : i64}
// KV:         } {attn.program_loop}

// NONE-NOT: nvvm.mbarrier
// NONE-NOT: nvvm.cp.async.bulk
// NONE-NOT: nvvm.cp.async.bulk.prefetch
// NONE-NOT: nvvm.read.ptx.sreg.nsmid

func.func @pp(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  return %o : tensor<2x4x?x64xf32>
}

func.func @pp16(%q: tensor<2x4x?x64xf16>, %k: tensor<2x4x?x64xf16>, %v: tensor<2x4x?x64xf16>) -> tensor<2x4x?x64xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>
  return %o : tensor<2x4x?x64xf16>
}

// Q K^T and P V on wgmma (--convert-attn-to-nvvm="wgmma=true"): an f32 (tf32)
// causal attention, head dim 32, tiled for sm_90a into 64-row programs of
// one warpgroup (4 warps of 16 rows):
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s

// Pipelined with two stages, the cp.async copies land K in the core-matrix
// layout and the loop head fences before its barrier:
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=PIPE

// At head dim 64 (64 to 128), Q's tf32 fragments are read into registers
// once, after Q's copy, and Q K^T takes A from them (inline PTX): Q keeps
// its padded layout and K alone is in core matrices.
// RUN: sed 's/x32xf32/x64xf32/g' %s \
// RUN:   | attn-opt --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=REG

// Rows under 128 bytes (f16 at head dim 16: 32 bytes) keep the plain
// core-matrix layout: no alignment, no swizzle; Q and K by descriptors with
// leading byte offset 128 (8 << 16) and stride (16 / 8) * 128 = 256 bytes
// (16 << 32), no swizzle bits.
// RUN: sed 's/x32xf32/x16xf16/g' %s \
// RUN:   | attn-opt --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT:  arith.xori
// PLAIN-NOT:  %c1023
// PLAIN:      scf.for
// PLAIN:        arith.ori %{{.*}}, %c68720001024_i64
// PLAIN:        arith.ori %{{.*}}, %c68720001024_i64
// PLAIN-NEXT:   nvvm.wgmma.fence.aligned
// PLAIN:        nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]

// Off by default, and where wgmma cannot run: sm_80, 32-row warps (128 rows
// on 4 warps), exact f32.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=128 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=MMA
// RUN: sed 's/causal = #attn.causal<top_left>/causal = #attn.causal<top_left>, precision = #attn.precision<ieee>/' %s \
// RUN:   | attn-opt --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="wgmma=true" | FileCheck %s --check-prefix=FMA

// Q (64 x 32 f32) and K (32 x 32) have 128-byte rows: both take the
// swizzled core-matrix layout, allocated first and together after 1024
// bytes that align them (Q's view at 0, its base rounded up to 1024; K's
// view at 9216, its base Q's + 8192). V keeps its 16-byte row padding
// (32 * 36 * 4 bytes at 13312), and its transposed copy for P V follows,
// not swizzled, its 4 groups of 8 head-dim rows padded by 16 bytes:
// 17920 + 32 * 32 * 4 + 4 * 16.
// CHECK:      attn.shared_memory_bytes = 22080
// CHECK:      memref.view {{.*}}[%c0{{.*}}] : {{.*}} to memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[QP:.*]] = memref.extract_aligned_pointer_as_index
// CHECK:      %[[QR:.*]] = arith.addi %[[QP]], %c1023
// CHECK:      %[[QB:.*]] = arith.andi %[[QR]], %c-1024
// CHECK:      memref.view {{.*}}[%c9216{{.*}}] : {{.*}} to memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK:      %[[KB:.*]] = arith.addi %[[QB]], %c8192
// CHECK:      memref.view {{.*}}[%c13312{{.*}}] : {{.*}} to memref<32x36xf32, #gpu.address_space<workgroup>>
// CHECK:      memref.view {{.*}}[%c17920{{.*}}] : {{.*}} to memref<32x32xf32, #gpu.address_space<workgroup>>
// The Q tile load, 8 threads to a row's 128 bytes: chunk (row, col) at
// (col bytes / 128) * 8192 + (row / 8) * 1024 + (row % 8) * 128 +
// ((col bytes / 16) % 8 ^ row % 8) * 16, a 16-byte store through a
// pointer; then each thread fences its generic-proxy writes for wgmma
// before the barrier.
// CHECK:      %[[XOR:.*]] = arith.xori %{{.*}}, %[[RM:.*]] : index
// CHECK:      arith.muli %{{.*}}, %c8192{{.*}} : index
// CHECK:      arith.muli %{{.*}}, %c1024{{.*}} : index
// CHECK:      arith.muli %[[RM]], %c128{{.*}} : index
// CHECK:      arith.muli %[[XOR]], %c16{{.*}} : index
// CHECK:      arith.addi %[[QB]], %{{.*}} : index
// CHECK:      llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK:      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// In the key loop, after K's loads and their fence, the 16 accumulator
// registers of S; then the descriptors of Q (offset 8 row groups x 1024
// bytes per warpgroup) and K: start address in 16-byte units, swizzle mode
// 1 (128 bytes, 1 << 62), stride byte offset 1024 (64 << 32), leading byte
// offset unused (1 << 16); four k steps of 8 (32 bytes in the atom: +2 in
// the start field each). The wgmma fence comes after all of them, right
// before the first wgmma (ptxas serialized the wgmma of a kernel whose
// accumulators were zeroed after the fence: C7511).
// CHECK:      scf.for
// CHECK:        nvvm.fence.proxy
// CHECK-NEXT:   gpu.barrier
// CHECK-NOT:    nvvm.wgmma.fence.aligned
// CHECK-COUNT-16: llvm.insertvalue
// CHECK-NOT:    nvvm.wgmma.fence.aligned
// CHECK:        %[[WG:.*]] = arith.divui %thread_id_x, %c128
// CHECK:        %[[WO:.*]] = arith.muli %[[WG]], %c8192
// CHECK:        arith.addi %[[QB]], %[[WO]]
// CHECK:        arith.andi %{{.*}}, %c262143_i64
// CHECK:        arith.shrui %{{.*}}, %c4_i64
// CHECK:        %[[QD:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64
// CHECK:        %[[KD:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64
// CHECK-NEXT:   nvvm.wgmma.fence.aligned
// CHECK:        %[[A0:.*]] = arith.addi %[[QD]], %c0_i64
// CHECK:        %[[B0:.*]] = arith.addi %[[KD]], %c0_i64
// CHECK:        nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 32, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK:        arith.addi %[[QD]], %c2_i64
// CHECK:        nvvm.wgmma.mma_async
// CHECK:        arith.addi %[[QD]], %c4_i64
// CHECK:        nvvm.wgmma.mma_async
// CHECK:        arith.addi %[[QD]], %c6_i64
// CHECK:        nvvm.wgmma.mma_async
// CHECK-NOT:    nvvm.wgmma.mma_async
// CHECK:        nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:   nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-16: llvm.extractvalue
// tf32 P V on wgmma too. V's tile is copied into its transposed tile: per
// thread two steps of one 16-byte load and four 4-byte stores; fenced for
// the async proxy and published. Then four k steps of 8 keys, A from the
// accumulator registers of P (0, 2, 1, 3: keys 2q and 2q + 1 stand for
// k = q and q + 4) as inline PTX (m64n32k8: n is the head dim), B by the
// transposed tile's descriptor: stride (32 / 4) * 128 + 16 = 1040 bytes
// (65 << 32 | 8 << 16).
// CHECK-NOT:    nvvm.mma.sync
// CHECK:        vector.load {{.*}} : memref<32x36xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK:        vector.load {{.*}} : memref<32x36xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK-NEXT:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:   gpu.barrier
// CHECK-NOT:    nvvm.wgmma.fence.aligned
// CHECK:        %[[VD:.*]] = arith.ori %{{.*}}, %c279173398528_i64
// CHECK:        %[[P0:.*]] = memref.load %[[P:.*]][%c0{{.*}}] : memref<16xf32>
// CHECK-NEXT:   %c2{{.*}} = arith.constant 2 : index
// CHECK-NEXT:   %[[P2:.*]] = memref.load %[[P]][%c2{{.*}}] : memref<16xf32>
// CHECK:        %[[P1:.*]] = memref.load %[[P]][%c1{{.*}}] : memref<16xf32>
// CHECK:        %[[P3:.*]] = memref.load %[[P]][%c3{{.*}}] : memref<16xf32>
// CHECK:        %[[A0:.*]] = llvm.bitcast %[[P0]] : f32 to i32
// CHECK:        %[[D0:.*]] = arith.addi %[[VD]], %c0_i64
// The first one carries the wgmma fence, after every register it reads.
// CHECK:        llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;\0A\09wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}, {$16, $17, $18, $19}, $20, 1, 1, 1;", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" %[[A0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[D0]],
// CHECK-COUNT-3: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// CHECK-NEXT:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:   nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT:    nvvm.mma.sync
// CHECK:        scf.yield

// PIPE:       scf.for
// PIPE:         nvvm.cp.async.wait.group 0
// PIPE-NEXT:    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// PIPE-NEXT:    gpu.barrier
// PIPE:         nvvm.cp.async.shared.global
// PIPE:         nvvm.wgmma.mma_async

// K (32 x 64 f32, swizzled) comes first, after the 1024 bytes that align
// it. Q's tile (64 x 68 f32, 17408 bytes) is read once, into registers, so
// the transposed V tile of P V (64 x 32 f32 and 8 x 16 bytes of padding)
// takes its place: 9216 + 17408 + 32 * 68 * 4 (V) bytes in all.
// REG:        attn.shared_memory_bytes = 35328
// REG:        memref.view {{.*}}[%c0{{.*}}] : {{.*}} to memref<32x64xf32, #gpu.address_space<workgroup>>
// REG:        %[[QV:.*]] = memref.view {{.*}}[%c9216{{.*}}] : {{.*}} to memref<64x68xf32, #gpu.address_space<workgroup>>
// REG:        memref.view {{.*}}[%c26624{{.*}}] : {{.*}} to memref<32x68xf32, #gpu.address_space<workgroup>>
// REG:        memref.view {{.*}}[%c9216{{.*}}] : {{.*}} to memref<32x64xf32, #gpu.address_space<workgroup>>
// REG:        %[[X:.*]] = memref.load %[[QV]][
// REG:        memref.store %[[X]], %[[QF:.*]][%c0{{.*}}] : memref<32xf32>
// REG:        scf.for
// REG-NOT:      nvvm.wgmma.fence.aligned
// REG:          %[[Q0:.*]] = memref.load %[[QF]][%c0{{.*}}] : memref<32xf32>
// REG:          llvm.bitcast %[[Q0]] : f32 to i32
// REG:          llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;\0A\09wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// REG-COUNT-7:  llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// REG-NOT:      nvvm.wgmma.mma_async
// REG:          nvvm.wgmma.commit.group.sync.aligned
// REG:          llvm.inline_asm has_side_effects asm_dialect = att "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32

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

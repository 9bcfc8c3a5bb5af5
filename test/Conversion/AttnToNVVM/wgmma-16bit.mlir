// 16-bit attention on sm_90a runs both products on wgmma: a bf16 GQA causal
// attention at head dim 128, tiled by the sm_90a default (64-row programs of one
// warpgroup, key blocks of 64, two stages) and pipelined.
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s
// tensor-copies=none keeps every thread's cp.async for K and V; a name
// that is not a mode is an error:
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="tensor-copies=none" | FileCheck %s --check-prefix=NOTC
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | not attn-opt --convert-attn-to-nvvm="tensor-copies=k" 2>&1 | FileCheck %s --check-prefix=BAD
// NOTC-LABEL: gpu.func @attn_kernel
// NOTC-NOT:     attn.kernel_tensor_maps
// NOTC-SAME:    attn.shared_memory_bytes = 82944
// NOTC-NOT:     nvvm.mbarrier
// NOTC:         nvvm.cp.async.shared.global
// NOTC-NOT:     nvvm.cp.async.bulk.tensor
// NOTC:         nvvm.wgmma.mma_async
// BAD: error: --convert-attn-to-nvvm: tensor-copies must be auto or none, got 'k'
// On sm_80 the same program runs on mma.sync (ldmatrix).
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=64 num-warps=4 num-stages=2" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=MMA

// Q, K and V in the 128-byte swizzle (unpadded rows of 256 bytes), after
// the 1024 bytes that align the swizzled tiles: Q, then two slots each of
// K and V, then an 8-byte mbarrier per slot of K and V: only wgmma reads
// them, so by default (tensor-copies=auto) TMA tensor copies load both, one
// per 128-byte atom (64 columns), from a tensor map each (the kernel's last
// two arguments, -1000 and -1001 among its host arguments).
// CHECK-LABEL: gpu.func @attn_kernel
// CHECK-SAME:    attn.kernel_args = array<i32: 0, 1, 2, -1, -1000, -1001>
// CHECK-SAME:    attn.kernel_tensor_maps = [{arg = 1 : i64, box = array<i64: 1, 1, 64, 64>, swizzle = 128 : i64}, {arg = 2 : i64, box = array<i64: 1, 1, 64, 64>, swizzle = 128 : i64}]
// CHECK-SAME:    attn.shared_memory_bytes = 82976
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK:         memref.view {{.*}} to memref<2x64x128xbf16, #gpu.address_space<workgroup>>
// CHECK:         memref.view {{.*}} to memref<2x64x128xbf16, #gpu.address_space<workgroup>>
// CHECK:         nvvm.mbarrier.arrive.expect_tx %[[KBAR:.*]], %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg4, %[[KBAR]], box
// CHECK:         nvvm.mbarrier.arrive.expect_tx %[[VBAR:.*]], %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg5, %[[VBAR]], box
// Each wgmma waits for the phase of its slot's latest fill.
// CHECK:         mbarrier.try_wait.parity.shared::cta.b64
// Q K^T: one m64n64k16 per 16 columns of the head dim, both operands by
// descriptor (128-byte swizzle: stride byte offset 1024, mode 1), waited
// for in place.
// CHECK:         nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:         nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:         mbarrier.try_wait.parity.shared::cta.b64
// P V: V's descriptor reads it N-major: leading byte offset 64 * 128 bytes
// (the next 64 columns of the head dim, 512 << 16), stride byte offset
// 1024 (the next 8 keys, 64 << 32), 128-byte swizzle (1 << 62).
// CHECK:         arith.constant 4611686293338849280 : i64
// P's f32 accumulators become bf16 pairs, all four k steps' A registers
// before the first wgmma (which carries the fence).
// CHECK-COUNT-16: vector.from_elements {{.*}} : vector<2xbf16>
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;\0A\09wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}}, {$64, $65, $66, $67}, $68, 1, 1, 1, 1;"
// CHECK-COUNT-3: "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}}, {$64, $65, $66, $67}, $68, 1, 1, 1, 1;"
// CHECK:         nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT:     nvvm.ldmatrix
// CHECK-NOT:     nvvm.mma.sync

// MMA-LABEL: gpu.func @attn_kernel
// MMA-NOT:     attn.kernel_tensor_maps
// MMA:         nvvm.ldmatrix
// MMA:         nvvm.mma.sync
// MMA-NOT:     wgmma

func.func @attn(%q: tensor<2x8x?x128xbf16>, %k: tensor<2x2x?x128xbf16>, %v: tensor<2x2x?x128xbf16>) -> tensor<2x8x?x128xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<2x8x?x128xbf16>, tensor<2x2x?x128xbf16>, tensor<2x2x?x128xbf16> -> tensor<2x8x?x128xbf16>
  return %o : tensor<2x8x?x128xbf16>
}

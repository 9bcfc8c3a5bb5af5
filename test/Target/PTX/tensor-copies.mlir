// The seed's kernels with Q, K and V loaded by TMA tensor copies
// (attn-translate --tensor-copies=auto, the default) are PTX
// that ptxas assembles for sm_90a without a stack frame or spills: thread 0
// initializes one mbarrier for Q's tile, one per K slot and one per V slot,
// issues one cp.async.bulk.tensor per 128-byte atom of Q (four boxes of
// 64 rows x 32 f32 in the 128-byte swizzle, unpadded: 32768 bytes) and of a
// K block (four at head dim 128) and one per V block (32 padded rows: 16896 bytes) after the
// expected bytes, and every thread waits for the phase before it reads
// Q's fragments, before the wgmma (K) and before the mma.sync (V) that
// read a slot. The manifest is version 3, with the tensor maps of Q, K and
// V as the last parameters. No cp.async is left.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --tensor-copies=auto -o %t/k.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/k.ptx
// RUN: %ptxas -arch=sm_90a -v %t/k.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k.json
// Without the option, the same kernel:
// RUN: mkdir -p %t/auto && attn-translate --attn-to-ptx %s --chip=sm_90a -o %t/auto/k.ptx
// RUN: diff %t/k.ptx %t/auto/k.ptx
// RUN: diff %t/k.json %t/auto/k.json
// With --tensor-copies=none, no tensor copy and a version 1 manifest:
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --tensor-copies=none -o %t/d.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t/d.ptx
// RUN: FileCheck %s --check-prefix=OFFMANIFEST < %t/d.json
// PTX-LABEL: .entry seed_causal_kernel(
// PTX:      .param .u64 .ptr .align 1 seed_causal_kernel_param_44,
// PTX-NEXT: .param .u64 .ptr .align 1 seed_causal_kernel_param_45,
// PTX-NEXT: .param .u64 .ptr .align 1 seed_causal_kernel_param_46{{ *}}
// PTX-NEXT: )
// PTX-COUNT-5: mbarrier.init.shared.b64
// PTX-NOT:  mbarrier.init
// PTX:      fence.mbarrier_init.release.cluster;
// PTX:      mov.b32 [[QBYTES:%r[0-9]+]], 32768;
// PTX-NEXT: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [[QBYTES]];
// PTX-COUNT-4: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:      mov.b32 [[BYTES:%r[0-9]+]], 16384;
// PTX-NEXT: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [[BYTES]];
// PTX-COUNT-4: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:      mov.b32 [[VBYTES:%r[0-9]+]], 16896;
// PTX-NEXT: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [[VBYTES]];
// PTX:      cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:      bar.sync
// PTX:      mbarrier.try_wait.parity.shared::cta.b64
// PTX:      wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// PTX:      mbarrier.try_wait.parity.shared::cta.b64
// PTX:      mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-NOT:  cp.async.cg
// PTXAS:    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error
// MANIFEST:      "version": 3,
// MANIFEST:      {"kind": "memref", "operand": "output", "rank": 4},
// MANIFEST-NEXT: {
// MANIFEST-NEXT:   "kind": "tensor_map",
// MANIFEST-NEXT:   "operand": "query",
// MANIFEST-NEXT:   "box": [1, 1, 64, 32],
// MANIFEST-NEXT:   "swizzle": 128
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT:   "kind": "tensor_map",
// MANIFEST-NEXT:   "operand": "key",
// MANIFEST-NEXT:   "box": [1, 1, 32, 32],
// MANIFEST-NEXT:   "swizzle": 128
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT:   "kind": "tensor_map",
// MANIFEST-NEXT:   "operand": "value",
// MANIFEST-NEXT:   "box": [1, 1, 32, 132],
// MANIFEST-NEXT:   "swizzle": 0
// MANIFEST-NEXT: }
// OFF-NOT:     cp.async.bulk.tensor
// OFF-NOT:     mbarrier
// OFFMANIFEST: "version": 1,
// OFFMANIFEST-NOT: tensor_map
func.func @seed_causal(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

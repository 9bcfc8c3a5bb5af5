// PTX and the launch manifest of a bf16 GQA causal attention.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -o %t/gqa.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/gqa.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/gqa.json
// The same to stdout with an explicit manifest path and config overrides.
// Two warps are no warpgroup: both products on mma.sync, as on sm_80.
// RUN: attn-translate --attn-to-ptx %s --manifest=%t/m.json --block-m=32 --num-warps=2 | FileCheck %s --check-prefix=MMA
// RUN: FileCheck %s --check-prefix=OVERRIDE < %t/m.json

// PTX: .version 8.0
// PTX: .target sm_90a
// PTX: .entry gqa_kernel(
// Both matmuls on wgmma (16-bit on sm_90a: one warpgroup of 16-row warps),
// exp2 on the SFU, quad shuffles, no libdevice. Q through cp.async
// (zero-fill by source size); K/V tiles one block ahead (two stages) by TMA
// tensor copies, one per 128-byte atom, onto an mbarrier per slot that each
// wgmma waits on; the loop head waits for every cp.async group. Q K^T by
// descriptors, P V with P from registers and V read N-major (the last
// immediate, imm-trans-b).
// PTX: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// PTX: cp.async.commit_group;
// PTX: mbarrier.arrive.expect_tx.shared.b64 %rd{{[0-9]+}}, [{{.*}}], %r{{[0-9]+}};
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: mbarrier.try_wait.parity.shared::cta.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, {{ *}}1, 0, {{ *}}0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 1, 1, 1, 1;
// PTX-DAG: cp.async.wait_group 0;
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx.ftz.f32
// The output in 16-byte stores.
// PTX: st.global.v4.b32
// PTX-NOT: st.global.b16
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix
// PTX-NOT: __nv_

// MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA: ex2.approx.ftz.f32
// MMA-NOT: wgmma

// MANIFEST:      "format": "attn-mlir-manifest",
// MANIFEST-NEXT: "version": 3,
// MANIFEST-NEXT: "kernel": "gqa_kernel",
// MANIFEST-NEXT: "ptx": "gqa.ptx",
// MANIFEST-NEXT: "chip": "sm_90a",
// MANIFEST-NEXT: "function": "gqa",
// MANIFEST-NEXT: "element_type": "bf16",
// MANIFEST-NEXT: "query": {"shape": [-1, 8, -1, 64]},
// MANIFEST-NEXT: "key": {"shape": [-1, 2, -1, 64]},
// MANIFEST-NEXT: "value": {"shape": [-1, 2, -1, 64]},
// MANIFEST-NEXT: "output": {"shape": [-1, 8, -1, 64]},
// MANIFEST-NEXT: "mask": null,
// MANIFEST-NEXT: "attributes": {"scale": 0.125, "causal": "top_left", "precision": null},
// MANIFEST-NEXT: "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
// MANIFEST-NEXT: "block": [128, 1, 1],
// MANIFEST-NEXT: "grid": [{"ceil_div": ["Tq", 64]}, "Hq", "B"],
// The 1024 bytes the swizzled tiles' alignment reserves, Q 64 x 64 and two
// slots of K and of V 64 x 64 bf16 (128-byte rows, swizzled, no padding),
// and an 8-byte mbarrier per slot of K and V:
// 1024 + 8192 + 2 * 8192 + 2 * 8192 + 4 * 8.
// MANIFEST-NEXT: "shared_memory_bytes": 42016,
// MANIFEST-NEXT: "params": [
// MANIFEST-NEXT:   {"kind": "memref", "operand": "query", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "key", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "value", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "output", "rank": 4},
// The tensor maps of K and V: one box a 128-byte atom of a block's rows.
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "kind": "tensor_map",
// MANIFEST-NEXT:     "operand": "key",
// MANIFEST-NEXT:     "box": [1, 1, 64, 64],
// MANIFEST-NEXT:     "swizzle": 128
// MANIFEST-NEXT:   },
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "kind": "tensor_map",
// MANIFEST-NEXT:     "operand": "value",
// MANIFEST-NEXT:     "box": [1, 1, 64, 64],
// MANIFEST-NEXT:     "swizzle": 128
// MANIFEST-NEXT:   }
// MANIFEST-NEXT: ]

// OVERRIDE: "ptx": "gqa.ptx",
// OVERRIDE: "config": {"block_m": 32, "block_n": 64, "num_warps": 2, "num_stages": 2},
// OVERRIDE: "block": [64, 1, 1],
// OVERRIDE: "grid": [{"ceil_div": ["Tq", 32]}, "Hq", "B"],


func.func @gqa(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

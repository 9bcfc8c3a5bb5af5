// Packed sequences (cu_seqlens): the manifest (version 6) takes the two
// offset vectors as rank-1 memref params after the operands before them,
// and its grid has ceil(Tq / block_m) + N + 2 query slots (N = the
// sequences, dim(cu_seqlens_q) - 1 at launch). The sm_90a 16-bit kernel
// keeps its TMA copies of K and V (a box at row cu_k[s] + j * block_n of the
// whole packed operand) and wgmma; the lookup is a loop of loads of cu_q.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e prefill --chip=sm_90a -o %t/prefill.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/prefill.json
// RUN: FileCheck %s --check-prefix=PTX < %t/prefill.ptx
// The mma.sync / cp.async kernels (sm_80; f32 on sm_90a) compile too.
// RUN: attn-translate --attn-to-ptx %s -e prefill --chip=sm_80 -o %t/prefill80.ptx
// RUN: attn-translate --attn-to-ptx %s -e tf32 --chip=sm_90a -o %t/tf32.ptx
// RUN: FileCheck %s --check-prefix=TF32 < %t/tf32.json
// Static offsets: the grid reads N off the shapes all the same.
// RUN: attn-translate --attn-to-ptx %s -e static --chip=sm_90a -o %t/static.ptx
// RUN: FileCheck %s --check-prefix=STATIC < %t/static.json

// MANIFEST: "version": 6,
// MANIFEST: "cu_seqlens_q": {"element_type": "i32", "shape": [-1]},
// MANIFEST-NEXT: "cu_seqlens_k": {"element_type": "i32", "shape": [-1]},
// MANIFEST: "grid": [{"add": [{"ceil_div": ["Tq", 64]}, {"add": ["N", 2]}]}, "Hq", "B"],
// MANIFEST: {"kind": "memref", "operand": "value", "rank": 4},
// MANIFEST-NEXT: {"kind": "memref", "operand": "cu_seqlens_q", "rank": 1},
// MANIFEST-NEXT: {"kind": "memref", "operand": "cu_seqlens_k", "rank": 1},
// MANIFEST-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// MANIFEST-NEXT: {"kind": "memref", "operand": "lse", "rank": 3},
// MANIFEST: "operand": "key",
// MANIFEST: "operand": "value",
// PTX: .entry prefill_kernel(
// PTX: cp.async.bulk.tensor.4d
// PTX: wgmma.mma_async
// TF32: "grid": [{"add": [{"ceil_div": ["Tq", 64]}, {"add": ["N", 2]}]}, "Hq", "B"],
// STATIC: "cu_seqlens_q": {"element_type": "i32", "shape": [5]},
// STATIC: "grid": [{"add": [{"ceil_div": ["Tq", 64]}, {"add": ["N", 2]}]}, "Hq", "B"],

func.func @prefill(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<bottom_right>}
     : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
}

func.func @tf32(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x64xf32> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<top_left>}
     : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

func.func @static(%q: tensor<1x4x700x64xf16>, %k: tensor<1x4x900x64xf16>, %v: tensor<1x4x900x64xf16>, %cq: tensor<5xi32>, %ck: tensor<5xi32>) -> tensor<1x4x700x64xf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<5xi32>, tensor<5xi32>) {window = #attn.window<left = 64, right = 0>}
     : tensor<1x4x700x64xf16>, tensor<1x4x900x64xf16>, tensor<1x4x900x64xf16> -> tensor<1x4x700x64xf16>
  return %o : tensor<1x4x700x64xf16>
}

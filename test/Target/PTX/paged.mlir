// A paged KV cache (block_table): the manifest (version 7) takes the table
// as a rank-2 memref param after kv_lengths, with its shape (B x P) and the
// page size; Tk is P * page (the split count of the decode kernel counts
// logical keys). The sm_90a 16-bit kernels keep TMA K/V and wgmma: a key
// block is min(block_n, page) keys of one page, its box at (page id, KV
// head, row j0 % page, 0), the id loaded from the table (clamped to the
// pool) by the thread that issues the copy, right before it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e decode --chip=sm_90a -o %t/decode.ptx
// RUN: FileCheck %s --check-prefix=DECODE < %t/decode.json
// RUN: attn-translate --attn-to-ptx %s -e prefill --chip=sm_90a -o %t/prefill.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/prefill.json
// RUN: FileCheck %s --check-prefix=PTX < %t/prefill.ptx
// RUN: attn-translate --attn-to-ptx %s -e big_page --chip=sm_90a -o %t/big.ptx
// RUN: FileCheck %s --check-prefix=BIG < %t/big.ptx
// The mma.sync / cp.async kernels (sm_80; f32 on sm_90a) compile too.
// RUN: attn-translate --attn-to-ptx %s -e prefill --chip=sm_80 -o %t/prefill80.ptx
// RUN: attn-translate --attn-to-ptx %s -e tf32 --chip=sm_90a -o %t/tf32.ptx
// RUN: FileCheck %s --check-prefix=TF32 < %t/tf32.json
// A page the TMA boxes cannot take is an error.
// RUN: not attn-translate --attn-to-ptx %s -e odd --chip=sm_90a -o %t/odd.ptx 2>&1 | FileCheck %s --check-prefix=ODD

// DECODE: "version": 7,
// DECODE: "block_table": {"element_type": "i32", "shape": [-1, -1], "page_size": 64},
// DECODE: "config": {"block_m": 64, "block_n": 64,
// Split-KV over the logical keys Tk = P * 64.
// DECODE: {"ceil_div": ["Tk", 256]},
// DECODE: {"kind": "memref", "operand": "kv_lengths", "rank": 1},
// DECODE-NEXT: {"kind": "memref", "operand": "block_table", "rank": 2},
// DECODE: "kind": "tensor_map",
// DECODE-NEXT: "operand": "key",
// DECODE-NEXT: "box": [1, 1, 64, 64],

// MANIFEST: "version": 7,
// MANIFEST: "key": {"shape": [-1, 8, 16, 64]},
// MANIFEST: "block_table": {"element_type": "i32", "shape": [-1, -1], "page_size": 16},
// MANIFEST: "config": {"block_m": 64, "block_n": 16,
// MANIFEST: {"kind": "memref", "operand": "kv_lengths", "rank": 1},
// MANIFEST-NEXT: {"kind": "memref", "operand": "block_table", "rank": 2},
// MANIFEST-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// MANIFEST: "operand": "key",
// MANIFEST-NEXT: "box": [1, 1, 16, 64],
// MANIFEST: "operand": "value",
// MANIFEST-NEXT: "box": [1, 1, 16, 64],

// id = clamp(block_table[b, j0 / 16], 0, NP - 1); a block of 16 keys is a
// whole page: the box's row is 0.
// PTX: .entry prefill_kernel(
// The batch's kv_lengths entry first, then the first block's page.
// PTX: ld.global.b32
// PTX: ld.global.b32 [[ID:%r[0-9]+]], [%rd{{[0-9]+}}];
// PTX-NEXT: max.s32 [[LO:%r[0-9]+]], [[ID]], 0;
// PTX-NEXT: cvt.u64.u32 [[LO64:%rd[0-9]+]], [[LO]];
// PTX-NEXT: min.s64 [[PAGE64:%rd[0-9]+]], [[LO64]], %rd{{[0-9]+}};
// PTX-NEXT: cvt.u32.u64 [[PAGE:%r[0-9]+]], [[PAGE64]];
// PTX: mov.b32 [[ZERO:%r[0-9]+]], 0;
// PTX-NEXT: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {[[ZERO]], [[ZERO]], %r{{[0-9]+}}, [[PAGE]]}]

// Pages of 256 keys hold 4 key blocks of 64: the box starts at row
// j0 % 256 of the page; the prologue's second block (j0 = 64) at row 64
// of the page its own lookup found.
// BIG: .entry big_page_kernel(
// BIG: ld.global.b32
// BIG: ld.global.b32 [[ID:%r[0-9]+]], [%rd{{[0-9]+}}];
// BIG: cvt.u32.u64 [[PAGE:%r[0-9]+]], %rd{{[0-9]+}};
// BIG: mov.b32 [[ROW:%r[0-9]+]], 64;
// BIG-NEXT: mov.b32 [[ZERO:%r[0-9]+]], 0;
// BIG-NEXT: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {[[ZERO]], [[ROW]], %r{{[0-9]+}}, [[PAGE]]}]

// TF32: "block_table": {"element_type": "i32", "shape": [4, -1], "page_size": 32},

// ODD: error: expects a page size ('key' dim 2 with 'block_table') that is a power of two in 16..256 on sm_90a, got 48

func.func @decode(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x64x128xbf16>, %v: tensor<?x8x64x128xbf16>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> tensor<?x32x1x128xbf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x1x128xbf16>, tensor<?x8x64x128xbf16>, tensor<?x8x64x128xbf16> -> tensor<?x32x1x128xbf16>
  return %o : tensor<?x32x1x128xbf16>
}

func.func @prefill(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x8x16x64xbf16>, %v: tensor<?x8x16x64xbf16>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x32x?x64xbf16>, tensor<?x8x16x64xbf16>, tensor<?x8x16x64xbf16> -> tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
}

func.func @big_page(%q: tensor<?x8x?x128xf16>, %k: tensor<?x8x256x128xf16>, %v: tensor<?x8x256x128xf16>, %bt: tensor<?x?xi32>) -> tensor<?x8x?x128xf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) {causal = #attn.causal<top_left>} : tensor<?x8x?x128xf16>, tensor<?x8x256x128xf16>, tensor<?x8x256x128xf16> -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

func.func @tf32(%q: tensor<4x4x?x64xf32>, %k: tensor<?x2x32x64xf32>, %v: tensor<?x2x32x64xf32>, %bt: tensor<4x?xi32>) -> tensor<4x4x?x64xf32> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<4x?xi32>) : tensor<4x4x?x64xf32>, tensor<?x2x32x64xf32>, tensor<?x2x32x64xf32> -> tensor<4x4x?x64xf32>
  return %o : tensor<4x4x?x64xf32>
}

func.func @odd(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x48x64xf16>, %v: tensor<?x8x48x64xf16>, %bt: tensor<?x?xi32>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) : tensor<?x8x?x64xf16>, tensor<?x8x48x64xf16>, tensor<?x8x48x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

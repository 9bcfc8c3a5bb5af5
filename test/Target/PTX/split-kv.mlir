// Split-KV kernels (--split-programs): a static Tq of one query block splits
// the keys over S programs per (batch, head), S evaluated at launch from the
// sizes exactly as the compiler's buildNumKeySplits computes it
// (min(ceil_div(Tk, 4 block_n), ceil_div(programs, mul(B, Hq / p))), static
// sizes as constants; p the query heads packed into a program's rows, here
// all those of a KV head). The main kernel writes the f32 workspaces
// split_output (S x B x Hq x Tq x Dv) and split_lse (S x B x Hq x Tq); the
// combine kernel, an epilogue kernel (manifest version 5), merges them into
// the output and the log-sum-exp: 128 threads per query row, grid
// (Tq, Hq, B).
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e decode_lse --chip=sm_90a --split-programs=264 -o %t/lse.ptx
// RUN: FileCheck %s --check-prefix=LSE < %t/lse.json
// RUN: attn-translate --attn-to-ptx %s -e decode --chip=sm_90a --split-programs=64 -o %t/plain.ptx
// RUN: FileCheck %s --check-prefix=PLAIN < %t/plain.json
// RUN: attn-translate --attn-to-ptx %s -e static_lengths --chip=sm_90a --split-programs=264 -o %t/lengths.ptx
// RUN: FileCheck %s --check-prefix=LENGTHS < %t/lengths.json
// The PTX has both entries.
// RUN: FileCheck %s --check-prefix=PTX < %t/lse.ptx

// LSE: "version": 5,
// LSE: "kernel": "decode_lse_kernel",
// LSE: "lse": {"shape": [-1, 8, 3]},
// LSE: "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
// LSE: "grid": [
// LSE-NEXT: {
// LSE-NEXT: "min": [
// LSE-NEXT: {"ceil_div": ["Tk", 256]},
// LSE-NEXT: {"ceil_div": [264, {"mul": ["B", 2]}]}
// LSE-NEXT: ]
// LSE-NEXT: },
// LSE-NEXT: 2,
// LSE-NEXT: "B"
// LSE-NEXT: ],
// The main kernel takes no output: the combine kernel writes it.
// LSE: "params": [
// LSE-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// LSE-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// LSE-NEXT: {"kind": "memref", "operand": "value", "rank": 4},
// LSE-NEXT: {"kind": "workspace", "name": "split_lse", "rank": 4},
// LSE-NEXT: {"kind": "workspace", "name": "split_output", "rank": 5},
// LSE: "workspace": [
// LSE-NEXT: {
// LSE-NEXT: "name": "split_output",
// LSE-NEXT: "element_bytes": 4,
// LSE-NEXT: "shape": [
// LSE-NEXT: {
// LSE-NEXT: "min": [
// LSE-NEXT: {"ceil_div": ["Tk", 256]},
// LSE-NEXT: {"ceil_div": [264, {"mul": ["B", 2]}]}
// LSE-NEXT: ]
// LSE-NEXT: },
// LSE-NEXT: "B",
// LSE-NEXT: 8,
// LSE-NEXT: 3,
// LSE-NEXT: 64
// LSE-NEXT: ]
// LSE-NEXT: },
// LSE: "name": "split_lse",
// LSE-NEXT: "element_bytes": 4,
// LSE: {{^ +}}"B",
// LSE-NEXT: 8,
// LSE-NEXT: 3
// LSE-NEXT: ]
// LSE: "epilogue": [
// LSE-NEXT: {
// LSE-NEXT: "kernel": "decode_lse_combine",
// LSE-NEXT: "block": [128, 1, 1],
// LSE-NEXT: "grid": ["Tq", "Hq", "B"],
// LSE-NEXT: "shared_memory_bytes": 0,
// LSE-NEXT: "params": [
// LSE-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// LSE-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// LSE-NEXT: {"kind": "memref", "operand": "lse", "rank": 3},
// LSE-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// LSE-NEXT: {"kind": "workspace", "name": "split_output", "rank": 5},
// LSE-NEXT: {"kind": "workspace", "name": "split_lse", "rank": 4}
// LSE-NEXT: ]
// LSE-NEXT: }
// LSE-NEXT: ]
// LSE-NEXT: }

// PTX-DAG: .entry decode_lse_kernel(
// PTX-DAG: .entry decode_lse_combine(

// Without the log-sum-exp, 64 programs (f32, 32-key blocks: 128 keys per
// split at least); MQA with 4 heads of Tq 16: one program of 64 rows per
// (batch, split).
// PLAIN: "version": 5,
// PLAIN-NOT: "lse"
// PLAIN: "grid": [
// PLAIN-NEXT: {"min": [{"ceil_div": ["Tk", 128]}, {"ceil_div": [64, {"mul": ["B", 1]}]}]},
// PLAIN-NEXT: 1,
// PLAIN: "epilogue": [
// PLAIN: "params": [
// PLAIN-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// PLAIN-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// PLAIN-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// PLAIN-NEXT: {"kind": "workspace", "name": "split_output", "rank": 5},
// PLAIN-NEXT: {"kind": "workspace", "name": "split_lse", "rank": 4}
// PLAIN-NEXT: ]

// Static B and Hq fold: ceil_div(264, 2 * 8) = 17; the kv_lengths operand
// (version 5 too) is a rank-1 memref param of the main kernel.
// LENGTHS: "version": 5,
// LENGTHS: "mask": null,
// LENGTHS-NEXT: "kv_lengths": {"element_type": "i32", "shape": [2]},
// LENGTHS: "grid": [{"min": [{"ceil_div": ["Tk", 256]}, 17]}, "Hq", "B"],
// LENGTHS: {"kind": "memref", "operand": "value", "rank": 4},
// LENGTHS-NEXT: {"kind": "memref", "operand": "kv_lengths", "rank": 1},
// LENGTHS: "shape": [{"min": [{"ceil_div": ["Tk", 256]}, 17]}, 2, 8, 1, 64]
// LENGTHS: "kernel": "static_lengths_combine",

// A mask tensor too: a launch of all three kinds, the mask's classification
// (prologue), the split programs, the combine (epilogue).
// RUN: attn-translate --attn-to-ptx %s -e masked --chip=sm_90a --split-programs=264 -o %t/masked.ptx
// RUN: FileCheck %s --check-prefix=MASKED < %t/masked.json
// MASKED: "version": 5,
// MASKED: "name": "mask_block_map",
// MASKED: "name": "split_output",
// MASKED: "name": "split_lse",
// MASKED: "prologue": [
// MASKED: "kernel": "masked_mask_map",
// MASKED: "epilogue": [
// MASKED-NEXT: {
// MASKED-NEXT: "kernel": "masked_combine",

// No split: --split-programs=0 (one program per packed head group), and a
// dynamic Tq (one program per query block) whatever the option says.
// RUN: attn-translate --attn-to-ptx %s -e decode_lse --chip=sm_90a --split-programs=0 -o %t/none.ptx
// RUN: FileCheck %s --check-prefix=NOSPLIT < %t/none.json
// NOSPLIT: "version": 4,
// NOSPLIT: "grid": [1, 2, "B"],
// NOSPLIT-NOT: "epilogue"
// NOSPLIT-NOT: "split_
// RUN: attn-translate --attn-to-ptx %s -e prefill --chip=sm_90a --split-programs=264 -o %t/prefill.ptx
// RUN: FileCheck %s --check-prefix=NONE < %t/prefill.json
// NONE: "version": 4,
// NONE: "grid": [{"ceil_div": ["Tq", 64]}, "Hq", "B"],
// NONE-NOT: "epilogue"
// NONE-NOT: "split_

// RUN: not attn-translate --attn-to-ptx %s -e decode --split-programs=-2 -o %t/bad.ptx 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-translate: error: --split-programs must be >= -1 (-1: the target's default; 0: never split), got -2

func.func @decode_lse(%q: tensor<?x8x3x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x3x64xf16>, tensor<?x8x3xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x3x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
  return %o, %l : tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
}

func.func @decode(%q: tensor<?x4x16x32xf32>, %k: tensor<?x1x?x32xf32>, %v: tensor<?x1x?x32xf32>) -> tensor<?x4x16x32xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x16x32xf32>, tensor<?x1x?x32xf32>, tensor<?x1x?x32xf32> -> tensor<?x4x16x32xf32>
  return %o : tensor<?x4x16x32xf32>
}

func.func @static_lengths(%q: tensor<2x8x1x64xbf16>, %k: tensor<2x8x?x64xbf16>, %v: tensor<2x8x?x64xbf16>, %l: tensor<2xi32>) -> tensor<2x8x1x64xbf16> {
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<2xi32>) {causal = #attn.causal<bottom_right>} : tensor<2x8x1x64xbf16>, tensor<2x8x?x64xbf16>, tensor<2x8x?x64xbf16> -> tensor<2x8x1x64xbf16>
  return %o : tensor<2x8x1x64xbf16>
}

func.func @prefill(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

func.func @masked(%q: tensor<?x8x2x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %m: tensor<?x1x2x?xi1>) -> (tensor<?x8x2x64xbf16>, tensor<?x8x2xf32>) {
  %o, %l = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x8x2x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x1x2x?xi1> -> tensor<?x8x2x64xbf16>, tensor<?x8x2xf32>
  return %o, %l : tensor<?x8x2x64xbf16>, tensor<?x8x2xf32>
}

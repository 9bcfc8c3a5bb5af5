// attn-run --target=cuda --emit-kernel=DIR compiles without a GPU and writes
// DIR/<func>.ptx and DIR/<func>.json, the launch manifest that the
// runner-only attn-run (and `attn-run MANIFEST.json`) runs.

func.func @gqa(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

func.func @masked(%q: tensor<2x4x37x64xf16>, %k: tensor<2x2x50x64xf16>, %v: tensor<2x2x50x64xf16>, %m: tensor<1x1x37x50xi1>) -> tensor<2x4x37x64xf16> {
  %o = attn.attention %q, %k, %v mask(%m) {scale = 0.25 : f32} : tensor<2x4x37x64xf16>, tensor<2x2x50x64xf16>, tensor<2x2x50x64xf16>, tensor<1x1x37x50xi1> -> tensor<2x4x37x64xf16>
  return %o : tensor<2x4x37x64xf16>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s -e gqa --target=cuda --emit-kernel=%t/k \
// RUN:   | FileCheck %s --check-prefix=WROTE --match-full-lines
// WROTE: attn-run: wrote {{.*}}k/gqa.ptx and {{.*}}k/gqa.json for sm_90a
// WROTE-NOT: {{.}}

// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k/gqa.json
// MANIFEST:      "format": "attn-mlir-manifest",
// MANIFEST-NEXT: "version": 3,
// MANIFEST-NEXT: "kernel": "gqa_kernel",
// MANIFEST-NEXT: "ptx": "gqa.ptx",
// MANIFEST-NEXT: "chip": "sm_90a",
// MANIFEST-NEXT: "function": "gqa",
// MANIFEST-NEXT: "element_type": "bf16",
// MANIFEST-NEXT: "query": {"shape": [-1, 4, -1, 64]},
// MANIFEST-NEXT: "key": {"shape": [-1, 2, -1, 64]},
// MANIFEST-NEXT: "value": {"shape": [-1, 2, -1, 64]},
// MANIFEST-NEXT: "output": {"shape": [-1, 4, -1, 64]},
// MANIFEST-NEXT: "mask": null,
// MANIFEST-NEXT: "attributes": {"scale": 0.125, "causal": "top_left", "precision": null},
// MANIFEST-NEXT: "config": {"block_m": [[BM:[0-9]+]], "block_n": {{[0-9]+}}, "num_warps": {{[0-9]+}}, "num_stages": {{[0-9]+}}},
// MANIFEST-NEXT: "block": [{{[0-9]+}}, 1, 1],
// MANIFEST-NEXT: "grid": [{"ceil_div": ["Tq", [[BM]]]}, "Hq", "B"],
// MANIFEST-NEXT: "shared_memory_bytes": {{[0-9]+}},
// MANIFEST-NEXT: "params": [
// MANIFEST-NEXT:   {"kind": "memref", "operand": "query", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "key", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "value", "rank": 4},
// MANIFEST-NEXT:   {"kind": "memref", "operand": "output", "rank": 4},
// On sm_90a K and V of a 16-bit kernel come by TMA tensor copies: their
// tensor maps are parameters too (version 3).
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "kind": "tensor_map",
// MANIFEST-NEXT:     "operand": "key",
// MANIFEST:          "operand": "value",
// MANIFEST:      ]

// --tensor-copies=none: the same kernel without tensor maps (version 1).
// RUN: attn-run %s -e gqa --target=cuda --tensor-copies=none --emit-kernel=%t/none > /dev/null
// RUN: FileCheck %s --check-prefix=NONE < %t/none/gqa.json
// NONE:      "version": 1,
// NONE:      {"kind": "memref", "operand": "output", "rank": 4}
// NONE-NEXT: ]
// NONE-NOT:  tensor_map

// The PTX has the one entry the manifest names; ptxas assembles it for the
// H100/H200 without stack or spills.
// RUN: FileCheck %s --check-prefix=ENTRY < %t/k/gqa.ptx
// ENTRY: .target sm_90a
// ENTRY: .entry gqa_kernel(
// ENTRY-NOT: .entry
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/k/gqa.ptx -o %t/k/gqa.cubin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PTXAS %}
// PTXAS: Compiling entry function 'gqa_kernel' for 'sm_90a'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// A mask is a kernel parameter of its own; the scale is the attribute's.
// Without --target, --emit-kernel implies cuda.
// RUN: attn-run %s -e masked --emit-kernel=%t/k > /dev/null
// RUN: FileCheck %s --check-prefix=MASK < %t/k/masked.json
// MASK: "element_type": "f16",
// MASK: "mask": {"element_type": "i1", "shape": [1, 1, 37, 50]},
// MASK-NEXT: "attributes": {"scale": 0.25, "causal": null, "precision": null},
// MASK: {"kind": "memref", "operand": "mask", "rank": 4},
// RUN: FileCheck %s --check-prefix=MASK-PTX < %t/k/masked.ptx
// MASK-PTX: .entry masked_kernel(

// --chip, --block-m and --num-warps reach the kernel and the manifest.
// RUN: attn-run %s -e gqa --target=cuda --chip=sm_80 --block-m=64 --num-warps=4 \
// RUN:   --emit-kernel=%t/sm80 | FileCheck %s --check-prefix=SM80-WROTE
// SM80-WROTE: attn-run: wrote {{.*}}sm80/gqa.ptx and {{.*}}sm80/gqa.json for sm_80
// RUN: FileCheck %s --check-prefix=SM80 < %t/sm80/gqa.json
// SM80: "chip": "sm_80",
// SM80: "config": {"block_m": 64, "block_n": {{[0-9]+}}, "num_warps": 4,
// SM80-NEXT: "block": [128, 1, 1],
// SM80-NEXT: "grid": [{"ceil_div": ["Tq", 64]},
// RUN: FileCheck %s --check-prefix=SM80-PTX < %t/sm80/gqa.ptx
// SM80-PTX: .target sm_80

// Errors: one line, exit code 1, and nothing written.
// RUN: not attn-run %s -e gqa --target=cuda --chip=sm_70 --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP-OLD
// CHIP-OLD: attn-run: error: --chip: the kernels need sm_80 or newer, got 'sm_70'
// RUN: not attn-run %s -e gqa --target=cuda --chip=gfx942 --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP-NAME
// CHIP-NAME: attn-run: error: --chip: expected sm_XY with an optional 'a' or 'f' suffix, such as sm_90a, got 'gfx942'
// RUN: not attn-run %s -e gqa --target=cuda --block-m=24 --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CONFIG
// CONFIG: attn-run: error: compiling 'gqa' for cuda (sm_90a) failed: {{.+}}
// RUN: not attn-run %s -e gqa --target=cuda --block-m=24 --emit-kernel=%t/bad 2>&1 | count 1
// RUN: not ls %t/bad
// RUN: not attn-run %s -e gqa --target=cpu --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU
// CPU: attn-run: error: --emit-kernel writes PTX: it needs --target=cuda
// RUN: not attn-run %s -e gqa --chip=sm_90a --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU-CHIP
// CPU-CHIP: attn-run: error: --num-warps and --chip apply to --target=cuda
// RUN: not attn-run %s -e gqa --target=cuda --tensor-copies=kv --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COPIES
// COPIES: attn-run: error: unknown option or value '--tensor-copies=kv': tensor-copies must be auto or none, got 'kv'
// RUN: not attn-run %s -e gqa --target=cuda --num-warps=-2 --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WARPS
// WARPS: attn-run: error: --num-warps must be >= 0
// RUN: not attn-run %s -e gqa --target=cuda --emit-kernel= 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-run: error: --emit-kernel needs a directory, as in --emit-kernel=out
// RUN: touch %t/file
// RUN: not attn-run %s -e gqa --target=cuda --emit-kernel=%t/file/k 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOT-DIR
// NOT-DIR: attn-run: error: cannot create directory '{{.*}}file/k': {{.+}}
// RUN: not attn-run %s --target=cuda --emit-kernel=%t/bad 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WHICH
// WHICH: attn-run: error: several functions; choose one with -e: gqa, masked

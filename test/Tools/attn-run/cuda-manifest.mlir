// attn-run also takes a launch manifest (.json) instead of a .mlir file, as
// the runner-only attn-run does: the inputs are query, key, value[, mask],
// checked against the manifest before any CUDA device is opened.

func.func @gqa(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --target=cuda --emit-kernel=%t > /dev/null

// RUN: not attn-run %t/gqa.json --input=1x4x16x64xbf16 --input=1x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT
// COUNT: attn-run: error: kernel 'gqa' takes 3 inputs (q: ?x4x?x64xbf16, k: ?x2x?x64xbf16, v: ?x2x?x64xbf16), got 2 --input values
// RUN: not attn-run %t/gqa.json --input=1x8x16x64xbf16 --input=1x2x16x64xbf16 --input=1x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIM
// DIM: attn-run: error: input #0 (q): got 1x8x16x64xbf16, but the kernel takes ?x4x?x64xbf16 (dimension 1 is 8, expected 4)
// RUN: not attn-run %t/gqa.json --input=1x4x16x64xbf16 --input=1x2x16x64xf16 --input=1x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TYPE
// TYPE: attn-run: error: input #1 (k): got 1x2x16x64xf16, but the kernel takes ?x2x?x64xbf16 (element type f16, expected bf16)
// RUN: not attn-run %t/gqa.json --input=1x4x16x64xbf16 --input=1x2x16x64xbf16 --input=2x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SIZES
// SIZES: attn-run: error: the inputs do not fit kernel 'gqa': {{.+}}
// RUN: not attn-run %t/gqa.json --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANDOM
// RANDOM: attn-run: error: input #0 (q): 'random' needs a static shape, but the kernel takes ?x4x?x64xbf16; give SHAPExTYPE (such as 2x8x128x64xf16) or @file.npy

// Compile options do not apply to a manifest, nor does another target.
// RUN: not attn-run %t/gqa.json -e gqa --input=1x4x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMPILED
// RUN: not attn-run %t/gqa.json --scores-ahead --input=1x4x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMPILED
// COMPILED: attn-run: error: -e, --block-m, --block-n, --num-warps, --num-stages, --split-programs, --scores-ahead, --chip, --jit-cpu, --emit-kernel and the options of --convert-attn-to-nvvm do not apply to a launch manifest (it is compiled already)
// RUN: not attn-run %t/gqa.json --target=cpu --input=1x4x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TARGET
// TARGET: attn-run: error: a launch manifest runs on --target=cuda only

// The PTX is read from the manifest's directory.
// RUN: cp %t/gqa.json %t/moved.json && rm %t/gqa.ptx
// RUN: not attn-run %t/moved.json --input=1x4x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-PTX
// NO-PTX: attn-run: error: cannot read '{{.*}}gqa.ptx'
// RUN: not attn-run %t/missing.json 2>&1 | FileCheck %s --check-prefix=NO-MANIFEST
// NO-MANIFEST: attn-run: error: {{.*}}missing.json: cannot open: No such file or directory

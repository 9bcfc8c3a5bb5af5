// --input values that contradict the entry function: one error line on
// stderr, exit code 1, before anything is compiled.

func.func @fixed(%q: tensor<1x2x17x64xf16>, %k: tensor<1x2x33x64xf16>, %v: tensor<1x2x33x64xf16>) -> tensor<1x2x17x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x2x17x64xf16>, tensor<1x2x33x64xf16>, tensor<1x2x33x64xf16> -> tensor<1x2x17x64xf16>
  return %o : tensor<1x2x17x64xf16>
}

func.func @dynamic(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x32xbf16>, %m: tensor<?x?xi1>) -> tensor<?x4x?x32xbf16> {
  %o = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x32xbf16>, tensor<?x?xi1> -> tensor<?x4x?x32xbf16>
  return %o : tensor<?x4x?x32xbf16>
}

func.func @static_result(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// RUN: not attn-run %s -e fixed --input=random --input=random 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: attn-run: error: function 'fixed' takes 3 inputs (q: tensor<1x2x17x64xf16>, k: tensor<1x2x33x64xf16>, v: tensor<1x2x33x64xf16>), got 2 --input values

// RUN: not attn-run %s -e fixed --input=random --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT4
// COUNT4: attn-run: error: function 'fixed' takes 3 inputs ({{.*}}), got 4 --input values

// RUN: not attn-run %s -e fixed 2>&1 | FileCheck %s --check-prefix=COUNT0
// COUNT0: attn-run: error: function 'fixed' takes 3 inputs ({{.*}}), got 0 --input values

// RUN: not attn-run %s -e fixed --input=random --input=1x2x34x64xf16 --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// SHAPE: attn-run: error: input #1 (k): got 1x2x34x64xf16, but the function takes tensor<1x2x33x64xf16> (dimension 2 is 34, expected 33)

// RUN: not attn-run %s -e fixed --input=1x2x17x64xf32 --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE
// DTYPE: attn-run: error: input #0 (q): got 1x2x17x64xf32, but the function takes tensor<1x2x17x64xf16> (element type f32, expected f16)

// RUN: not attn-run %s -e fixed --input=random --input=random --input=2x33x64xf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK
// RANK: attn-run: error: input #2 (v): got 2x33x64xf16 (rank 3), but the function takes tensor<1x2x33x64xf16> (rank 4)

// RUN: not attn-run %s -e fixed --input=1x2x17x64xf64 --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SPEC-TYPE
// SPEC-TYPE: attn-run: error: input #0 (q): invalid tensor spec '1x2x17x64xf64': unknown element type 'f64' (expected f32, f16, bf16 or i1); an input is SHAPExTYPE (such as 2x8x128x64xf16), @file.npy or random

// RUN: not attn-run %s -e fixed --input=1x0x17x64xf16 --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SPEC-ZERO
// SPEC-ZERO: attn-run: error: input #0 (q): invalid tensor spec '1x0x17x64xf16': dimension '0' is not a positive integer

// RUN: not attn-run %s -e fixed --input=q.npy --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-AT
// NO-AT: attn-run: error: input #0 (q): write @q.npy to read a .npy file

// RUN: not attn-run %s -e fixed --input=@ --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=AT-ONLY
// AT-ONLY: attn-run: error: input #0 (q): '@' must be followed by the path of a .npy file

// A SHAPExTYPE larger than the host's memory is refused, not allocated.
// RUN: not attn-run %s -e dynamic --input=3x4x900000000x64xbf16 --input=3x2x7x64xbf16 \
// RUN:   --input=3x2x7x32xbf16 --input=900000000x7xi1 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: attn-run: error: input #0 (q): 3x4x900000000x64xbf16 needs {{.*}} GB, more than the {{.*}} GB of memory of this host

// RUN: not attn-run %s -e dynamic --input=random --input=random --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANDOM
// RANDOM: attn-run: error: input #0 (q): 'random' needs a static argument type, but the function takes tensor<?x4x?x64xbf16>; give SHAPExTYPE (such as 2x8x128x64xf16) or @file.npy

// Dynamic dimensions take the inputs' sizes, which must fit the op's
// semantics (attn::runtime::validateProblem).
// RUN: not attn-run %s -e dynamic --input=3x4x50x64xbf16 --input=2x2x77x64xbf16 \
// RUN:   --input=3x2x77x32xbf16 --input=50x77xi1 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: attn-run: error: the inputs do not fit attn.attention: key has shape 2x2x77x64xbf16, expected 3x?x?x64xbf16

// RUN: not attn-run %s -e dynamic --input=3x4x50x64xbf16 --input=3x2x77x64xbf16 \
// RUN:   --input=3x2x76x32xbf16 --input=50x77xi1 2>&1 | FileCheck %s --check-prefix=KEYS
// KEYS: attn-run: error: the inputs do not fit attn.attention: value has shape 3x2x76x32xbf16

// RUN: not attn-run %s -e dynamic --input=3x4x50x64xbf16 --input=3x2x77x64xbf16 \
// RUN:   --input=3x2x77x32xbf16 --input=50x78xi1 2>&1 | FileCheck %s --check-prefix=MASK
// MASK: attn-run: error: the inputs do not fit attn.attention: mask has shape 50x78xi1, which does not broadcast to B x Hq x Tq x Tk = 3x4x50x77

// RUN: not attn-run %s -e dynamic --input=3x4x50x64xbf16 --input=3x2x77x64xbf16 \
// RUN:   --input=3x2x77x32xbf16 --input=50x77xf32 2>&1 | FileCheck %s --check-prefix=MASK-TYPE
// MASK-TYPE: attn-run: error: input #3 (mask): got 50x77xf32, but the function takes tensor<?x?xi1> (element type f32, expected i1)

// RUN: not attn-run %s -e static_result --input=1x2x9x16xf32 --input=1x2x5x16xf32 \
// RUN:   --input=1x2x5x16xf32 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: attn-run: error: the inputs give a result of shape 1x2x9x16xf32, but function 'static_result' returns tensor<1x2x8x16xf32>

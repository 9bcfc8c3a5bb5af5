// .npy inputs that cannot be read: one error line, exit code 1.

func.func @attn(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}

// RUN: printf 'NOTNUMPY-AT-ALL' > %t.bad.npy
// RUN: not attn-run %s --input=@%t.bad.npy --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MAGIC
// MAGIC: attn-run: error: input #0 (q): '{{.*}}bad.npy' is not a .npy file (bad magic string)

// A valid file (written by attn-run itself) cut short.
// RUN: attn-run %s --input=random --input=random --input=random --output=@%t.full.npy
// RUN: head -c 200 %t.full.npy > %t.truncated.npy
// RUN: not attn-run %s --input=@%t.truncated.npy --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: attn-run: error: input #0 (q): truncated .npy file '{{.*}}truncated.npy'

// The same file whole is a valid query.
// RUN: attn-run %s --input=@%t.full.npy --input=random --input=random --check \
// RUN:   | FileCheck %s --check-prefix=FULL
// FULL: attn-run: attn on cpu: q=1x2x5x8xf32 k=1x2x6x8xf32 v=1x2x6x8xf32 -> o=1x2x5x8xf32
// FULL-NEXT: check: PASS

// ... but not a key, whose shape differs.
// RUN: not attn-run %s --input=random --input=@%t.full.npy --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KEY-SHAPE
// KEY-SHAPE: attn-run: error: input #1 (k): got 1x2x5x8xf32, but the function takes tensor<1x2x6x8xf32> (dimension 2 is 5, expected 6)

// RUN: not attn-run %s --input=@%t.missing.npy --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: input #0 (q): cannot open '{{.*}}missing.npy'

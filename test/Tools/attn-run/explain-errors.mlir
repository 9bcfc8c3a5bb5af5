// --explain explains a time measured on a CUDA device: without --bench, or
// on the CPU, it is one line and exit code 1 (docs/Explain.md).

func.func @f(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x2x16x32xf32>
  return %o : tensor<1x2x16x32xf32>
}

// RUN: not attn-run %s --input=random --input=random --input=random --explain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BENCH --match-full-lines
// RUN: not attn-run %s --target=cuda --input=random --input=random --input=random --explain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BENCH --match-full-lines
// BENCH: attn-run: error: --explain needs --bench: it explains the measured time
// BENCH-NOT: {{.}}

// RUN: not attn-run %s --input=random --input=random --input=random --bench --explain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU --match-full-lines
// RUN: not attn-run %s --target=cpu --input=random --input=random --input=random --bench --explain --json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU --match-full-lines
// CPU: attn-run: error: --explain needs --target=cuda: it reads registers, shared memory and occupancy from the CUDA driver
// CPU-NOT: {{.}}

// A launch manifest: the same checks, before any device is opened.
// RUN: rm -rf %t && attn-run %s --target=cuda --emit-kernel=%t > /dev/null
// RUN: not attn-run %t/f.json --input=random --input=random --input=random --explain 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BENCH --match-full-lines

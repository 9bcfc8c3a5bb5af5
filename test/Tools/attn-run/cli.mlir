// The command line of attn-run on a small f32 function: what it prints,
// in which order, and the option errors.

func.func @attn(%q: tensor<1x2x17x32xf32>, %k: tensor<1x2x33x32xf32>, %v: tensor<1x2x33x32xf32>) -> tensor<1x2x17x32xf32> {
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>} : tensor<1x2x17x32xf32>, tensor<1x2x33x32xf32>, tensor<1x2x33x32xf32> -> tensor<1x2x17x32xf32>
  return %o : tensor<1x2x17x32xf32>
}

// Without --check or --bench, only the header line is printed.
// RUN: attn-run %s --input=random --input=random --input=random \
// RUN:   | FileCheck %s --check-prefix=PLAIN --match-full-lines
// PLAIN: attn-run: attn on cpu: q=1x2x17x32xf32 k=1x2x33x32xf32 v=1x2x33x32xf32 -> o=1x2x17x32xf32
// RUN: attn-run %s --input=random --input=random --input=random | count 1

// --check ends with the check line.
// RUN: attn-run %s --input=1x2x17x32xf32 --input=random --input=1x2x33x32xf32 --check \
// RUN:   | FileCheck %s --check-prefix=CHECK-LINE --match-full-lines
// CHECK-LINE: attn-run: attn on cpu: q=1x2x17x32xf32 k=1x2x33x32xf32 v=1x2x33x32xf32 -> o=1x2x17x32xf32
// CHECK-LINE-NEXT: check: PASS rel_l2={{[0-9.]+e[-+][0-9]+}} max_abs={{[0-9.]+e[-+][0-9]+}}
// CHECK-LINE-NOT: {{.}}

// With --bench too, the bench line comes first and the check line last.
// RUN: attn-run %s --input=random --input=random --input=random --check --bench --iters=3 \
// RUN:   | FileCheck %s --check-prefix=BENCH --match-full-lines
// BENCH: attn-run: attn on cpu: {{.*}}
// BENCH-NEXT: bench: median_ms={{[0-9.e+-]+}} tflops={{[0-9.e+-]+}} floor_ms={{[0-9.e+-]+}}
// BENCH-NEXT: check: PASS {{.*}}
// BENCH-NOT: {{.}}

// RUN: attn-run %s --input=random --input=random --input=random --bench --iters=1 \
// RUN:   | FileCheck %s --check-prefix=BENCH-ONLY --match-full-lines
// BENCH-ONLY: attn-run: attn on cpu: {{.*}}
// BENCH-ONLY-NEXT: bench: median_ms={{[0-9.e+-]+}} tflops={{[0-9.e+-]+}} floor_ms={{[0-9.e+-]+}}
// BENCH-ONLY-NOT: {{.}}

// The kernel config can be pinned; odd block sizes leave tails everywhere.
// RUN: attn-run %s --input=random --input=random --input=random --check --block-m=7 --block-n=5 \
// RUN:   | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: check: PASS

// The same seed gives the same data; another seed other data.
// RUN: attn-run %s --input=random --input=random --input=random --seed=7 --output=@%t.seed7a.npy
// RUN: attn-run %s --input=random --input=random --input=random --seed=7 --output=@%t.seed7b.npy
// RUN: attn-run %s --input=random --input=random --input=random --seed=8 --output=@%t.seed8.npy
// RUN: cmp %t.seed7a.npy %t.seed7b.npy
// RUN: not cmp -s %t.seed7a.npy %t.seed8.npy

// Option errors.
// RUN: not attn-run %s --input=random --input=random --input=random --target=tpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TARGET
// TARGET: attn-run: error: unknown --target 'tpu' (expected cpu or cuda)
// RUN: not attn-run %s --input=random --input=random --input=random --bench --iters=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ITERS
// ITERS: attn-run: error: --iters must be at least 1
// RUN: not attn-run %s --input=random --input=random --input=random --block-n=-4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BLOCK-NEG
// BLOCK-NEG: attn-run: error: --block-m and --block-n must be >= 0
// RUN: not attn-run %s --input=random --input=random --input=random --output=@ 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTPUT-EMPTY
// OUTPUT-EMPTY: attn-run: error: --output needs a file name, as in --output=@o.npy
// RUN: not attn-run %s --input=random --input=random --input=random --output=@%t.nodir/o.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTPUT-DIR
// OUTPUT-DIR: attn-run: error: cannot write '{{.*}}nodir/o.npy': no directory '{{.*}}nodir'
// The output is a file as an input is one, `@`-prefixed (SPEC section 2):
// RUN: not attn-run %s --input=random --input=random --input=random --output=%t.o.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OUTPUT-AT --match-full-lines
// OUTPUT-AT: attn-run: error: --output takes @FILE.npy, as in --output=@o.npy, got '{{.*}}.o.npy'
// RUN: not attn-run %s --input=random --input=random --input=random -e '' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY-EMPTY --match-full-lines
// ENTRY-EMPTY: attn-run: error: -e needs a function name, as in -e attn
// LLVM's complaints about the command line as a whole are errors of the
// tool too:
// RUN: not attn-run 2>&1 | FileCheck %s --check-prefix=CL
// CL: attn-run: error: Not enough positional command line arguments specified!

// --help lists the options.
// RUN: attn-run --help | FileCheck %s --check-prefix=HELP
// HELP: USAGE: attn-run [options] <input .mlir file or launch manifest .json>
// HELP-DAG: --bench
// HELP-DAG: --block-m=
// HELP-DAG: --block-n=
// HELP-DAG: --check
// HELP-DAG: -e <function>
// HELP-DAG: --input=<spec>
// HELP-DAG: --iters=
// HELP-DAG: --json
// HELP-DAG: --output=<@file.npy>
// HELP-DAG: --seed=
// HELP-DAG: --target=<cpu|cuda>

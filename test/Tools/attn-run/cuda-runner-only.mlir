// The runner-only build (ATTN_RUNNER_ONLY=ON) needs no LLVM or MLIR: it
// builds lib/Runtime and an attn-run that runs the PTX + launch manifest
// written by `attn-run --emit-kernel` (or attn-translate) on machines with
// CUDA but no MLIR. Configured and built here, then run on such a kernel.

func.func @gqa(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: %cmake -G Ninja -S %attn_src_root -B %t/build -DATTN_RUNNER_ONLY=ON \
// RUN:   -DCMAKE_CXX_COMPILER=%cxx > %t/configure.log
// RUN: %cmake --build %t/build -j 2 > %t/build.log
// RUN: %t/build/bin/attn-run --help | FileCheck %s --check-prefix=HELP
// HELP: USAGE: attn-run MANIFEST.json --input=SPEC ... [options]
// RUN: ldd %t/build/bin/attn-run | FileCheck %s --check-prefix=LIBS
// LIBS-NOT: libLLVM
// LIBS-NOT: libMLIR
// LIBS-NOT: libcuda

// RUN: attn-run %s --target=cuda --chip=sm_80 --emit-kernel=%t/k > /dev/null
// RUN: cp %t/build/bin/attn-run %t/ro-attn-run

// The inputs are checked against the manifest before the device is needed,
// with the messages of the full attn-run.
// RUN: not %t/ro-attn-run %t/k/gqa.json --input=1x4x16x64xbf16 --input=1x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT
// COUNT: attn-run: error: kernel 'gqa' takes 3 inputs (q: ?x4x?x64xbf16, k: ?x2x?x64xbf16, v: ?x2x?x64xbf16), got 2 --input values
// RUN: not %t/ro-attn-run %t/k/gqa.json --input=1x4x16x64xbf16 --input=1x3x16x64xbf16 --input=1x2x16x64xbf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIM
// DIM: attn-run: error: input #1 (k): got 1x3x16x64xbf16, but the kernel takes ?x2x?x64xbf16 (dimension 1 is 3, expected 2)
// RUN: not %t/ro-attn-run %t/k/gqa.json --input=1x4x16x64xbf16 --input=1x2x16x64xbf16 --input=@%t/none.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NPY
// NPY: attn-run: error: input #2 (v): {{.*}}none.npy{{.*}}

// Command-line errors.
// RUN: not %t/ro-attn-run %t/k/gqa.json --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: attn-run: error: unknown option '--frobnicate' (see --help)
// RUN: not %t/ro-attn-run %t/k/gqa.json --target=cpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: attn-run: error: this attn-run (a runner-only build, without MLIR) runs on --target=cuda only, got 'cpu'
// RUN: not %t/ro-attn-run %t/k/gqa.json --iters=many 2>&1 | FileCheck %s --check-prefix=ITERS
// ITERS: attn-run: error: --iters must be an unsigned integer, got 'many'
// RUN: not %t/ro-attn-run %t/k/gqa.json --bench --iters 0 2>&1 | FileCheck %s --check-prefix=ITERS0
// ITERS0: attn-run: error: --iters must be at least 1
// RUN: not %t/ro-attn-run %t/k/gqa.json --check=yes 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: attn-run: error: --check takes no value
// RUN: not %t/ro-attn-run %t/k/gqa.json --explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: attn-run: error: --explain needs --bench: it explains the measured time
// RUN: %t/ro-attn-run --help | FileCheck %s --check-prefix=HELP-EXPLAIN
// HELP-EXPLAIN: --explain        with --bench: FLOPs, bytes, floors
// RUN: not %t/ro-attn-run 2>&1 | FileCheck %s --check-prefix=NO-MANIFEST
// NO-MANIFEST: attn-run: error: give a launch manifest (.json) to run (see --help)
// RUN: not %t/ro-attn-run %t/k/gqa.json --output=o.npy 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: attn-run: error: --output takes @FILE.npy, as in --output=@o.npy, got 'o.npy'
// RUN: not %t/ro-attn-run %t/k/gqa.json %t/k/other.json 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: attn-run: error: one manifest only: '{{.*}}gqa.json' and '{{.*}}other.json'

// On a GPU it runs and checks the kernel, with the output of the full
// attn-run; without one it fails with one line.
// RUN: %if cuda-gpu %{ %t/ro-attn-run %t/k/gqa.json --input=2x4x130x64xbf16 --input=2x2x130x64xbf16 \
// RUN:   --input 2x2x130x64xbf16 --seed 7 --check --bench --iters=3 --output=@%t/ro.npy \
// RUN:   | FileCheck %s --check-prefix=GPU --match-full-lines %}
// GPU: attn-run: gqa on cuda: q=2x4x130x64xbf16 k=2x2x130x64xbf16 v=2x2x130x64xbf16 -> o=2x4x130x64xbf16
// GPU-NEXT: bench: median_ms={{[0-9.e+-]+}} tflops={{[0-9.e+-]+}} floor_ms={{[0-9.e+-]+}}
// GPU-NEXT: check: PASS rel_l2={{[0-9.e+-]+}} max_abs={{[0-9.e+-]+}}
// RUN: %if cuda-gpu %{ attn-run %t/k/gqa.json --input=2x4x130x64xbf16 --input=2x2x130x64xbf16 \
// RUN:   --input=2x2x130x64xbf16 --seed=7 --output=@%t/full.npy > /dev/null %}
// RUN: %if cuda-gpu %{ cmp %t/ro.npy %t/full.npy %}
// RUN: %if !cuda-gpu %{ not %t/ro-attn-run %t/k/gqa.json --input=2x4x130x64xbf16 --input=2x2x130x64xbf16 \
// RUN:   --input=2x2x130x64xbf16 --check 2>&1 | FileCheck %s --check-prefix=NO-GPU --match-full-lines %}
// NO-GPU: attn-run: error: {{no CUDA driver found \(libcuda.so.1 could not be loaded\)|no CUDA driver found \(libcuda.so.1 is the CUDA toolkit's stub library\)|no CUDA device present|this attn-run was built without .*}}

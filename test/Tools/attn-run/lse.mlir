// attn-run with the log-sum-exp result (SPEC.md sections 1.2 and 2): one
// --output per result, in result order (fewer is fine, more is an error), the
// function returning the op's results in order; errors are one line on
// stderr, exit code 1, nothing written.

func.func @attn(%q: tensor<?x4x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x8xf16>) -> (tensor<?x4x?x8xf16>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x8xf16> -> tensor<?x4x?x8xf16>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x8xf16>, tensor<?x4x?xf32>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: not attn-run %s -e attn --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 \
// RUN:   --output=@%t/o.npy --output=@%t/lse.npy --output=@%t/third.npy 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: attn-run: error: --output is given 3 times, but function 'attn' has 2 results (o: tensor<?x4x?x8xf16>, lse: tensor<?x4x?xf32>); give one --output per result, in result order{{$}}
// RUN: not attn-run %s -e attn --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 \
// RUN:   --output=@%t/o.npy --output=@%t/o.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: attn-run: error: --output '{{.*}}o.npy' is given twice; each result needs a file of its own
// RUN: not attn-run %s -e attn --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 \
// RUN:   --output=@%t/o.npy --output=lse.npy 2>&1 | FileCheck %s --check-prefix=NO-AT
// NO-AT: attn-run: error: --output takes @FILE.npy, as in --output=@o.npy, got 'lse.npy'
// RUN: not ls %t/o.npy %t/lse.npy

// A function of one result takes one --output.
// RUN: not attn-run %s -e one --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 \
// RUN:   --output=@%t/o.npy --output=@%t/lse.npy 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: attn-run: error: --output is given 2 times, but function 'one' has 1 result (o: tensor<?x4x?x8xf16>); give one --output per result, in result order{{$}}
func.func @one(%q: tensor<?x4x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x8xf16>) -> tensor<?x4x?x8xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x8xf16> -> tensor<?x4x?x8xf16>
  return %o : tensor<?x4x?x8xf16>
}

// The function returns both results of the op, in order.
// RUN: not attn-run %s -e swapped --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ORDER
// RUN: not attn-run %s -e output_only --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ORDER
// ORDER: attn-run: error: function '{{swapped|output_only}}' must return the results of its attn.attention (the output and the log-sum-exp), in that order, and nothing else
func.func @swapped(%q: tensor<?x4x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x8xf16>) -> (tensor<?x4x?xf32>, tensor<?x4x?x8xf16>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x8xf16> -> tensor<?x4x?x8xf16>, tensor<?x4x?xf32>
  return %lse, %o : tensor<?x4x?xf32>, tensor<?x4x?x8xf16>
}
func.func @output_only(%q: tensor<?x4x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x8xf16>) -> tensor<?x4x?x8xf16> {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x8xf16> -> tensor<?x4x?x8xf16>, tensor<?x4x?xf32>
  return %o : tensor<?x4x?x8xf16>
}

// The LSE's static dimensions are checked against the inputs, as the
// output's are.
// RUN: not attn-run %s -e static_lse --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STATIC
// STATIC: attn-run: error: the inputs give a result of shape 1x4x5xf32, but function 'static_lse' returns tensor<2x4x?xf32>
func.func @static_lse(%q: tensor<?x4x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x8xf16>) -> (tensor<?x4x?x8xf16>, tensor<2x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x8xf16> -> tensor<?x4x?x8xf16>, tensor<2x4x?xf32>
  return %o, %lse : tensor<?x4x?x8xf16>, tensor<2x4x?xf32>
}

// --json: the LSE's shape and file next to the output's, its errors in
// "check"; --bench counts its bytes (Q 320*2 + K 192*2 + V 96*2 + O 160*2 +
// LSE 20*4 = 1616).
// RUN: attn-run %s -e attn --input=1x4x5x16xf16 --input=1x2x6x16xf16 --input=1x2x6x8xf16 --check --bench --iters=1 \
// RUN:   --json --output=@%t/o.npy --output=@%t/lse.npy | FileCheck %s --check-prefix=JSON
// JSON: {"bench":{"bytes":1616,
// JSON-SAME: "check":{"lse":{"max_abs":{{[0-9.e+-]+}},"max_err":{{[0-9.e+-]+}},"mismatches":0,"non_finite_outputs":0,"tol":0.001},"max_abs":
// JSON-SAME: "lse":{"dtype":"f32","file":"{{.*}}lse.npy","shape":[1,4,5]},"output":{"dtype":"f16","file":"{{.*}}o.npy","shape":[1,4,5,8]}

// --json prints the same facts as one JSON object on one line (keys in
// sorted order) instead of the text lines.

func.func @attn(%q: tensor<2x4x9x16xf16>, %k: tensor<2x2x12x16xf16>, %v: tensor<2x2x12x8xf16>, %m: tensor<9x12xi1>) -> tensor<2x4x9x8xf16> {
  %o = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>, scale = 0.25 : f32} : tensor<2x4x9x16xf16>, tensor<2x2x12x16xf16>, tensor<2x2x12x8xf16>, tensor<9x12xi1> -> tensor<2x4x9x8xf16>
  return %o : tensor<2x4x9x8xf16>
}

// RUN: attn-run %s --input=random --input=random --input=random --input=random --check --bench --iters=2 \
// RUN:   --json --output=@%t.o.npy | FileCheck %s
// CHECK: {"bench":{"bytes":{{[0-9]+}},"device":"host cpu: {{[^"]+}}","floor_ms":{{[0-9.e+-]+}},"flop_floor_ms":{{[0-9.e+-]+}},"flops":{{[0-9]+}},"iters":2,"median_ms":{{[0-9.e+-]+}},"memory_floor_ms":{{[0-9.e+-]+}},"min_ms":{{[0-9.e+-]+}},"tflops":{{[0-9.e+-]+}}},
// CHECK-SAME: "causal":"bottom_right",
// CHECK-SAME: "check":{"max_abs":{{[0-9.e+-]+}},"max_abs_tol":{{[0-9.e+-]+}},"nan_mismatches":0,"non_finite_outputs":0,"reason":"","rel_l2":{{[0-9.e+-]+}},"rel_l2_tol":{{[0-9.e+-]+}},"rows_checked":72,"rows_total":72,"sampled":false,"status":"PASS"},
// CHECK-SAME: "dtype":"f16","function":"attn",
// CHECK-SAME: "inputs":[{"dtype":"f16","name":"q","shape":[2,4,9,16],"source":"random"},{"dtype":"f16","name":"k","shape":[2,2,12,16],"source":"random"},{"dtype":"f16","name":"v","shape":[2,2,12,8],"source":"random"},{"dtype":"i1","name":"mask","shape":[9,12],"source":"random"}],
// CHECK-SAME: "output":{"dtype":"f16","file":"{{.*}}.o.npy","shape":[2,4,9,8]},
// CHECK-SAME: "scale":0.25,"target":"cpu"}
// CHECK-NOT: {{.}}

// FLOPs: 2*B*Hq*Tq*Tk*(D+Dv) = 2*2*4*9*12*24 = 41472 (no halving: Tq != Tk).
// Bytes: Q 1152*2 + K 768*2 + V 384*2 + mask 108 + O 576*2 = 5868.
// RUN: attn-run %s --input=random --input=random --input=random --input=random --bench --iters=1 --json \
// RUN:   | FileCheck %s --check-prefix=COUNTS
// COUNTS: {"bench":{"bytes":5868,{{.*}}"flops":41472,"iters":1,

// Without --check and --bench there are no such keys; stdout is one line.
// RUN: attn-run %s --input=random --input=random --input=random --input=random --json \
// RUN:   | FileCheck %s --check-prefix=PLAIN
// PLAIN: {"causal":"bottom_right","dtype":"f16","function":"attn","inputs":[
// PLAIN-NOT: "check"
// PLAIN-NOT: "bench"
// RUN: attn-run %s --input=random --input=random --input=random --input=random --json | count 1

// Errors stay text on stderr.
// RUN: not attn-run %s --input=random --json 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: attn-run: error: function 'attn' takes 4 inputs

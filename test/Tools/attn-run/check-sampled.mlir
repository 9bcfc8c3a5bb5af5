// Problems with more than 4096 rows (B*Hq*Tq) are checked on 1000 sampled
// rows, which a line before the final check line says.

// RUN: attn-run %s --input=random --input=random --input=random --check \
// RUN:   | FileCheck %s --match-full-lines
// CHECK: attn-run: sampled on cpu: q=1x1x4100x16xf32 k=1x1x9x16xf32 v=1x1x9x16xf32 -> o=1x1x4100x16xf32
// CHECK-NEXT: check: sampled 1000 of 4100 rows
// CHECK-NEXT: check: PASS {{.*}}
// CHECK-NOT: {{.}}

// RUN: attn-run %s --input=random --input=random --input=random --check --json \
// RUN:   | FileCheck %s --check-prefix=JSON
// JSON: "check":{{.*}}"rows_checked":1000,"rows_total":4100,"sampled":true,"status":"PASS"}

func.func @sampled(%q: tensor<1x1x4100x16xf32>, %k: tensor<1x1x9x16xf32>, %v: tensor<1x1x9x16xf32>) -> tensor<1x1x4100x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x4100x16xf32>, tensor<1x1x9x16xf32>, tensor<1x1x9x16xf32> -> tensor<1x1x4100x16xf32>
  return %o : tensor<1x1x4100x16xf32>
}

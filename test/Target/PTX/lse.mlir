// A kernel with the log-sum-exp result: the manifest (version 4) describes
// the result and passes it as the memref param "lse", after the output.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a -o %t/lse.ptx
// RUN: FileCheck %s < %t/lse.json

// CHECK: "version": 4,
// CHECK: "output": {"shape": [-1, 8, -1, 64]},
// CHECK-NEXT: "lse": {"shape": [-1, 8, -1]},
// CHECK: "params": [
// CHECK-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "value", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "lse", "rank": 3},
func.func @lse(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}

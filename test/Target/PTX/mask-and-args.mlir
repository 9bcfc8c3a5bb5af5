// The mask is a kernel operand of its own rank; arguments that the function
// shares or reorders still give one kernel operand per role.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e self -o %t/self.ptx
// RUN: FileCheck %s < %t/self.json

// CHECK: "element_type": "f32",
// CHECK: "mask": {"element_type": "i1", "shape": [-1, -1]},
// CHECK: "attributes": {"scale": 0.5, "causal": null, "precision": "ieee"},
// CHECK: "params": [
// CHECK-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "value", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "mask", "rank": 2},
// CHECK-NEXT: {"kind": "memref", "operand": "output", "rank": 4}

func.func @self(%m: tensor<?x?xi1>, %x: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %o = attn.attention %x, %x, %x mask(%m) {scale = 0.5 : f32, precision = #attn.precision<ieee>} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x?xi1> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}

func.func @other(%x: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  return %x : tensor<1x1x16x16xf16>
}

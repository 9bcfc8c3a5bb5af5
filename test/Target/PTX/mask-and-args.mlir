// The mask is a kernel operand of its own rank; arguments that the function
// shares or reorders still give one kernel operand per role.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e self -o %t/self.ptx
// RUN: FileCheck %s < %t/self.json

// CHECK: "version": 2,
// CHECK: "element_type": "f32",
// CHECK: "mask": {"element_type": "i1", "shape": [-1, -1]},
// CHECK: "attributes": {"scale": 0.5, "causal": null, "precision": "ieee"},
// CHECK: "params": [
// CHECK-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "value", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "mask", "rank": 2},
// CHECK-NEXT: {"kind": "memref", "operand": "output", "rank": 4},
// CHECK-NEXT: {"kind": "workspace", "name": "mask_block_map", "rank": 4}
// CHECK-NEXT: ],
// The mask's block map (--attn-mask-block-map): a workspace of the launch,
// written by a prologue kernel of the same PTX (a rank-2 mask: one slice).
// CHECK-NEXT: "workspace": [
// CHECK-NEXT: {
// CHECK-NEXT: "name": "mask_block_map",
// CHECK-NEXT: "element_bytes": 1,
// CHECK-NEXT: "shape": [1, 1, {"ceil_div": ["Tq", [[BM:[0-9]+]]]}, {"ceil_div": ["Tk", [[BN:[0-9]+]]]}]
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "prologue": [
// CHECK-NEXT: {
// CHECK-NEXT: "kernel": "self_mask_map",
// CHECK-NEXT: "block": [128, 1, 1],
// CHECK-NEXT: "grid": [{"ceil_div": ["Tk", [[BN]]]}, {"ceil_div": ["Tq", [[BM]]]}, 1],
// CHECK-NEXT: "shared_memory_bytes": 0,
// CHECK-NEXT: "params": [
// CHECK-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// CHECK-NEXT: {"kind": "memref", "operand": "mask", "rank": 2},
// CHECK-NEXT: {"kind": "workspace", "name": "mask_block_map", "rank": 4}
// CHECK-NEXT: ]
// CHECK-NEXT: }
// CHECK-NEXT: ]
// CHECK-NEXT: }
// RUN: FileCheck %s --check-prefix=PTX < %t/self.ptx
// PTX-DAG: .entry self_kernel(
// PTX-DAG: .entry self_mask_map(
// Without the map: version 1, no workspace.
// RUN: attn-translate --attn-to-ptx %s -e self --mask-block-map=false -o %t/plain.ptx
// RUN: FileCheck %s --check-prefix=PLAIN < %t/plain.json
// PLAIN: "version": 1,
// PLAIN-NOT: workspace
// PLAIN-NOT: prologue

func.func @self(%m: tensor<?x?xi1>, %x: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %o = attn.attention %x, %x, %x mask(%m) {scale = 0.5 : f32, precision = #attn.precision<ieee>} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x?xi1> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}

func.func @other(%x: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  return %x : tensor<1x1x16x16xf16>
}

// A head dim the GPU pads (D = Dv = 40 of bf16: 48-column tiles of six
// 16-byte chunks a row). The copies of Q (synchronous) and of K and V
// (cp.async) load the chunks of the operand's 40 columns and zero the
// sixth; the output leaves the staging tile in the five chunks of its 40
// columns. D = 59 of bf16 (rows of 118 bytes, not whole 16-byte vectors):
// one stage, no cp.async, every copy and store in 2-byte vectors of one
// element.
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline --cse \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s

// CHECK-LABEL: gpu.func @padded_kernel(
// Q: chunk (r, c) of a row of six, loaded where r < rows and c < 40.
// CHECK:         %[[QR:.*]] = arith.divui %[[QI:.*]], %c6
// CHECK:         %[[QC:.*]] = arith.muli %{{.*}}, %c8
// CHECK-NEXT:    %[[QIN:.*]] = arith.cmpi ult, %[[QR]], %{{.*}} : index
// CHECK-NEXT:    %[[C40:.*]] = arith.constant 40 : index
// CHECK-NEXT:    %[[QCOL:.*]] = arith.cmpi ult, %[[QC]], %[[C40]] : index
// CHECK-NEXT:    %[[QOK:.*]] = arith.andi %[[QIN]], %[[QCOL]] : i1
// CHECK-NEXT:    scf.if %[[QOK]] -> (vector<8xbf16>) {
// CHECK-NEXT:      vector.load %{{.*}}[%[[QR]], %[[QC]]] {{.*}} : memref<?x40xbf16, {{.*}}>, vector<8xbf16>
// K and V: cp.async of a whole 64-key block, with the source column clamped
// and a source size of 0 (zeros) past the 40 columns.
// CHECK:         %[[KIN:.*]] = arith.cmpi ult, %{{.*}}, %c64 : index
// CHECK-NEXT:    %[[K40:.*]] = arith.constant 40 : index
// CHECK-NEXT:    %[[KCOL:.*]] = arith.cmpi ult, %[[KC:.*]], %[[K40]] : index
// CHECK-NEXT:    %[[KOK:.*]] = arith.andi %[[KIN]], %[[KCOL]] : i1
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    arith.select %[[KOK]], %[[KC]], %[[ZERO]] : index
// CHECK:         %[[SIZE:.*]] = arith.select %[[KOK]], %c16_i32, %c0_i32 : i32
// CHECK-NEXT:    nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %[[SIZE]]
// The output: five chunks a row.
// CHECK:         %[[OR:.*]] = arith.divui %{{.*}}, %c5{{(_[0-9]+)?}} : index
// CHECK:         vector.store %{{.*}}, %{{.*}}[%[[OR]], %{{.*}}] {{.*}} : memref<?x40xbf16, {{.*}}>, vector<8xbf16>
func.func @padded(%q: tensor<?x2x?x40xbf16>, %k: tensor<?x2x?x40xbf16>, %v: tensor<?x2x?x40xbf16>) -> tensor<?x2x?x40xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x2x?x40xbf16>, tensor<?x2x?x40xbf16>, tensor<?x2x?x40xbf16> -> tensor<?x2x?x40xbf16>
  return %o : tensor<?x2x?x40xbf16>
}

// CHECK-LABEL: gpu.func @narrow_kernel(
// CHECK-NOT:     nvvm.cp.async.shared.global
// CHECK:         %[[NR:.*]] = arith.divui %{{.*}}, %c64
// CHECK:         %[[NC:.*]] = arith.muli %{{.*}}, %c1
// CHECK-NEXT:    %[[NIN:.*]] = arith.cmpi ult, %[[NR]], %{{.*}} : index
// CHECK-NEXT:    %[[C59:.*]] = arith.constant 59 : index
// CHECK-NEXT:    %[[NCOL:.*]] = arith.cmpi ult, %[[NC]], %[[C59]] : index
// CHECK-NEXT:    %[[NOK:.*]] = arith.andi %[[NIN]], %[[NCOL]] : i1
// CHECK-NEXT:    scf.if %[[NOK]] -> (vector<1xbf16>) {
// CHECK-NEXT:      vector.load %{{.*}}[%[[NR]], %[[NC]]] {alignment = 2 : i64} : memref<?x59xbf16, {{.*}}>, vector<1xbf16>
// CHECK-NOT:     nvvm.cp.async.shared.global
// CHECK:         vector.store %{{.*}} {alignment = 2 : i64} : memref<?x59xbf16, {{.*}}>, vector<1xbf16>
// CHECK:         gpu.return
func.func @narrow(%q: tensor<?x2x?x59xbf16>, %k: tensor<?x2x?x59xbf16>, %v: tensor<?x2x?x59xbf16>) -> tensor<?x2x?x59xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x2x?x59xbf16>, tensor<?x2x?x59xbf16>, tensor<?x2x?x59xbf16> -> tensor<?x2x?x59xbf16>
  return %o : tensor<?x2x?x59xbf16>
}

// Rows that are not whole 16-byte vectors cannot go by cp.async: a program
// pipelined with two stages anyway (--attn-tile gives it one) is an error at
// the copy.
// RUN: attn-opt %S/Inputs/narrow-two-stages.mlir --attn-online-softmax --attn-pipeline --cse \
// RUN:   | not attn-opt --convert-attn-to-nvvm 2>&1 | FileCheck %s --check-prefix=ASYNC
// ASYNC: error: 'linalg.copy' op expects rows of whole 16-byte vectors for cp.async, got rows of 118 bytes (one stage copies them synchronously)

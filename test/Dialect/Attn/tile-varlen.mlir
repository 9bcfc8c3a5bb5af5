// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --split-input-file --verify-each | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8 split-programs=64" --split-input-file | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --attn-online-softmax --split-input-file --verify-each | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --attn-online-softmax --split-input-file \
// RUN:   | attn-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ROUNDTRIP

// Packed sequences (cu_seqlens). --attn-tile: a grid of (1, Hq,
// ceil(Tq / block_m) + N + 2) slots, N + 1 = dim(cu_q), the offsets passed
// to every program; no key splits (split-programs is ignored, even for a
// static Tq of one block).
// TILE-LABEL: func @varlen
// TILE-DAG: %[[CQ:.*]] = bufferization.to_buffer %arg3
// TILE-DAG: %[[CK:[0-9]+]] = bufferization.to_buffer %arg4
// TILE: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c16
// TILE: %[[OFFSETS:.*]] = memref.dim %[[CQ]], %c0
// TILE: %[[SEGS:.*]] = arith.addi %[[OFFSETS]], %c1
// TILE: %[[SLOTS:.*]] = arith.addi %[[BLOCKS]], %[[SEGS]]
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 4, %[[SLOTS]])
// TILE: attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%[[CQ]], %[[CK]])) outs(%{{.*}} lse(%{{.*}}))
// TILE-NOT: key_split
// TILE-SAME: cu_seqlens memref<?xi32, strided<[1], offset: ?>>, memref<?xi32, strided<[1], offset: ?>>

// --attn-online-softmax: the program's sequence lookup. A binary search
// over the segments' first slots floor(c_t / 16) + t (c_0 = 0, c_t =
// cu_q[t-1] clamped to 0..Tq, c_{N+2} = Tq), then the segment's rows and
// the sequence's keys (clamped to 0..Tk), and the block within it.
// CHECK-LABEL: func @varlen
// CHECK: %[[CKBUF:.*]] = bufferization.to_buffer %arg4
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[SLOT:.*]]) in (1, 4, %{{.*}})
// CHECK: %[[TQ:.*]] = memref.dim %{{.*}}, %c2 : memref<1x4x?x64xf16
// CHECK: %[[TK:.*]] = memref.dim %{{.*}}, %c2 : memref<1x2x?x64xf16
// CHECK: %[[N1:.*]] = memref.dim %[[CQ:[0-9]+]], %c0
// CHECK: %[[LASTOFF:.*]] = arith.subi %[[N1]], %c1
// CHECK: %[[END:.*]] = arith.addi %[[N1]], %c1
// CHECK: %[[SEARCH:.*]]:2 = scf.while (%[[LO:.*]] = %c0, %[[HI:.*]] = %[[END]])
// CHECK:   %[[WIDTH:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK:   %[[MORE:.*]] = arith.cmpi sgt, %[[WIDTH]], %c1
// CHECK:   scf.condition(%[[MORE]])
// CHECK: } do {
// CHECK:   %[[MID:.*]] = arith.divui %{{.*}}, %c2
// CHECK:   %[[AT:.*]] = arith.subi %[[MID]], %c1
// CHECK:   %[[AT0:.*]] = arith.maxsi %[[AT]], %c0
// CHECK:   %[[AT1:.*]] = arith.minsi %[[AT0]], %[[LASTOFF]]
// CHECK:   %[[C:.*]] = memref.load %[[CQ]][%[[AT1]]]
// CHECK:   %[[CI:.*]] = arith.index_cast %[[C]]
// CHECK:   %[[C0:.*]] = arith.maxsi %[[CI]], %c0
// CHECK:   %[[C1:.*]] = arith.minsi %[[C0]], %[[TQ]]
// CHECK:   arith.divui %{{.*}}, %c16
// CHECK:   %[[FIRST:.*]] = arith.addi %{{.*}}, %[[MID]]
// CHECK:   %[[LE:.*]] = arith.cmpi sle, %[[FIRST]], %[[SLOT]]
// CHECK:   arith.select %[[LE]], %[[MID]], %{{.*}}
// CHECK:   arith.select %[[LE]], %{{.*}}, %[[MID]]
// CHECK:   scf.yield
// CHECK: }
// The sequence's keys: cu_k[t-1] .. cu_k[t], clamped to 0..Tk.
// CHECK: memref.load %[[CKBUF]][%{{.*}}]
// CHECK: arith.minsi %{{.*}}, %[[TK]]
// CHECK: memref.load %[[CKBUF]][%{{.*}}]
// CHECK: arith.minsi %{{.*}}, %[[TK]]
// Q rows from the segment's first row on; the output likewise, the keys
// from the sequence's first key on.
// CHECK: %[[QROW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: memref.subview %{{.*}}[%[[B]], %[[H]], %[[QROW]], 0]
// CHECK: scf.for
// CHECK: %[[KROW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: memref.subview %{{.*}}[%[[B]], %{{.*}}, %[[KROW]], 0]
// ROUNDTRIP-LABEL: func @varlen
// ROUNDTRIP: scf.while
func.func @varlen(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x64xf16>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<bottom_right>}
     : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
  return %o, %lse : tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
}

// -----

// A static Tq of one block (decode's shape, which split-KV takes) still
// gets the packed grid and no split: 1 + N + 2 = 5 slots for N = 2.
// TILE-LABEL: func @varlen_decode
// TILE: %[[FIVE:.*]] = arith.constant 5 : index
// TILE: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, %[[FIVE]])
// TILE-NOT: key_split
// CHECK-LABEL: func @varlen_decode
// CHECK: scf.while
func.func @varlen_decode(%q: tensor<1x8x4x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<1x8x4x64xbf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<3xi32>, tensor<3xi32>) {causal = #attn.causal<bottom_right>}
     : tensor<1x8x4x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16> -> tensor<1x8x4x64xbf16>
  return %o : tensor<1x8x4x64xbf16>
}

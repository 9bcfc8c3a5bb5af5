// RUN: attn-opt %s --attn-tile --attn-online-softmax --verify-each | FileCheck %s

// Head dims are padded to whole 16-element chunks: D = 40 gives Q and K
// tiles of 48 columns, Dv = 24 V tiles and an accumulator of 32. Every copy
// writes the operand's columns into a zero-filled tile (a full key block
// too), so the pad columns add nothing to Q K^T, and the output takes the
// accumulator's first Dv columns.
// CHECK-LABEL: func @padded
// CHECK:         %[[QT:.*]] = memref.alloca() : memref<32x48xf16>
// CHECK-NEXT:    %[[KT:.*]] = memref.alloca() : memref<32x48xf16>
// CHECK-NEXT:    %[[VT:.*]] = memref.alloca() : memref<32x32xf16>
// CHECK-NEXT:    memref.alloca() : memref<32x32xf32>
// CHECK:         %[[ACC:.*]] = memref.alloca() : memref<32x32xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[QT]] :
// CHECK:         %[[QV:.*]] = memref.subview %[[QT]][0, 0] [%{{.*}}, 40]
// CHECK:         linalg.copy ins(%{{.*}} : memref<?x40xf16, {{.*}}>) outs(%[[QV]] :
// The unmasked loop's whole key blocks.
// CHECK:         scf.for
// CHECK:           linalg.fill ins(%{{.*}} : f16) outs(%[[KT]] :
// CHECK:           %[[KV:.*]] = memref.subview %[[KT]][0, 0] [32, 40]
// CHECK:           linalg.copy ins(%{{.*}} : memref<32x40xf16, {{.*}}>) outs(%[[KV]] :
// CHECK:           linalg.fill ins(%{{.*}} : f16) outs(%[[VT]] :
// CHECK:           %[[VV:.*]] = memref.subview %[[VT]][0, 0] [32, 24]
// CHECK:           linalg.copy ins(%{{.*}} : memref<32x24xf16, {{.*}}>) outs(%[[VV]] :
// CHECK:           linalg.generic {{.*}} ins(%[[QT]], %[[KT]] : memref<32x48xf16>, memref<32x48xf16>)
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[VT]] : memref<32x32xf32>, memref<32x32xf16>) outs(%[[ACC]] : memref<32x32xf32>)
// CHECK:         %[[AV:.*]] = memref.subview %[[ACC]][0, 0] [%{{.*}}, 24]
// CHECK:         linalg.generic {{.*}} ins(%[[AV]] : memref<?x24xf32, {{.*}}>) outs(%{{.*}} : memref<?x24xf16,
func.func @padded(%q: tensor<?x2x?x40xf16>, %k: tensor<?x2x?x40xf16>, %v: tensor<?x2x?x24xf16>) -> tensor<?x2x?x24xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x2x?x40xf16>, tensor<?x2x?x40xf16>, tensor<?x2x?x24xf16> -> tensor<?x2x?x24xf16>
  return %o : tensor<?x2x?x24xf16>
}

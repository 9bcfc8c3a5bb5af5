// attn-translate reads a module in any dialect, as attn-opt does: the
// attention compiles beside a function of other code (scf, arith, math,
// tensor, linalg, memref), which -e can name but which holds no
// attn.attention to compile; and block-level IR (--attn-tile's output) is
// read, not refused, and holds none either.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e attn -o %t/a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/a.ptx
// PTX: .entry attn_kernel(
// RUN: not attn-translate --attn-to-ptx %s -e other -o %t/b.ptx 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: expects exactly one attn.attention to compile to a kernel, found 0
// RUN: attn-opt %s --attn-tile="target=sm_90a" | not attn-translate --attn-to-ptx -e attn -o %t/c.ptx 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED: error: expects exactly one attn.attention to compile to a kernel, found 0

func.func @attn(%q: tensor<1x2x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16> -> tensor<1x2x16x64xf16>
  return %o : tensor<1x2x16x64xf16>
}

func.func @other(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloca() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<8xf32>)
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> (tensor<8xf32>) {
    %e = tensor.extract %t[%c0] : tensor<8xf32>
    %p = math.exp2 %e : f32
    %s = arith.addf %p, %e : f32
    %u = tensor.insert %s into %t[%c1] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file --verify-diagnostics
// RUN: attn-opt %s --attn-tile --split-input-file | FileCheck %s

// On a GPU a page holds whole TMA boxes of a power-of-two row count. The
// host takes any static page: block_n = gcd(32, page), so that a key block
// lies within one page (test/Integration/CPU/paged.mlir runs a page of 24).
// CHECK-LABEL: func @odd_page
// CHECK: block_n = 8
func.func @odd_page(%q: tensor<?x2x?x32xf16>, %k: tensor<?x2x24x32xf16>, %v: tensor<?x2x24x32xf16>, %bt: tensor<?x?xi32>) -> tensor<?x2x?x32xf16> {
  // expected-error @+1 {{expects a page size ('key' dim 2 with 'block_table') that is a power of two in 16..256 on sm_90a, got 24}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>)
     : tensor<?x2x?x32xf16>, tensor<?x2x24x32xf16>, tensor<?x2x24x32xf16> -> tensor<?x2x?x32xf16>
  return %o : tensor<?x2x?x32xf16>
}

// -----

// CHECK-LABEL: func @small_page
// CHECK: block_n = 8
func.func @small_page(%q: tensor<?x2x?x32xf16>, %k: tensor<?x2x8x32xf16>, %v: tensor<?x2x8x32xf16>, %bt: tensor<?x?xi32>) -> tensor<?x2x?x32xf16> {
  // expected-error @+1 {{expects a page size ('key' dim 2 with 'block_table') that is a power of two in 16..256 on sm_90a, got 8}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>)
     : tensor<?x2x?x32xf16>, tensor<?x2x8x32xf16>, tensor<?x2x8x32xf16> -> tensor<?x2x?x32xf16>
  return %o : tensor<?x2x?x32xf16>
}

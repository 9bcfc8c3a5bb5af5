// RUN: not attn-opt %s --attn-tile="block-m=-4" 2>&1 | FileCheck %s

// CHECK: error: attn-tile options must be >= 0
func.func @f(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  return %q : tensor<1x1x4x8xf32>
}

// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file | FileCheck %s

// The variants tile for the GPU as for the host: the block op carries the
// window, the softcap and the regions.
// CHECK-LABEL: func @window_softcap
// CHECK:         attn.block_attention
// CHECK-SAME:      softcap = 3.000000e+01 : f32
// CHECK-SAME:      window = #attn.window<left = 16, right = 0>
func.func @window_softcap(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x64x16xf16>, %v: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  %o = attn.attention %q, %k, %v {window = #attn.window<left = 16, right = 0>, softcap = 30.0 : f32} : tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}

// -----

// The regions too, with the tensors they read as the programs' captures.
// CHECK-LABEL: func @alibi
// CHECK-SAME:    %[[SLOPES:[a-z0-9]+]]: tensor<4xf32>
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[SLOPES]]
// CHECK:         attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} captures(%[[BUF]]))
// CHECK:           score_mod
// CHECK:             memref.load %[[BUF]]
func.func @alibi(%q: tensor<1x4x64x16xf16>, %k: tensor<1x4x64x16xf16>, %v: tensor<1x4x64x16xf16>, %slopes: tensor<4xf32>) -> tensor<1x4x64x16xf16> {
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<4xf32>
    %t = arith.addf %s, %slope : f32
    attn.yield %t : f32
  } : tensor<1x4x64x16xf16>, tensor<1x4x64x16xf16>, tensor<1x4x64x16xf16> -> tensor<1x4x64x16xf16>
  return %o : tensor<1x4x64x16xf16>
}

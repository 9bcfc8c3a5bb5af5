// RUN: attn-opt %s --attn-tile --split-input-file --verify-each | FileCheck %s

// --attn-tile carries window, softcap and both regions to the programs. The
// tensors the regions read become read-only buffers (one per tensor, however
// many reads), listed as the programs' captures, and the regions read them
// with memref.load.

// CHECK-LABEL: func @alibi_document
// CHECK-SAME:    %[[SLOPES:[a-z0-9]+]]: tensor<4xf32>, %[[DOC:[a-z0-9]+]]: tensor<2x?xi32>
// CHECK-DAG:     %[[SB:.*]] = bufferization.to_buffer %[[SLOPES]] read_only : tensor<4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK-DAG:     %[[DB:.*]] = bufferization.to_buffer %[[DOC]] read_only : tensor<2x?xi32> to memref<2x?xi32, strided<[?, 1], offset: ?>>
// CHECK:         scf.forall
// CHECK:           attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} captures(%[[SB]], %[[DB]])) outs(%{{.*}})
// CHECK-SAME:        softcap = 3.000000e+01 : f32, window = #attn.window<left = 256, right = 0>} score_mod {
// CHECK-NEXT:      ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:        %[[SLOPE:.*]] = memref.load %[[SB]][%[[H]]]
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[S]], %[[SLOPE]] : f32
// CHECK-NEXT:        attn.yield %[[T]] : f32
// CHECK-NEXT:      } mask_mod {
// CHECK-NEXT:      ^bb0(%[[B:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:        %[[DI:.*]] = memref.load %[[DB]][%[[B]], %[[I]]]
// CHECK-NEXT:        %[[DJ:.*]] = memref.load %[[DB]][%[[B]], %[[J]]]
// CHECK-NEXT:        %[[SAME:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK-NEXT:        attn.yield %[[SAME]] : i1
// CHECK-NEXT:      } : {{.*}} captures memref<4xf32, strided<[1], offset: ?>>, memref<2x?xi32, strided<[?, 1], offset: ?>> outs
// CHECK-NOT:     tensor.extract
func.func @alibi_document(%q: tensor<2x4x?x64xf16>, %k: tensor<2x2x?x64xf16>, %v: tensor<2x2x?x64xf16>, %slopes: tensor<4xf32>, %doc: tensor<2x?xi32>) -> tensor<2x4x?x64xf16> {
  %o = attn.attention %q, %k, %v {window = #attn.window<left = 256, right = 0>, softcap = 30.0 : f32}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %slope = tensor.extract %slopes[%h] : tensor<4xf32>
           %t = arith.addf %s, %slope : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %di = tensor.extract %doc[%b, %i] : tensor<2x?xi32>
           %dj = tensor.extract %doc[%b, %j] : tensor<2x?xi32>
           %same = arith.cmpi eq, %di, %dj : i32
           attn.yield %same : i1
         }
         : tensor<2x4x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16> -> tensor<2x4x?x64xf16>
  return %o : tensor<2x4x?x64xf16>
}

// -----

// A rank-0 tensor and a scalar defined above the op; no window.
// CHECK-LABEL: func @rank0_and_scalar
// CHECK:         %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         %[[TB:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<f32> to memref<f32, strided<[], offset: ?>>
// CHECK:         attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} captures(%[[TB]]))
// CHECK-NOT:       window
// CHECK-SAME:      score_mod {
// CHECK:           %[[X:.*]] = memref.load %[[TB]][]
// CHECK:           arith.mulf %{{.*}}, %[[C]] : f32
func.func @rank0_and_scalar(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %t: tensor<f32>) -> tensor<1x1x8x16xf32> {
  %two = arith.constant 2.0 : f32
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %t[] : tensor<f32>
    %y = arith.mulf %x, %two : f32
    %z = arith.addf %s, %y : f32
    attn.yield %z : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

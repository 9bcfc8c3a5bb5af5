// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of the variants of attn.attention (SPEC.md section 1.1) and of
// their block-level form.

// CHECK-LABEL: func @window_softcap
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = #attn.causal<bottom_right>, softcap = 5.000000e+01 : f32, window = #attn.window<left = 1024, right = 0>} : tensor<?x32x?x128xbf16>
func.func @window_softcap(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attn.attention %q, %k, %v {window = #attn.window<left = 1024, right = 0>, softcap = 50.0 : f32, causal = #attn.causal<bottom_right>} : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -1: unbounded on that side.
// CHECK-LABEL: func @unbounded_left
// CHECK: window = #attn.window<left = -1, right = 16>
func.func @unbounded_left(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.attention %q, %k, %v {window = #attn.window<left = -1, right = 16>} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}

// ALiBi (slopes[h] * (j - i)) and a document mask, both regions, reading
// tensors defined above the op.
// CHECK-LABEL: func @alibi_document
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<2x4x?x64xf16>, %{{[a-z0-9]+}}: tensor<2x2x?x64xf16>, %{{[a-z0-9]+}}: tensor<2x2x?x64xf16>, %[[SLOPES:[a-z0-9]+]]: tensor<4xf32>, %[[DOC:[a-z0-9]+]]: tensor<2x?xi32>,
// CHECK: attn.attention %[[Q]], %{{.*}}, %{{.*}} mask(%{{.*}}) {scale = 1.250000e-01 : f32} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[SLOPE:.*]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<4xf32>
// CHECK-NEXT:   %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK:        %[[T:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK-NEXT:   attn.yield %[[T]] : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %{{.*}}: index, %[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK-NEXT:   %[[DI:.*]] = tensor.extract %[[DOC]][%[[B]], %[[I2]]] : tensor<2x?xi32>
// CHECK-NEXT:   %[[DJ:.*]] = tensor.extract %[[DOC]][%[[B]], %[[J2]]] : tensor<2x?xi32>
// CHECK-NEXT:   %[[SAME:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK-NEXT:   attn.yield %[[SAME]] : i1
// CHECK-NEXT: } : tensor<2x4x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16>, tensor<?x?xi1> -> tensor<2x4x?x64xf16>
func.func @alibi_document(%q: tensor<2x4x?x64xf16>, %k: tensor<2x2x?x64xf16>, %v: tensor<2x2x?x64xf16>, %slopes: tensor<4xf32>, %doc: tensor<2x?xi32>, %m: tensor<?x?xi1>) -> tensor<2x4x?x64xf16> {
  %o = attn.attention %q, %k, %v mask(%m) {scale = 0.125 : f32}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %slope = tensor.extract %slopes[%h] : tensor<4xf32>
           %d = arith.subi %j, %i : index
           %di = arith.index_cast %d : index to i64
           %df = arith.sitofp %di : i64 to f32
           %bias = arith.mulf %slope, %df : f32
           %t = arith.addf %s, %bias : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %di = tensor.extract %doc[%b, %i] : tensor<2x?xi32>
           %dj = tensor.extract %doc[%b, %j] : tensor<2x?xi32>
           %same = arith.cmpi eq, %di, %dj : i32
           attn.yield %same : i1
         }
         : tensor<2x4x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16>, tensor<?x?xi1> -> tensor<2x4x?x64xf16>
  return %o : tensor<2x4x?x64xf16>
}

// A mask_mod alone (prefix-LM: the first 16 keys are seen by every row),
// with scf.if, math and a scalar defined above the op.
// CHECK-LABEL: func @prefix_lm
// CHECK: attn.attention {{.*}} mask_mod {
// CHECK: scf.if
// CHECK: attn.yield %{{.*}} : i1
// CHECK-NEXT: } : tensor<1x1x64x16xf32>
func.func @prefix_lm(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %prefix = arith.constant 16 : index
  %o = attn.attention %q, %k, %v mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %in = arith.cmpi slt, %j, %prefix : index
           %keep = scf.if %in -> i1 {
             %t = arith.constant true
             scf.yield %t : i1
           } else {
             %c = arith.cmpi sle, %j, %i : index
             scf.yield %c : i1
           }
           attn.yield %keep : i1
         } : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// Block level: the captured tensors as read-only buffers, read by
// memref.load in the regions.
// CHECK-LABEL: func @block_level
// CHECK-SAME: %[[SL:[a-z0-9]+]]: memref<4xf32>
// CHECK: attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} captures(%[[SL]])) outs(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 5.000000e-01 : f32, softcap = 3.000000e+01 : f32, window = #attn.window<left = 128, right = -1>} score_mod {
// CHECK: memref.load %[[SL]][%{{.*}}] : memref<4xf32>
// CHECK: } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> captures memref<4xf32> outs memref<?x4x?x64xf16>
func.func @block_level(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %slopes: memref<4xf32>, %b: index, %h: index, %qb: index) {
  attn.block_attention ins(%q, %k, %v captures(%slopes)) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.5 : f32, softcap = 30.0 : f32, window = #attn.window<left = 128, right = -1>}
    score_mod {
    ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %j: index):
      %slope = memref.load %slopes[%hh] : memref<4xf32>
      %t = arith.addf %s, %slope : f32
      attn.yield %t : f32
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> captures memref<4xf32> outs memref<?x4x?x64xf16>
  return
}

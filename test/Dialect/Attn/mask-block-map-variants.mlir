// RUN: attn-opt %s --attn-mask-block-map | FileCheck %s

// A program with variants reads its mask per element (the block classes
// would leave out its window and mask_mod): no block map.
// CHECK-LABEL: func @window_mask
// CHECK-NOT:     mask_block_map
// CHECK:         attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}})) outs
// CHECK-NOT:     mask_block_map
func.func @window_mask(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %m: memref<?x?xf16>, %o: memref<?x4x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %q, %c0 : memref<?x4x?x64xf16>
  scf.forall (%b, %h, %qb) in (%dim, 4, 2) {
    attn.block_attention ins(%q, %k, %v mask(%m)) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.125 : f32, window = #attn.window<left = 8, right = 8>} : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> mask memref<?x?xf16> outs memref<?x4x?x64xf16>
  } {attn.config = #attn.config<block_m = 64, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">}
  return
}

// A mask_mod that reads data (document ids) gets a block map: B x 1 x NI x
// NJ (it does not read its head argument), classified by a grid that
// evaluates the region with the causal limit and the window at the rows and
// keys clamped to Tq - 1 and Tk - 1; the program takes the map.
// CHECK-LABEL: func @document
// CHECK:         %[[MAP:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) {attn.workspace = "mask_block_map"} : memref<?x1x?x?xi8>
// CHECK:         scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[J:.*]]) in
// CHECK:           scf.for
// CHECK:             %[[TQ1:.*]] = arith.subi
// CHECK:             %[[IC:.*]] = arith.minsi %{{.*}}, %[[TQ1]] : index
// CHECK:             %[[TK1:.*]] = arith.subi
// CHECK:             %[[JC:.*]] = arith.minsi %{{.*}}, %[[TK1]] : index
// CHECK:             %[[DI:.*]] = memref.load %{{.*}}[%[[B]], %[[IC]]] : memref<?x?xi32>
// CHECK:             %[[DJ:.*]] = memref.load %{{.*}}[%[[B]], %[[JC]]] : memref<?x?xi32>
// CHECK:             %[[SAME:.*]] = arith.cmpi eq, %[[DI]], %[[DJ]] : i32
// CHECK:             arith.andi %{{.*}}, %[[SAME]] : i1
// CHECK:           memref.store %{{.*}}, %[[MAP]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK:         } {attn.mask_block_map = #attn.config
// CHECK:         attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} block_map(%[[MAP]]) captures(%{{.*}}))
// CHECK:         memref.dealloc %[[MAP]]
func.func @document(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %doc: memref<?x?xi32>, %o: memref<?x4x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %q, %c0 : memref<?x4x?x64xf16>
  scf.forall (%b, %h, %qb) in (%dim, 4, 2) {
    attn.block_attention ins(%q, %k, %v captures(%doc)) outs(%o) at [%b, %h, %qb] {causal = #attn.causal<top_left>, config = #attn.config<block_m = 64, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.125 : f32, window = #attn.window<left = 100, right = 0>}
      mask_mod {
      ^bb0(%bb: index, %hh: index, %i: index, %j: index):
        %di = memref.load %doc[%bb, %i] : memref<?x?xi32>
        %dj = memref.load %doc[%bb, %j] : memref<?x?xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        attn.yield %same : i1
      } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> captures memref<?x?xi32> outs memref<?x4x?x64xf16>
  } {attn.config = #attn.config<block_m = 64, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">}
  return
}

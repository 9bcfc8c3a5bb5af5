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

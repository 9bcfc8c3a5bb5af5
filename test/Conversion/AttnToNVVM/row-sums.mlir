// Row sums on the GPU (Reduction.cpp): a row buffer that only starts at
// zero, is scaled by a row factor and summed into inside the key loop, and
// is read only after it (the softmax denominator) stays per lane through the
// loop; the quad adds its 4 partials once, before the first other read.
// Anything else shuffles at every sum. Hand-written block programs: 64 rows,
// 4 warps, so each lane holds 2 rows (4 shuffles per sum).
// RUN: attn-opt %s --convert-attn-to-nvvm -split-input-file | FileCheck %s

#map_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#map_b = affine_map<(d0, d1, d2) -> (d1, d2)>
#map_c = affine_map<(d0, d1, d2) -> (d0, d1)>
#map_2 = affine_map<(d0, d1) -> (d0, d1)>
#map_r = affine_map<(d0, d1) -> (d0)>
#map_1 = affine_map<(d0) -> (d0)>
// (Indentation tells the loop body, 8 spaces, from the kernel body, 6.)
// CHECK-LABEL: gpu.func @deferred_kernel
// CHECK:         scf.for
// CHECK-NOT:       gpu.shuffle
// CHECK:           arith.mulf
// CHECK-NOT:       gpu.shuffle
// CHECK-COUNT-4: {{^      %[^ ]+, %[^ ]+ = gpu.shuffle  xor}}
// CHECK-NOT:     gpu.shuffle
// CHECK:         arith.divf
func.func @deferred(%o: memref<1x1x64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %zh = arith.constant 0.0 : f16
  scf.forall (%b, %h, %qb) in (1, 1, 1) {
    %qt = memref.alloca() : memref<64x16xf16>
    %kt = memref.alloca() : memref<16x16xf16>
    %s = memref.alloca() : memref<64x16xf32>
    %l = memref.alloca() : memref<64xf32>
    %a = memref.alloca() : memref<64xf32>
    linalg.fill ins(%zh : f16) outs(%qt : memref<64x16xf16>)
    linalg.fill ins(%zh : f16) outs(%kt : memref<16x16xf16>)
    linalg.fill ins(%zero : f32) outs(%l : memref<64xf32>)
    scf.for %j = %c0 to %c4 step %c1 {
      linalg.fill ins(%zero : f32) outs(%s : memref<64x16xf32>)
      linalg.generic {indexing_maps = [#map_a, #map_b, #map_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<64x16xf16>, memref<16x16xf16>) outs(%s : memref<64x16xf32>) {
      ^bb0(%x: f16, %y: f16, %acc: f32):
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %r = arith.addf %acc, %p : f32
        linalg.yield %r : f32
      }
      linalg.generic {indexing_maps = [#map_2, #map_r], iterator_types = ["parallel", "reduction"]} ins(%s : memref<64x16xf32>) outs(%l : memref<64xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %r = arith.addf %acc, %x : f32
        linalg.yield %r : f32
      }
      linalg.fill ins(%one : f32) outs(%a : memref<64xf32>)
      linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%a : memref<64xf32>) outs(%l : memref<64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %r = arith.mulf %y, %x : f32
        linalg.yield %r : f32
      }
    }
    linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%l : memref<64xf32>) outs(%l : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.divf %one, %x : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#map_r, #map_2], iterator_types = ["parallel", "parallel"]} ins(%l : memref<64xf32>) outs(%s : memref<64x16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.mulf %y, %x : f32
      linalg.yield %r : f32
    }
    %ov = memref.subview %o[%b, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : memref<1x1x64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map_2, #map_2], iterator_types = ["parallel", "parallel"]} ins(%s : memref<64x16xf32>) outs(%ov : memref<64x16xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
  } {attn.config = #attn.config<block_m = 64, block_n = 16, num_warps = 4, num_stages = 1, target = "sm_90a">}
  return
}

// -----

#map_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#map_b = affine_map<(d0, d1, d2) -> (d1, d2)>
#map_c = affine_map<(d0, d1, d2) -> (d0, d1)>
#map_2 = affine_map<(d0, d1) -> (d0, d1)>
#map_r = affine_map<(d0, d1) -> (d0)>
#map_1 = affine_map<(d0) -> (d0)>
// A read of the sum inside the loop: summed over the quad at every key block.
// CHECK-LABEL: gpu.func @read_in_loop_kernel
// CHECK:         scf.for
// CHECK-COUNT-4:   {{^        %[^ ]+, %[^ ]+ = gpu.shuffle  xor}}
// CHECK-NOT:     gpu.shuffle
// CHECK:         arith.divf
func.func @read_in_loop(%o: memref<1x1x64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %zh = arith.constant 0.0 : f16
  scf.forall (%b, %h, %qb) in (1, 1, 1) {
    %qt = memref.alloca() : memref<64x16xf16>
    %kt = memref.alloca() : memref<16x16xf16>
    %s = memref.alloca() : memref<64x16xf32>
    %l = memref.alloca() : memref<64xf32>
    %a = memref.alloca() : memref<64xf32>
    linalg.fill ins(%zh : f16) outs(%qt : memref<64x16xf16>)
    linalg.fill ins(%zh : f16) outs(%kt : memref<16x16xf16>)
    linalg.fill ins(%zero : f32) outs(%l : memref<64xf32>)
    scf.for %j = %c0 to %c4 step %c1 {
      linalg.fill ins(%zero : f32) outs(%s : memref<64x16xf32>)
      linalg.generic {indexing_maps = [#map_a, #map_b, #map_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<64x16xf16>, memref<16x16xf16>) outs(%s : memref<64x16xf32>) {
      ^bb0(%x: f16, %y: f16, %acc: f32):
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %r = arith.addf %acc, %p : f32
        linalg.yield %r : f32
      }
      linalg.generic {indexing_maps = [#map_2, #map_r], iterator_types = ["parallel", "reduction"]} ins(%s : memref<64x16xf32>) outs(%l : memref<64xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %r = arith.addf %acc, %x : f32
        linalg.yield %r : f32
      }
      linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%l : memref<64xf32>) outs(%a : memref<64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %r = arith.addf %x, %one : f32
        linalg.yield %r : f32
      }
    }
    linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%l : memref<64xf32>) outs(%l : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.divf %one, %x : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#map_r, #map_2], iterator_types = ["parallel", "parallel"]} ins(%l : memref<64xf32>) outs(%s : memref<64x16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.mulf %y, %x : f32
      linalg.yield %r : f32
    }
    %ov = memref.subview %o[%b, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : memref<1x1x64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map_2, #map_2], iterator_types = ["parallel", "parallel"]} ins(%s : memref<64x16xf32>) outs(%ov : memref<64x16xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
  } {attn.config = #attn.config<block_m = 64, block_n = 16, num_warps = 4, num_stages = 1, target = "sm_90a">}
  return
}

// -----

#map_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#map_b = affine_map<(d0, d1, d2) -> (d1, d2)>
#map_c = affine_map<(d0, d1, d2) -> (d0, d1)>
#map_2 = affine_map<(d0, d1) -> (d0, d1)>
#map_r = affine_map<(d0, d1) -> (d0)>
#map_1 = affine_map<(d0) -> (d0)>
// A sum that starts at 1 (four lanes' partials would count it four times).
// CHECK-LABEL: gpu.func @nonzero_init_kernel
// CHECK:         scf.for
// CHECK-COUNT-4:   {{^        %[^ ]+, %[^ ]+ = gpu.shuffle  xor}}
// CHECK-NOT:     gpu.shuffle
// CHECK:         arith.divf
func.func @nonzero_init(%o: memref<1x1x64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %zh = arith.constant 0.0 : f16
  scf.forall (%b, %h, %qb) in (1, 1, 1) {
    %qt = memref.alloca() : memref<64x16xf16>
    %kt = memref.alloca() : memref<16x16xf16>
    %s = memref.alloca() : memref<64x16xf32>
    %l = memref.alloca() : memref<64xf32>
    linalg.fill ins(%zh : f16) outs(%qt : memref<64x16xf16>)
    linalg.fill ins(%zh : f16) outs(%kt : memref<16x16xf16>)
    linalg.fill ins(%one : f32) outs(%l : memref<64xf32>)
    scf.for %j = %c0 to %c4 step %c1 {
      linalg.fill ins(%zero : f32) outs(%s : memref<64x16xf32>)
      linalg.generic {indexing_maps = [#map_a, #map_b, #map_c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<64x16xf16>, memref<16x16xf16>) outs(%s : memref<64x16xf32>) {
      ^bb0(%x: f16, %y: f16, %acc: f32):
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %r = arith.addf %acc, %p : f32
        linalg.yield %r : f32
      }
      linalg.generic {indexing_maps = [#map_2, #map_r], iterator_types = ["parallel", "reduction"]} ins(%s : memref<64x16xf32>) outs(%l : memref<64xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %r = arith.addf %acc, %x : f32
        linalg.yield %r : f32
      }
    }
    linalg.generic {indexing_maps = [#map_1, #map_1], iterator_types = ["parallel"]} ins(%l : memref<64xf32>) outs(%l : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.divf %one, %x : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#map_r, #map_2], iterator_types = ["parallel", "parallel"]} ins(%l : memref<64xf32>) outs(%s : memref<64x16xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.mulf %y, %x : f32
      linalg.yield %r : f32
    }
    %ov = memref.subview %o[%b, %h, 0, 0] [1, 1, 64, 16] [1, 1, 1, 1] : memref<1x1x64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map_2, #map_2], iterator_types = ["parallel", "parallel"]} ins(%s : memref<64x16xf32>) outs(%ov : memref<64x16xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
  } {attn.config = #attn.config<block_m = 64, block_n = 16, num_warps = 4, num_stages = 1, target = "sm_90a">}
  return
}

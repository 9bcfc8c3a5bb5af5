// RUN: attn-opt %s --convert-attn-to-nvvm -split-input-file -verify-diagnostics
// The errors name the grid and its location, without the grid (often
// thousands of lines) printed after them:
// RUN: not attn-opt %s --convert-attn-to-nvvm -split-input-file 2>&1 | FileCheck %s
// CHECK-NOT: note:
// CHECK:     error: 'scf.forall' op was tiled for the cpu target
// CHECK-NOT: note:
// CHECK:     error: 'scf.forall' op expects a normalized 3-D program grid
// CHECK-NOT: note:

// A grid tiled for the host cannot become a kernel.
func.func @cpu_grid(%o: memref<2x4x64x16xf16>) {
  // expected-error @+1 {{was tiled for the cpu target; tile for a GPU chip (--attn-tile="target=sm_90a")}}
  scf.forall (%b, %h, %q) in (2, 4, 1) {
  } {attn.config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 1, target = "cpu">}
  return
}

// -----

// The kernel takes its block coordinates from a 3-D grid.
func.func @grid_rank(%o: memref<2x4x64x16xf16>) {
  // expected-error @+1 {{expects a normalized 3-D program grid (batch, head, query block)}}
  scf.forall (%b, %h) in (2, 4) {
  } {attn.config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 1, target = "sm_90a">}
  return
}

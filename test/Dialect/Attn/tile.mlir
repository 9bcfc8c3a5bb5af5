// RUN: attn-opt %s --attn-tile --split-input-file --verify-each | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-m=16 block-n=8" --split-input-file | FileCheck %s --check-prefix=OVERRIDE
// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-tile="target=sm_80" --split-input-file | FileCheck %s --check-prefix=SM80
// The output of both passes prints, parses back and verifies:
// RUN: attn-opt %s --attn-tile --attn-online-softmax --split-input-file --verify-each \
// RUN:   | attn-opt --split-input-file --verify-each | FileCheck %s --check-prefix=ROUNDTRIP
// ROUNDTRIP-LABEL: func @gqa_causal
// ROUNDTRIP:         scf.forall
// ROUNDTRIP:           scf.for
// ROUNDTRIP:             math.exp2
// ROUNDTRIP-LABEL: func @static_mask
// ROUNDTRIP-LABEL: func @with_lse
// ROUNDTRIP:         math.log2
// ROUNDTRIP-LABEL: func @no_attention

// One program per (batch, query head, query block): a grid of
// B x Hq x ceil(Tq / block_m) programs over buffers of the tensors.

// CHECK-LABEL: func @gqa_causal
// CHECK-SAME:    (%[[Q:.*]]: tensor<?x8x?x64xbf16>, %[[K:.*]]: tensor<?x2x?x64xbf16>, %[[V:.*]]: tensor<?x2x?x64xbf16>)
// CHECK-DAG:     %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x8x?x64xbf16> to memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-DAG:     %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG:     %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[B:.*]] = memref.dim %[[QB]], %c0
// CHECK:         %[[TQ:.*]] = memref.dim %[[QB]], %c2
// CHECK:         %[[O:.*]] = memref.alloc(%[[B]], %[[TQ]]) : memref<?x8x?x64xbf16>
// num_query_blocks = ceil(Tq / block_m), block_m = 32 on the host.
// CHECK:         %[[NQB:.*]] = arith.ceildivui %{{.*}}, %c32
// CHECK:         scf.forall (%[[IB:.*]], %[[IH:.*]], %[[IQ:.*]]) in (%{{.*}}, 8, %[[NQB]])
// CHECK-NEXT:      attn.block_attention ins(%[[QB]], %[[KB]], %[[VB]]) outs(%[[O]]) at[%[[IB]], %[[IH]], %[[IQ]]]
// CHECK-SAME:        causal = #attn.causal<top_left>
// CHECK-SAME:        config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">
// CHECK-SAME:        scale = 1.250000e-01 : f32
// The grid carries the config for the GPU lowering.
// CHECK:         } {attn.config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">}
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK:         return %[[R]]

// OVERRIDE-LABEL: func @gqa_causal
// OVERRIDE:         arith.ceildivui %{{.*}}, %c16
// OVERRIDE:         config = #attn.config<block_m = 16, block_n = 8, num_warps = 1, num_stages = 1, target = "cpu">

// 16-bit types on sm_90a at head dim 64 or 128: one warpgroup of 16-row
// warps (both products on wgmma), key blocks of 64, two K/V stages; on
// other GPUs (mma.sync) 4 warps of 32 rows, three stages.
// SM90-LABEL: func @gqa_causal
// SM90:         config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">
// SM80-LABEL: func @gqa_causal
// SM80:         config = #attn.config<block_m = 128, block_n = 64, num_warps = 4, num_stages = 3, target = "sm_80">
func.func @gqa_causal(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// Static shapes: the grid is static too; the mask and precision travel with
// the program, and the default scale 1/sqrt(D) becomes explicit.

// CHECK-LABEL: func @static_mask
// CHECK:         memref.alloc() : memref<2x4x100x128xf32>
// CHECK:         scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (2, 4, 4)
// CHECK:           attn.block_attention ins(%{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}})) outs(%{{.*}})
// CHECK-SAME:        precision = #attn.precision<ieee>
// CHECK-SAME:        scale = 0.0883883461 : f32
// Inputs are viewed with dynamic strides (innermost 1): strided views work in place.
// CHECK-SAME:        memref<2x4x100x128xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-SAME:        mask memref<1x1x100x77xi1, strided<[?, ?, ?, 1], offset: ?>>
// CHECK:         } {attn.config = {{.*}}, attn.precision = #attn.precision<ieee>}

// Exact f32 (precision = ieee) with a mask tensor: 64x32, one stage (with
// two its three-pass products spill).
// SM90-LABEL: func @static_mask
// SM90:         config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 1, target = "sm_90a">
func.func @static_mask(%q: tensor<2x4x100x128xf32>, %k: tensor<2x4x77x128xf32>, %v: tensor<2x4x77x128xf32>, %m: tensor<1x1x100x77xi1>) -> tensor<2x4x100x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) {precision = #attn.precision<ieee>} : tensor<2x4x100x128xf32>, tensor<2x4x77x128xf32>, tensor<2x4x77x128xf32>, tensor<1x1x100x77xi1> -> tensor<2x4x100x128xf32>
  return %o : tensor<2x4x100x128xf32>
}

// tf32 (the seed's kernels), with a mask tensor and without: 64x32, two
// stages (the pipelined mask loop runs over the block map's live range).
// SM90-LABEL: func @tf32_mask
// SM90:         config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90a">
func.func @tf32_mask(%q: tensor<?x96x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

// SM90-LABEL: func @tf32_causal
// SM90:         config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90a">
func.func @tf32_causal(%q: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %q, %q {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

// 16-bit with a mask tensor at head dim 128: on sm_90a as without a mask
// (one warpgroup on wgmma); elsewhere 128x32, three stages (with the block
// map, 128-row programs pay; at head dim 64 64x64).
// SM90-LABEL: func @bf16_mask_d128
// SM90:         config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">
// SM80-LABEL: func @bf16_mask_d128
// SM80:         config = #attn.config<block_m = 128, block_n = 32, num_warps = 4, num_stages = 3, target = "sm_80">
func.func @bf16_mask_d128(%q: tensor<?x8x?x128xbf16>, %m: tensor<1x1x?x?xi1>) -> tensor<?x8x?x128xbf16> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<1x1x?x?xi1> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// SM90-LABEL: func @f16_mask_d64
// SM90:         config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">
func.func @f16_mask_d64(%q: tensor<?x8x?x64xf16>, %m: tensor<?x?xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %q, %q mask(%m) : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x?xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// The log-sum-exp result: a B x Hq x Tq f32 buffer each program writes its
// rows of, returned after the output.

// CHECK-LABEL: func @with_lse
// CHECK:         %[[O:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x8x?x64xf16>
// CHECK:         %[[L:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x8x?xf32>
// CHECK:         scf.forall
// CHECK-NEXT:      attn.block_attention ins({{.*}}) outs(%[[O]] lse(%[[L]]))
// CHECK-SAME:        outs memref<?x8x?x64xf16> lse memref<?x8x?xf32>
// CHECK:         %[[RO:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK:         %[[RL:.*]] = bufferization.to_tensor %[[L]] restrict writable
// CHECK:         return %[[RO]], %[[RL]]
func.func @with_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.attention %q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// -----

// No attn.attention: nothing changes.

// CHECK-LABEL: func @no_attention
// CHECK-NEXT:    return %arg0
// CHECK-NOT:     scf.forall
func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}


// The log-sum-exp result on the GPU: the kernel takes the B x Hq x Tq f32
// buffer as one more argument (attn.kernel_args code -2: result 1 of the
// host function) with the caller's strides, every one dynamic ((B, Tq, Hq)
// storage viewed as (B, Hq, Tq) has its rows Hq apart), and the first lane of each quad stores its rows under the
// rows' bound. mma.sync (sm_80) and wgmma (sm_90a, pipelined) alike:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s

// CHECK:       gpu.launch_func @attn_kernels::@lse_kernel
// CHECK-SAME:    memref<?x8x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK:       gpu.func @lse_kernel(
// CHECK-SAME:    %[[LSE:[a-z0-9]*]]: memref<?x8x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-SAME:    attn.kernel_args = array<i32: 0, 1, 2, -1, -2
// The log of the denominator, once the quad has summed it (the first read
// after the key loops: row-sums.mlir).
// CHECK:         math.log2
// CHECK:         %[[ROWS:.*]] = memref.subview %[[LSE]]
// CHECK:         %[[LEADER:.*]] = arith.cmpi eq, %{{.*}}, %c0{{.*}} : index
// CHECK:         %[[INSIDE:.*]] = arith.cmpi ult
// CHECK:         %[[STORE:.*]] = arith.andi %[[LEADER]], %[[INSIDE]]
// CHECK-NEXT:    scf.if %[[STORE]] {
// CHECK:           %[[V:.*]] = memref.load
// CHECK-NEXT:      memref.store %[[V]], %[[ROWS]][
// CHECK:         gpu.return
func.func @lse(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}

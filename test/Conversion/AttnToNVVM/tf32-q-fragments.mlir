// tf32 kernels read the Q tile's A fragments into registers once, after
// the synchronous copy that fills Q and its barrier, and the Q K^T MMAs of
// both key loops take them from there: the loops read only K and V from
// shared memory. (f32, head dim 64, 64-row programs of 4 warps: one m16
// tile per warp, 8 k steps x 4 registers = 32.)
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm -cse | FileCheck %s --check-prefixes=CHECK,D16

// CHECK-LABEL: gpu.func @tf32_kernel
// CHECK:         %[[FRAG:.*]] = memref.alloca() : memref<32xf32>
// CHECK:         %[[Q:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x68xf32, #gpu.address_space<workgroup>>
// Q: 16-byte stores, a barrier, then the 32 fragment registers.
// CHECK:         vector.store %{{.*}}, %[[Q]]
// CHECK:         gpu.barrier
// CHECK-COUNT-32: memref.load %[[Q]]
// CHECK-NOT:     memref.load %[[Q]]
// CHECK:         memref.store %{{.*}}, %[[FRAG]][%c31]
// CHECK-NOT:     memref.load %[[Q]]
// Both key loops: A from the registers, B (K) from shared memory.
// CHECK:         scf.for
// CHECK:           memref.load %[[FRAG]][%c0]
// CHECK:           nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// CHECK:           memref.load %[[FRAG]][%c31]
// CHECK:         scf.for
// CHECK:           memref.load %[[FRAG]][%c0]
// CHECK:           nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// CHECK:           memref.load %[[FRAG]][%c31]
// CHECK:         gpu.return
func.func @tf32(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// Head dim 16: too few fragments to be worth registers (and ptxas then
// spilled); Q stays in shared memory.
// D16-LABEL: gpu.func @tf32_d16_kernel
// D16-NOT:     memref.alloca() : memref<8xf32>
// D16:         %[[Q:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x20xf32, #gpu.address_space<workgroup>>
// D16:         scf.for
// D16:           memref.load %[[Q]]
// D16:           nvvm.mma.sync
// D16:         gpu.return
func.func @tf32_d16(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

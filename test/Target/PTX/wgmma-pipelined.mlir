// The opt-in wgmma kernels of the seed's shape (f32/tf32, head dim 128,
// 64x32x4 programs, two stages, `causal` and with a mask tensor) assemble
// with their wgmma pipelined: ptxas warns C7511 when it serializes them
// (it did while the NVPTX backend put the accumulators' zeroing after the
// wgmma fence: docs/GPU.md, wgmma), and with no spills or stack.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e causal --chip=sm_90a --wgmma -o %t/causal.ptx
// RUN: %ptxas -arch=sm_90a -v %t/causal.ptx -o %t/causal.cubin 2>&1 | FileCheck %s
// RUN: attn-translate --attn-to-ptx %s -e masked --chip=sm_90a --wgmma -o %t/masked.ptx
// RUN: %ptxas -arch=sm_90a -v %t/masked.ptx -o %t/masked.cubin 2>&1 | FileCheck %s
// CHECK-NOT: C75{{[0-9][0-9]}}
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: C75{{[0-9][0-9]}}
// CHECK-NOT: {{[1-9][0-9]*}} bytes spill
func.func @causal(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}
func.func @masked(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

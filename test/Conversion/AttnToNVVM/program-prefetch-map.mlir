// Q prefetched across programs (`program-prefetch`) in a mask-tensor kernel
// with its block map: the fragments are read in each branch of the causal
// map rows' `scf.if` (after that branch's first K/V copies), so each branch
// waits for the program's phase and issues the next program's rows; every
// program passes exactly one of them.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-mask-block-map \
// RUN:   --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm="program-tiles=3 program-prefetch=true" | FileCheck %s

// CHECK-LABEL: gpu.func @ppm_kernel
// CHECK:         nvvm.mbarrier.init
// CHECK:         nvvm.cp.async.bulk.shared.cluster.global
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// The causal map row's branch, then the map's own loops.
// CHECK:           scf.if %{{.*}} {
// CHECK:             %[[P1:.*]] = arith.andi %[[T]], %{{.*}} : i32
// CHECK:             nvvm.mbarrier.try_wait.parity %{{.*}}, %[[P1]]
// CHECK:               nvvm.cp.async.bulk.shared.cluster.global
// CHECK:           } else {
// CHECK:             %[[P2:.*]] = arith.andi %[[T]], %{{.*}} : i32
// CHECK:             nvvm.mbarrier.try_wait.parity %{{.*}}, %[[P2]]
// CHECK:               nvvm.cp.async.bulk.shared.cluster.global
// CHECK:           }
// CHECK-NOT:       nvvm.mbarrier.try_wait.parity
// CHECK-NOT:       nvvm.cp.async.bulk
// CHECK:         } {attn.program_loop}

func.func @ppm(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x64xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<2x4x?x64xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<1x1x?x?xf32> -> tensor<2x4x?x64xf32>
  return %o : tensor<2x4x?x64xf32>
}

// The wgmma kernels of the seed's shape (f32/tf32, head dim 128, 64x32x4
// programs, two stages, `causal` and with a mask tensor; scores-ahead on
// wgmma is their default) assemble with their wgmma pipelined: ptxas warns
// C7511 when it serializes them
// (it did while the NVPTX backend put the accumulators' zeroing after the
// wgmma fence: docs/Wgmma.md), and with no spills or stack. Checked
// by default and with --scores-ahead (all: the next block's scores in
// flight over this block's softmax and P V in every eligible loop).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s -e causal --chip=sm_90a -o %t/causal.ptx
// RUN: %ptxas -arch=sm_90a -v %t/causal.ptx -o %t/causal.cubin 2>&1 | FileCheck %s
// RUN: attn-translate --attn-to-ptx %s -e masked --chip=sm_90a --scores-ahead -o %t/masked-ahead.ptx
// RUN: %ptxas -arch=sm_90a -v %t/masked-ahead.ptx -o %t/masked-ahead.cubin 2>&1 | FileCheck %s
// The scores-ahead kernels wait for the prologue's scores in place, and
// hold the loop's in flight across the softmax: a commit with no wait before
// the mma.sync of P V.
// RUN: FileCheck %s --check-prefix=ASYNC < %t/causal.ptx
// ASYNC:      wgmma.commit_group.sync.aligned;
// ASYNC-NEXT: wgmma.wait_group.sync.aligned 0;
// ASYNC:      wgmma.commit_group.sync.aligned;
// ASYNC-NOT:  wgmma.wait_group
// ASYNC:      mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// ASYNC:      wgmma.wait_group.sync.aligned 0;
// The mask kernel (a mask block map's rows scanned) reads the shared
// memory's base from its symbol where it builds each wgmma descriptor, so
// that ptxas keeps the descriptors in uniform registers (its unmasked loop
// was 568 SASS instructions against 509 so); the `causal` kernel, whose
// base ptxas keeps uniform anyway, does not.
// RUN: attn-translate --attn-to-ptx %s -e masked --chip=sm_90a -o %t/masked-default.ptx
// RUN: %ptxas -arch=sm_90a -v %t/masked-default.ptx -o %t/masked-default.cubin 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=FRESH < %t/masked-default.ptx
// RUN: FileCheck %s --check-prefix=NOT-FRESH < %t/causal.ptx
// (NVPTX's own read of the symbol is a mov.b32, the asm's a mov.u32.)
// FRESH:      mov.u32 %r{{[0-9]+}}, __dynamic_shmem__0;
// FRESH:      wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// NOT-FRESH-NOT: mov.u32 %r{{[0-9]+}}, __dynamic_shmem__0;
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

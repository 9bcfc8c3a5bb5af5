// The seed's mask-tensor kernel with a producer warpgroup (attn-translate
// --warp-specialize): its block votes (the scan of the program's row of the
// block map, the mixed blocks' terms) OR over the 128 consumer threads on
// named barrier 1, not over the thread block on barrier 0, which the
// producer left after the entry. (This kernel spills under .maxnreg 216 and
// stays opt-in: docs/Wgmma.md, "A producer warpgroup"; ptxas still
// assembles it.)
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --warp-specialize -o %t/k.ptx
// RUN: FileCheck %s < %t/k.ptx
// RUN: %ptxas -arch=sm_90a %t/k.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --allow-empty
// CHECK-LABEL: .entry seed_mask_kernel(
// CHECK:       bar.sync 0;
// CHECK:       setmaxnreg.inc.sync.aligned.u32 216;
// CHECK-NOT:   bar.red.or.pred {{.*}}, 0,
// CHECK:       bar.red.or.pred q, 1, 128, p;
// CHECK-NOT:   bar.red.or.pred {{.*}}, 0,
// CHECK:       ret;
// PTXAS-NOT: error
func.func @seed_mask(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

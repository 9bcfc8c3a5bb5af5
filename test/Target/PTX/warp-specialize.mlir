// The seed's `causal` kernel with a producer warpgroup (attn-translate
// --warp-specialize) is PTX that ptxas assembles for sm_90a (without a stack
// frame or spills until 0.4.8; since its (query block, head, batch) grid,
// 16 bytes: ptxas' allocation at this cap moves with any change, and the
// option stays opt-in and slower, docs/Wgmma.md): 256 threads under
// .maxnreg 128, the consumers raising
// their registers to 216 and the producer lowering its own to 40 after the
// entry's barrier, the kernel's only barrier 0 (the slots' handovers are
// mbarriers); the consumers' block votes (the diagonal blocks' math; their
// Q K^T's flag is attn.program_live, no vote) go to named barrier 1 of 128
// threads; the manifest launches 256 threads. Without the option the
// kernel is the default one (128 threads, no setmaxnreg).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --warp-specialize -o %t/k.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/k.ptx
// RUN: %ptxas -arch=sm_90a -v %t/k.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k.json
// The entry's barrier is the kernel's only thread-block barrier:
// RUN: grep -c 'bar.sync' %t/k.ptx | FileCheck %s --check-prefix=ONEBAR
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a -o %t/d.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t/d.ptx
// RUN: FileCheck %s --check-prefix=OFFMANIFEST < %t/d.json
// PTX-LABEL: .entry seed_causal_kernel(
// PTX:      .maxnreg 128
// PTX-COUNT-10: mbarrier.init.shared.b64
// PTX-NOT:  mbarrier.init
// PTX:      fence.mbarrier_init.release.cluster;
// PTX:      bar.sync 0;
// PTX:      setmaxnreg.inc.sync.aligned.u32 216;
// (ptxas' block layout puts the roles' code in any order.)
// PTX-DAG:  setmaxnreg.dec.sync.aligned.u32 40;
// PTX-DAG:  mbarrier.try_wait.parity.shared::cta.b64
// PTX-DAG:  wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// PTX-DAG:  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-DAG:  bar.red.or.pred q, 1, 128, p;
// PTX-DAG:  mbarrier.arrive.shared.b64
// PTX-DAG:  mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG:  cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:      ret;
// PTX-NOT:  setmaxnreg
// PTXAS:    bytes stack frame, {{[0-9]+}} bytes spill stores
// PTXAS-NOT: error
// ONEBAR:    {{^1$}}
// MANIFEST:  "block": [256, 1, 1],
// OFF-NOT:   .maxnreg
// OFF-NOT:   setmaxnreg
// OFFMANIFEST: "block": [128, 1, 1],
func.func @seed_causal(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

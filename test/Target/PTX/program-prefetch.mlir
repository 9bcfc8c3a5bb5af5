// The program-loop kernel with Q prefetched across programs by bulk copies
// (attn-translate --program-tiles=2 --program-prefetch, with the next
// program's first K/V blocks prefetched into L2: --program-prefetch-l2) is
// PTX that ptxas assembles for sm_90a: per-row bulk copies onto the warps'
// mbarriers, the parity wait of each program, and Q's fragments read from
// the tile. (It
// is opt-in: a few bytes of the per-program addresses spill at 255
// registers, outside the key loops; docs/ProgramLoops.md.)
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --program-tiles=2 --program-prefetch --program-prefetch-l2 -o %t/k.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/k.ptx
// RUN: %ptxas -arch=sm_90a -v %t/k.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k.json
// With the next program's first K/V blocks loaded into their slots too:
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --program-tiles=2 --program-prefetch --program-prefetch-kv -o %t/kv.ptx
// RUN: %ptxas -arch=sm_90a -v %t/kv.ptx -o %t/kv.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// One program per thread block, prefetching the next wave's first blocks:
// RUN: attn-translate --attn-to-ptx %s --chip=sm_90a --prefetch-ahead=2 -o %t/w.ptx
// RUN: FileCheck %s --check-prefix=WAVE < %t/w.ptx
// RUN: %ptxas -arch=sm_90a -v %t/w.ptx -o %t/w.cubin 2>&1 | FileCheck %s --check-prefix=WAVEPTXAS
// WAVE:      cp.async.commit_group;
// WAVE:      mov.u32 {{.*}}, %nsmid;
// WAVE:      cp.async.bulk.prefetch.L2.global [{{.*}}], {{.*}};
// WAVE:      cp.async.wait_group
// WAVEPTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTX:      mbarrier.init.shared.b64
// PTX:      fence.mbarrier_init.release.cluster;
// PTX:      mbarrier.arrive.expect_tx.shared.b64
// PTX:      cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{{.*}}], [{{.*}}], {{.*}}, [{{.*}}];
// PTX:      cp.async.bulk.prefetch.L2.global [{{.*}}], {{.*}};
// PTX:      mbarrier.try_wait.parity.shared.b64
// PTX:      fence.proxy.async.shared::cta;
// PTX:      cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTXAS:    ptxas info    : Used {{[0-9]+}} registers
// PTXAS-NOT: error
// The launch: two programs per thread block along y, and the mbarriers'
// 32 bytes after the tiles' 101376.
// MANIFEST:      {"ceil_div": [{"mul": ["B", "Hq"]}, 2]},
// MANIFEST:      "shared_memory_bytes": 101408,
func.func @seed(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>, %v: tensor<?x96x?x128xf32>) -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

// attn-run --target=cuda compiles 16-bit kernels for sm_90a with both
// products on wgmma. --emit-kernel writes the PTX without a GPU.

func.func @attn(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>) -> tensor<?x4x?x128xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --target=cuda --emit-kernel=%t/on | FileCheck %s --check-prefix=WROTE
// WROTE: attn-run: wrote {{.*}}/attn.ptx and {{.*}}/attn.json for sm_90a
// RUN: FileCheck %s --check-prefix=ON < %t/on/attn.ptx
// RUN: FileCheck %s --check-prefix=CONFIG < %t/on/attn.json
// ON:      wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// ON-NOT:  mma.sync
// CONFIG:  "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},


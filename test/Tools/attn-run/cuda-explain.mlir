// REQUIRES: cuda-gpu
// attn-run --bench --explain on a GPU: the explain report after the bench
// line (docs/Explain.md), the same through a launch manifest, and under
// "explain" in --json.

func.func @f(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

// RUN: attn-run %s -e f --target=cuda --input=4x8x1024x64xbf16 --input=4x8x1024x64xbf16 \
// RUN:   --input=4x8x1024x64xbf16 --check --bench --iters=5 --explain \
// RUN:   | FileCheck %s --match-full-lines
// CHECK: attn-run: f on cuda: q=4x8x1024x64xbf16 k=4x8x1024x64xbf16 v=4x8x1024x64xbf16 -> o=4x8x1024x64xbf16
// CHECK-NEXT: bench: median_ms={{[0-9.e+-]+}} tflops={{[0-9.e+-]+}} floor_ms={{[0-9.e+-]+}}
// CHECK-NEXT: explain: device={{.+}} ({{sm_[0-9]+}}, {{[0-9]+}} SMs, {{.+}})
// CHECK-NEXT: explain: problem=B=4 Hq=8 Hkv=8 Tq=1024 Tk=1024 D=64 Dv=64 bf16 causal=top_left mask=none
// CHECK-NEXT: explain: flops=4.295e+09
// CHECK-NEXT: explain: bytes=1.678e+07
// CHECK-NEXT: explain: flop_floor_ms={{[0-9.e+-]+}}
// CHECK-NEXT: explain: hbm_floor_ms={{[0-9.e+-]+}}
// CHECK-NEXT: explain: floor_ms={{[0-9.e+-]+}} ({{compute|memory}} bound)
// CHECK-NEXT: explain: median_ms={{[0-9.e+-]+}}
// CHECK-NEXT: explain: fraction_of_floor={{[0-9.]+}}
// CHECK-NEXT: explain: tflops={{[0-9.]+}}
// CHECK-NEXT: explain: hbm_gbps={{[0-9]+}}
// CHECK-NEXT: explain: config=block_m={{[0-9]+}} block_n={{[0-9]+}} num_warps={{[0-9]+}} num_stages={{[0-9]+}}
// CHECK-NEXT: explain: launch=grid={{[0-9]+}} blocks x {{[0-9]+}} threads, waves={{[0-9.]+}}
// CHECK-NEXT: explain: registers={{[0-9]+}}
// CHECK-NEXT: explain: shared_bytes={{[0-9]+}} static + {{[0-9]+}} dynamic
// CHECK-NEXT: explain: local_bytes=0
// CHECK-NEXT: explain: occupancy={{[0-9]+}} blocks/SM, {{[0-9]+}}/{{[0-9]+}} warps/SM = {{[0-9.]+}} (driver)
// CHECK-NEXT: explain: tensor_cores=yes ({{[0-9]+}} {{HMMA/HGMMA in the SASS|mma.sync/wgmma in the PTX}}; {{.+}})
// CHECK: explain: causes={{[a-z_,]+}}
// CHECK-NEXT: check: PASS rel_l2={{[0-9.e+-]+}} max_abs={{[0-9.e+-]+}}

// RUN: rm -rf %t && attn-run %s -e f --target=cuda --emit-kernel=%t > /dev/null
// RUN: attn-run %t/f.json --input=4x8x1024x64xbf16 --input=4x8x1024x64xbf16 \
// RUN:   --input=4x8x1024x64xbf16 --bench --iters=5 --explain | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: explain: flops=4.295e+09
// MANIFEST: explain: causes=

// RUN: attn-run %t/f.json --input=4x8x1024x64xbf16 --input=4x8x1024x64xbf16 \
// RUN:   --input=4x8x1024x64xbf16 --bench --iters=5 --explain --json | FileCheck %s --check-prefix=JSON
// JSON: "explain":{"bound": "{{compute|memory}}", "bytes": 16777216, {{.*}}"causes": [{{.*}}], {{.*}}"flops": 4294967296, {{.*}}"registers": {{[0-9]+}}

// With a mask tensor the report also counts the classes of the block map
// the last timed launch wrote (--attn-mask-block-map), after the problem
// line: for a causal 0 / -inf mask of 256 x 256 in 64 x 32 blocks (the f32
// defaults), 4 x 8 map entries per slice: 12 removed, 12 zero, 8
// triangular across the diagonal, none mixed.
// RUN: %python -c "import array, struct, sys; T = 256; h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, %%d, %%d), }\" %% (T, T); h += ' ' * (63 - (10 + len(h)) %% 64) + '\n'; f = open(sys.argv[1], 'wb'); f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode()); array.array('f', [float('-inf') if j > i else 0.0 for i in range(T) for j in range(T)]).tofile(f)" %t.causal.npy
// RUN: attn-run %s -e seed_mask --target=cuda --input=2x4x256x128xf32 --input=2x4x256x128xf32 \
// RUN:   --input=2x4x256x128xf32 --input=@%t.causal.npy --bench --iters=5 --explain \
// RUN:   | FileCheck %s --check-prefix=MASK
// MASK: explain: problem=B=2 Hq=4 Hkv=4 Tq=256 Tk=256 D=128 Dv=128 f32 tf32 causal=none mask=f32[65536]
// MASK-NEXT: explain: mask_blocks=12 removed, 12 zero, 8 triangular, 0 mixed (of 32)
// MASK-NEXT: explain: flops=
func.func @seed_mask(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<?x4x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<1x1x?x?xf32> -> tensor<?x4x?x128xf32>
  return %o : tensor<?x4x?x128xf32>
}

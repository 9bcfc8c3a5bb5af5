// GQA decode packing executed on the host: with one query row per head, the
// query heads of a KV head run as the rows of one program (--attn-tile's
// getQueryHeadPacking); --check compares with the float64 reference, which
// knows nothing of it.

// The packing happens: programs over the 2 KV heads, each with 4 rows.
// RUN: attn-run %s -e bf16_lse --input=3x8x1x64xbf16 --input=3x2x300x64xbf16 --input=3x2x300x64xbf16 --input=3xi32 --check --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PACKED
// PACKED: scf.forall ({{.*}}) in ({{.*}}, 2, 1)
// PACKED: attn.block_attention {{.*}} : memref<?x2x4x64xbf16,
// PACKED: check: PASS

// bf16, bottom_right causal, softcap, per-batch lengths (some 0) and the
// log-sum-exp; unsplit, and split over 64 program slots (S = 8 = 64 / (3 x 2),
// not the 2 of 64 / (3 x 8)), with the key tail inside a block.
// RUN: attn-run %s -e bf16_lse --input=3x8x1x64xbf16 --input=3x2x1x64xbf16 --input=3x2x1x64xbf16 --input=3xi32 --check | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_lse --input=3x8x1x64xbf16 --input=3x2x1000x64xbf16 --input=3x2x1000x64xbf16 --input=3xi32 --check --seed=3 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_lse --input=3x8x1x64xbf16 --input=3x2x1000x64xbf16 --input=3x2x1000x64xbf16 --input=3xi32 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_lse --input=3x8x1x64xbf16 --input=3x2x4099x64xbf16 --input=3x2x4099x64xbf16 --input=3xi32 --check --split-programs=64 --seed=5 | FileCheck %s --check-prefix=LSE
// LSE: check: PASS {{.*}} lse_max_err=

// f32 without causal; MQA with 64 query heads, more rows than one query
// block (two blocks of 32 on the host, 4 of 16 with --block-m=16).
// RUN: attn-run %s -e f32_mqa --input=2x64x1x32xf32 --input=2x1x77x32xf32 --input=2x1x77x32xf32 --check | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_mqa --input=2x64x1x32xf32 --input=2x1x77x32xf32 --input=2x1x77x32xf32 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_mqa --input=2x64x1x32xf32 --input=2x1x2000x32xf32 --input=2x1x2000x32xf32 --check --split-programs=16 | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

func.func @bf16_lse(%q: tensor<?x8x1x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %l: tensor<?xi32>) -> (tensor<?x8x1x64xbf16>, tensor<?x8x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>, softcap = 20.0 : f32} : tensor<?x8x1x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x1x64xbf16>, tensor<?x8x1xf32>
  return %o, %lse : tensor<?x8x1x64xbf16>, tensor<?x8x1xf32>
}

func.func @f32_mqa(%q: tensor<?x64x1x32xf32>, %k: tensor<?x1x?x32xf32>, %v: tensor<?x1x?x32xf32>) -> tensor<?x64x1x32xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x64x1x32xf32>, tensor<?x1x?x32xf32>, tensor<?x1x?x32xf32> -> tensor<?x64x1x32xf32>
  return %o : tensor<?x64x1x32xf32>
}

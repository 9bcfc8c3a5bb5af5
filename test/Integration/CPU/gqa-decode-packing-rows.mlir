// GQA packing of several query rows per head (speculative decoding) on the
// host: with a static Tq of 2..16, p query heads of a KV head (p dividing
// Hq / Hkv, p x Tq <= block_m) run as the p x Tq rows of one program, row r
// being query r mod Tq of its head (--attn-tile's packed_heads). --check
// compares with the float64 reference, which knows nothing of it.

// The packing happens: the host's block_m of 32 holds 2 heads of Tq = 16
// (programs over 4 x 2 head pairs), 4 heads of Tq = 4 (all 4 of a KV head).
// RUN: attn-run %s -e bf16_causal --input=3x8x16x64xbf16 --input=3x2x300x64xbf16 --input=3x2x300x64xbf16 --input=3xi32 --check --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PACK16
// PACK16: scf.forall ({{.*}}) in ({{.*}}, 4, 1)
// PACK16: attn.block_attention {{.*}}packed_heads = 2
// PACK16: check: PASS
// RUN: attn-run %s -e f16_top_left --input=2x8x4x32xf16 --input=2x2x70x32xf16 --input=2x2x70x32xf16 --check --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PACK4
// PACK4: scf.forall ({{.*}}) in ({{.*}}, 2, 1)
// PACK4: attn.block_attention {{.*}}packed_heads = 4
// PACK4: check: PASS

// bf16, bottom_right causal (each row its own diagonal), per-batch lengths
// (one shorter than Tq, one 0) and the log-sum-exp; unsplit, split over 64
// program slots, with the key tail inside a block, and with the GPU's block
// sizes (64-row blocks: all 4 heads of Tq = 16).
// RUN: attn-run %s -e bf16_causal --input=3x8x16x64xbf16 --input=3x2x1x64xbf16 --input=3x2x1x64xbf16 --input=3xi32 --check | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_causal --input=3x8x16x64xbf16 --input=3x2x1000x64xbf16 --input=3x2x1000x64xbf16 --input=3xi32 --check --seed=3 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_causal --input=3x8x16x64xbf16 --input=3x2x1000x64xbf16 --input=3x2x1000x64xbf16 --input=3xi32 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e bf16_causal --input=3x8x16x64xbf16 --input=3x2x4099x64xbf16 --input=3x2x4099x64xbf16 --input=3xi32 --check --split-programs=64 --seed=5 --block-m=64 --block-n=64 | FileCheck %s --check-prefix=LSE
// LSE: check: PASS {{.*}} lse_max_err=

// top_left causal (the rows' diagonals at keys 0 .. Tq - 1) and no causal
// mask, f16 and f32; MQA with 6 query heads of Tq = 5 (p = 6 in 32 rows on
// the host, 3 of 2 programs with --block-m=16).
// RUN: attn-run %s -e f16_top_left --input=2x8x4x32xf16 --input=2x2x70x32xf16 --input=2x2x70x32xf16 --check | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f16_top_left --input=2x8x4x32xf16 --input=2x2x3x32xf16 --input=2x2x3x32xf16 --check --seed=7 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_mqa --input=2x6x5x32xf32 --input=2x1x77x32xf32 --input=2x1x77x32xf32 --check | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_mqa --input=2x6x5x32xf32 --input=2x1x77x32xf32 --input=2x1x77x32xf32 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_mqa --input=2x6x5x32xf32 --input=2x1x2000x32xf32 --input=2x1x2000x32xf32 --check --split-programs=16 | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

func.func @bf16_causal(%q: tensor<?x8x16x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %l: tensor<?xi32>) -> (tensor<?x8x16x64xbf16>, tensor<?x8x16xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x8x16x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x16x64xbf16>, tensor<?x8x16xf32>
  return %o, %lse : tensor<?x8x16x64xbf16>, tensor<?x8x16xf32>
}

func.func @f16_top_left(%q: tensor<?x8x4x32xf16>, %k: tensor<?x2x?x32xf16>, %v: tensor<?x2x?x32xf16>) -> tensor<?x8x4x32xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x4x32xf16>, tensor<?x2x?x32xf16>, tensor<?x2x?x32xf16> -> tensor<?x8x4x32xf16>
  return %o : tensor<?x8x4x32xf16>
}

func.func @f32_mqa(%q: tensor<?x6x5x32xf32>, %k: tensor<?x1x?x32xf32>, %v: tensor<?x1x?x32xf32>) -> tensor<?x6x5x32xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x6x5x32xf32>, tensor<?x1x?x32xf32>, tensor<?x1x?x32xf32> -> tensor<?x6x5x32xf32>
  return %o : tensor<?x6x5x32xf32>
}

// Split-KV (flash-decoding) executed on the host: with --split-programs=64 a
// function whose Tq is static and fits one query block runs B x Hq x S
// programs, each over its own run of key blocks, writing its partial output
// and log-sum-exp to f32 workspaces, and a combine grid merges them;
// --check compares the result with the float64 reference. The splits: S =
// min(ceil(Tk / (4 block_n)), ceil(64 / (B Hq))), block_n 32 on the host
// (128 keys per split at least; 32 with --block-n=8).

// The split happens: the tiled grid carries the split rule and the combine
// grid follows it (and not without --split-programs, the host's default).
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x700x64xf16 --input=2x2x700x64xf16 --check --split-programs=64 --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x700x64xf16 --input=2x2x700x64xf16 --check --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// SPLIT: attn.key_splits = array<i64: 128, 64>
// SPLIT: attn.split_combine
// SPLIT: check: PASS
// NOSPLIT-NOT: attn.key_splits
// NOSPLIT-NOT: attn.split_combine
// NOSPLIT: check: PASS

// f16, GQA 4:2, bottom-right causal, Tq = 3, with the log-sum-exp: Tk from
// 1 (fewer keys than one block; 1 split) through block tails (33, 127, 129)
// to 3000 (S = 8: 64 / (2 x 4)), and the same with 32-key splits.
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x1x64xf16 --input=2x2x1x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x33x64xf16 --input=2x2x33x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x127x64xf16 --input=2x2x127x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x129x64xf16 --input=2x2x129x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x1000x64xf16 --input=2x2x1000x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x3000x64xf16 --input=2x2x3000x64xf16 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x1000x64xf16 --input=2x2x1000x64xf16 --check --split-programs=64 --block-n=8 --seed=4 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e f16_gqa --input=1x4x3x64xf16 --input=1x2x2049x64xf16 --input=1x2x2049x64xf16 --check --split-programs=64 --block-m=16 --block-n=8 --num-stages=3 | FileCheck %s --check-prefix=LSE
// LSE: -> o={{.*}}x4x3x64xf16 lse={{.*}}x4x3xf32
// LSE-NEXT: check: PASS {{.*}} lse_max_err=

// f32 (IEEE), top-left causal, Tq = 16 (rows past Tk see keys, rows below
// them fewer), no log-sum-exp; Tk = 5 (every split but the first empty) and
// 2500; one KV head (MQA) and B = 3.
// RUN: attn-run %s -e f32_top_left --input=3x8x16x32xf32 --input=3x1x5x32xf32 --input=3x1x5x32xf32 --check --split-programs=64 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e f32_top_left --input=3x8x16x32xf32 --input=3x1x2500x32xf32 --input=3x1x2500x32xf32 --check --split-programs=64 | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

// bf16 with a float mask of -inf entries and a fully masked row (numpy),
// Tq = 1, bottom-right causal, with the log-sum-exp (the masked row: zeros
// and -inf, checked exactly).
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); m = r.uniform(-2, 2, (2, 1, 4, 1500)).astype(np.float32); m[r.random(m.shape) < 0.3] = -np.inf; m[1, 0, 2, :] = -np.inf; m[0, 0, 1, 700:] = -np.inf; np.save('%t.mask.npy', m)"
// RUN: attn-run %s -e bf16_mask --input=2x2x4x64xbf16 --input=2x2x1500x64xbf16 --input=2x2x1500x64xbf16 --input=@%t.mask.npy --check --split-programs=64 | FileCheck %s --check-prefix=MASK
// MASK: lse=2x2x4xf32
// MASK-NEXT: check: PASS {{.*}} lse_max_err=

// A window and a softcap (f32 tf32, Tq = 8, bottom-right): the window
// leaves most splits of a long cache without keys.
// RUN: attn-run %s -e f32_window_softcap --input=2x4x8x64xf32 --input=2x4x1200x64xf32 --input=2x4x1200x64xf32 --check --split-programs=64 | FileCheck %s --check-prefix=LSE_ANY
// RUN: attn-run %s -e f32_window_softcap --input=1x4x8x64xf32 --input=1x4x100x64xf32 --input=1x4x100x64xf32 --check --split-programs=64 --block-n=8 | FileCheck %s --check-prefix=LSE_ANY
// LSE_ANY: check: PASS {{.*}} lse_max_err=

// A dynamic Tq is never split (one program per query block), and a split
// count of 1 (--split-programs=1: ceil(1 / (B Hq)) = 1) runs one split and
// the combine.
// RUN: attn-run %s -e dynamic_tq --input=2x4x3x64xf16 --input=2x2x700x64xf16 --input=2x2x700x64xf16 --check --split-programs=64 --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x700x64xf16 --input=2x2x700x64xf16 --check --split-programs=1 | FileCheck %s --check-prefix=LSE

// A negative split count other than -1 is refused.
// RUN: not attn-run %s -e f16_gqa --input=2x4x3x64xf16 --input=2x2x700x64xf16 --input=2x2x700x64xf16 --split-programs=-2 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: --split-programs must be >= -1 (-1: the target's default; 0: never split), got -2

func.func @f16_gqa(%q: tensor<?x4x3x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x4x3x64xf16>, tensor<?x4x3xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x4x3x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x3x64xf16>, tensor<?x4x3xf32>
  return %o, %lse : tensor<?x4x3x64xf16>, tensor<?x4x3xf32>
}

func.func @f32_top_left(%q: tensor<?x8x16x32xf32>, %k: tensor<?x1x?x32xf32>, %v: tensor<?x1x?x32xf32>) -> tensor<?x8x16x32xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, precision = #attn.precision<ieee>} : tensor<?x8x16x32xf32>, tensor<?x1x?x32xf32>, tensor<?x1x?x32xf32> -> tensor<?x8x16x32xf32>
  return %o : tensor<?x8x16x32xf32>
}

func.func @bf16_mask(%q: tensor<?x2x4x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %m: tensor<?x1x4x?xf32>) -> (tensor<?x2x4x64xbf16>, tensor<?x2x4xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x2x4x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x1x4x?xf32> -> tensor<?x2x4x64xbf16>, tensor<?x2x4xf32>
  return %o, %lse : tensor<?x2x4x64xbf16>, tensor<?x2x4xf32>
}

func.func @f32_window_softcap(%q: tensor<?x4x8x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> (tensor<?x4x8x64xf32>, tensor<?x4x8xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 40, right = 0>, softcap = 5.0 : f32} : tensor<?x4x8x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x8x64xf32>, tensor<?x4x8xf32>
  return %o, %lse : tensor<?x4x8x64xf32>, tensor<?x4x8xf32>
}

func.func @dynamic_tq(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

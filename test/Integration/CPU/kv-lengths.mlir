// Per-batch key counts (kv_lengths, FlashAttention's cache_seqlens) executed
// on the host: for batch b the keys j >= clamp(l[b], 0, Tk) do not exist and
// that count stands for Tk, in the bottom-right causal and window offsets
// too; --check compares with the float64 reference, which truncates each
// batch's keys. Random lengths (--input=Bxi32) lie in 0..Tk: with B >= 3
// one batch has no key (zero rows, log-sum-exp -inf) and one the whole
// cache; .npy lengths are taken as given (negative and past Tk: clamped).

// Decode (Tq static, 2), GQA 4:2, bottom-right causal, the log-sum-exp;
// with and without split-KV, the cache's tail not a multiple of a block.
// RUN: attn-run %s -e decode --input=4x4x2x64xf16 --input=4x2x700x64xf16 --input=4x2x700x64xf16 --input=4xi32 --check | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s -e decode --input=4x4x2x64xf16 --input=4x2x700x64xf16 --input=4x2x700x64xf16 --input=4xi32 --check --split-programs=64 | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s -e decode --input=5x4x2x64xf16 --input=5x2x2100x64xf16 --input=5x2x2100x64xf16 --input=5xi32 --check --split-programs=64 --block-n=8 --seed=7 | FileCheck %s --check-prefix=DECODE
// DECODE: attn-run: decode on cpu: q={{.*}} kv_lengths={{[0-9]+}}xi32 -> o={{.*}} lse={{.*}}
// DECODE-NEXT: check: PASS {{.*}} lse_max_err=

// The random lengths: one 0 and one Tk among 4 batches, all in 0..Tk.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s -e decode --input=4x4x2x64xf16 --input=4x2x700x64xf16 --input=4x2x700x64xf16 --input=4xi32 --output=@%t/o.npy --output=@%t/lse.npy | FileCheck %s --check-prefix=RAN
// RUN: %python -c "import numpy as np; o = np.load('%t/o.npy'); lse = np.load('%t/lse.npy'); empty = np.isneginf(lse).all(axis=(1, 2)); print('empty_batches', int(empty.sum()), 'zero', bool((o[empty] == 0).all()), 'finite_others', bool(np.isfinite(lse[~empty]).all()))" | FileCheck %s --check-prefix=EMPTY
// RAN: kv_lengths=4xi32
// EMPTY: empty_batches 1 zero True finite_others True

// Lengths from a file: 0, Tk, in between, negative (clamped to 0) and past
// Tk (clamped to Tk).
// RUN: %python -c "import numpy as np; np.save('%t/lens.npy', np.array([0, 700, 333, -5, 9999, 1], dtype=np.int32))"
// RUN: attn-run %s -e decode --input=6x4x2x64xf16 --input=6x2x700x64xf16 --input=6x2x700x64xf16 --input=@%t/lens.npy --check --split-programs=64 | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s -e decode --input=6x4x2x64xf16 --input=6x2x700x64xf16 --input=6x2x700x64xf16 --input=@%t/lens.npy --check | FileCheck %s --check-prefix=DECODE

// Prefill (Tq dynamic, > Tk for some batches' lengths: rows without keys
// under bottom-right), f32 IEEE, a window, without the log-sum-exp.
// RUN: attn-run %s -e prefill_window --input=3x2x100x32xf32 --input=3x2x150x32xf32 --input=3x2x150x32xf32 --input=3xi32 --check | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e prefill_window --input=3x2x129x32xf32 --input=3x2x65x32xf32 --input=3x2x65x32xf32 --input=3xi32 --check --seed=2 --block-m=16 --block-n=8 --num-stages=3 | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

// A mask tensor (bf16 prefill, top-left causal, MQA, the log-sum-exp): the
// mask is Tk wide, the lengths cut it per batch.
// RUN: %python -c "import numpy as np; r = np.random.default_rng(3); m = r.uniform(-2, 2, (40, 90)).astype(np.float32); m[r.random(m.shape) < 0.25] = -np.inf; m[5, :] = -np.inf; np.save('%t/mask.npy', m)"
// RUN: attn-run %s -e prefill_mask --input=3x4x40x64xbf16 --input=3x1x90x64xbf16 --input=3x1x90x64xbf16 --input=@%t/mask.npy --input=3xi32 --check | FileCheck %s --check-prefix=LSE
// LSE: check: PASS {{.*}} lse_max_err=

// Decode, static Tq = 1, a mask, a window and split-KV together, f32 tf32.
// RUN: %python -c "import numpy as np; r = np.random.default_rng(4); m = (r.random((4, 1, 1, 900)) < 0.8); m[2, 0, 0, :] = False; np.save('%t/bmask.npy', m)"
// RUN: attn-run %s -e decode_mask_window --input=4x8x1x64xf32 --input=4x8x900x64xf32 --input=4x8x900x64xf32 --input=@%t/bmask.npy --input=4xi32 --check --split-programs=64 | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e decode_mask_window --input=4x8x1x64xf32 --input=4x8x900x64xf32 --input=4x8x900x64xf32 --input=@%t/bmask.npy --input=4xi32 --check --seed=11 | FileCheck %s --check-prefix=LSE

// Bad lengths: the wrong element type or count.
// RUN: not attn-run %s -e decode --input=4x4x2x64xf16 --input=4x2x700x64xf16 --input=4x2x700x64xf16 --input=3xi32 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not attn-run %s -e decode --input=4x4x2x64xf16 --input=4x2x700x64xf16 --input=4x2x700x64xf16 --input=4xi64 2>&1 | FileCheck %s --check-prefix=TYPE
// COUNT: attn-run: error: the inputs do not fit attn.attention: kv_lengths has shape 3xi32, expected 4xi32 (one length per batch of the query 4x4x2x64xf16)
// TYPE: attn-run: error: input #3 (kv_lengths): got 4xi64, but the function takes tensor<?xi32> (element type i64, expected i32)

func.func @decode(%q: tensor<?x4x2x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>, %l: tensor<?xi32>) -> (tensor<?x4x2x64xf16>, tensor<?x4x2xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x4x2x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x2x64xf16>, tensor<?x4x2xf32>
  return %o, %lse : tensor<?x4x2x64xf16>, tensor<?x4x2xf32>
}

func.func @prefill_window(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>, %l: tensor<?xi32>) -> tensor<?x2x?x32xf32> {
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 20, right = 0>, precision = #attn.precision<ieee>} : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x2x?x32xf32>
  return %o : tensor<?x2x?x32xf32>
}

func.func @prefill_mask(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x64xbf16>, %m: tensor<?x?xf32>, %l: tensor<?xi32>) -> (tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x?xf32> -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
}

func.func @decode_mask_window(%q: tensor<?x8x1x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>, %m: tensor<?x1x1x?xi1>, %l: tensor<?xi32>) -> (tensor<?x8x1x64xf32>, tensor<?x8x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 300, right = -1>} : tensor<?x8x1x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x1x1x?xi1> -> tensor<?x8x1x64xf32>, tensor<?x8x1xf32>
  return %o, %lse : tensor<?x8x1x64xf32>, tensor<?x8x1xf32>
}

// A paged KV cache (block_table, vLLM's PagedAttention and FlashAttention's
// block_table) executed on the host: K and V are pools of NP pages of
// `page` keys, and logical key j of batch b is row j % page of page
// block_table[b, j / page]. --check compares with the float64 reference,
// which reads the keys through the table. A random table (--input=BxPxi32)
// holds distinct pages of the pool in random order, so that a program
// reading a wrong page fails the check; random kv_lengths lie in 0..P*page.

// GQA decode with query-head packing (Hq 4, Hkv 2, Tq 1: each program
// holds the 2 query heads of a KV head), pages of 16, bottom-right causal,
// kv_lengths and the log-sum-exp; with and without split-KV; 7 pages per
// sequence (an odd count) in a pool of 40.
// RUN: attn-run %s -e gqa_decode --input=5x4x1x64xf16 --input=40x2x16x64xf16 --input=40x2x16x64xf16 --input=5xi32 --input=5x7xi32 --check | FileCheck %s --check-prefix=DECODE
// RUN: attn-run %s -e gqa_decode --input=5x4x1x64xf16 --input=40x2x16x64xf16 --input=40x2x16x64xf16 --input=5xi32 --input=5x7xi32 --check --split-programs=64 --seed=3 | FileCheck %s --check-prefix=DECODE
// DECODE: attn-run: gqa_decode on cpu: q={{.*}} kv_lengths={{[0-9]+}}xi32 block_table={{[0-9]+x[0-9]+}}xi32 -> o={{.*}} lse={{.*}}
// DECODE-NEXT: check: PASS {{.*}} lse_max_err=

// Pages of 64, bf16 D 128, 3 pages per sequence, split-KV over logical
// keys (block_n 32 divides the page), without kv_lengths.
// RUN: attn-run %s -e decode64 --input=3x8x1x128xbf16 --input=11x8x64x128xbf16 --input=11x8x64x128xbf16 --input=3x3xi32 --check --split-programs=64 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e decode64 --input=3x8x1x128xbf16 --input=11x8x64x128xbf16 --input=11x8x64x128xbf16 --input=3x3xi32 --check --seed=5 | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

// Prefill (Tq dynamic) over a paged cache, f32 IEEE, bottom-right causal,
// a window, kv_lengths, the log-sum-exp; a block_n override larger than
// the page (the key blocks become pages).
// RUN: attn-run %s -e prefill_window --input=3x2x37x32xf32 --input=20x2x16x32xf32 --input=20x2x16x32xf32 --input=3xi32 --input=3x5xi32 --check | FileCheck %s --check-prefix=LSE
// RUN: attn-run %s -e prefill_window --input=3x2x37x32xf32 --input=20x2x16x32xf32 --input=20x2x16x32xf32 --input=3xi32 --input=3x5xi32 --check --block-n=64 --seed=9 | FileCheck %s --check-prefix=LSE
// LSE: check: PASS {{.*}} lse_max_err=

// A page of 24 keys (any static page on the host: block_n = gcd(32, 24)),
// top-left causal, no kv_lengths.
// RUN: attn-run %s -e odd_page --input=2x2x50x32xf16 --input=9x2x24x32xf16 --input=9x2x24x32xf16 --input=2x3xi32 --check | FileCheck %s --check-prefix=PASS

// A mask is addressed in logical keys (Tq x P * page) and combines with
// the table and kv_lengths.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(3); m = r.uniform(-2, 2, (20, 64)).astype(np.float32); m[r.random(m.shape) < 0.25] = -np.inf; np.save('%t/mask.npy', m)"
// RUN: attn-run %s -e prefill_mask --input=3x4x20x64xbf16 --input=12x1x16x64xbf16 --input=12x1x16x64xbf16 --input=@%t/mask.npy --input=3xi32 --input=3x4xi32 --check | FileCheck %s --check-prefix=LSE

// Tables from a file: two sequences sharing a page (prefix caching), and
// an entry past the batch's length that is never read (out of the pool).
// RUN: %python -c "import numpy as np; np.save('%t/bt.npy', np.array([[3, 0, 5], [3, 1, 77]], dtype=np.int32)); np.save('%t/lens.npy', np.array([40, 30], dtype=np.int32))"
// RUN: attn-run %s -e gqa_decode --input=2x4x1x64xf16 --input=6x2x16x64xf16 --input=6x2x16x64xf16 --input=@%t/lens.npy --input=@%t/bt.npy --check | FileCheck %s --check-prefix=DECODE

// A used entry outside the pool is refused before the run.
// RUN: %python -c "import numpy as np; np.save('%t/bad.npy', np.array([[3, 0, 5], [3, 77, 1]], dtype=np.int32))"
// RUN: not attn-run %s -e gqa_decode --input=2x4x1x64xf16 --input=6x2x16x64xf16 --input=6x2x16x64xf16 --input=@%t/lens.npy --input=@%t/bad.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-run: error: the inputs do not fit attn.attention: block_table[1, 1] = 77 is not a page of the pool (0..5, key 6x2x16x64xf16)

func.func @gqa_decode(%q: tensor<?x4x1x64xf16>, %k: tensor<?x2x16x64xf16>, %v: tensor<?x2x16x64xf16>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> (tensor<?x4x1x64xf16>, tensor<?x4x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>} : tensor<?x4x1x64xf16>, tensor<?x2x16x64xf16>, tensor<?x2x16x64xf16> -> tensor<?x4x1x64xf16>, tensor<?x4x1xf32>
  return %o, %lse : tensor<?x4x1x64xf16>, tensor<?x4x1xf32>
}

func.func @decode64(%q: tensor<?x8x1x128xbf16>, %k: tensor<?x8x64x128xbf16>, %v: tensor<?x8x64x128xbf16>, %bt: tensor<?x?xi32>) -> (tensor<?x8x1x128xbf16>, tensor<?x8x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) : tensor<?x8x1x128xbf16>, tensor<?x8x64x128xbf16>, tensor<?x8x64x128xbf16> -> tensor<?x8x1x128xbf16>, tensor<?x8x1xf32>
  return %o, %lse : tensor<?x8x1x128xbf16>, tensor<?x8x1xf32>
}

func.func @prefill_window(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x16x32xf32>, %v: tensor<?x2x16x32xf32>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> (tensor<?x2x?x32xf32>, tensor<?x2x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 20, right = 0>, precision = #attn.precision<ieee>} : tensor<?x2x?x32xf32>, tensor<?x2x16x32xf32>, tensor<?x2x16x32xf32> -> tensor<?x2x?x32xf32>, tensor<?x2x?xf32>
  return %o, %lse : tensor<?x2x?x32xf32>, tensor<?x2x?xf32>
}

func.func @odd_page(%q: tensor<?x2x?x32xf16>, %k: tensor<?x2x24x32xf16>, %v: tensor<?x2x24x32xf16>, %bt: tensor<?x?xi32>) -> tensor<?x2x?x32xf16> {
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) {causal = #attn.causal<top_left>} : tensor<?x2x?x32xf16>, tensor<?x2x24x32xf16>, tensor<?x2x24x32xf16> -> tensor<?x2x?x32xf16>
  return %o : tensor<?x2x?x32xf16>
}

func.func @prefill_mask(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x1x16x64xbf16>, %v: tensor<?x1x16x64xbf16>, %m: tensor<?x?xf32>, %l: tensor<?xi32>, %bt: tensor<?x?xi32>) -> (tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) block_table(%bt : tensor<?x?xi32>) kv_lengths(%l : tensor<?xi32>) {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x1x16x64xbf16>, tensor<?x1x16x64xbf16>, tensor<?x?xf32> -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
}

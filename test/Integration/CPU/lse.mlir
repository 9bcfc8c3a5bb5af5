// The log-sum-exp result of SPEC.md section 1.2 executed on the host: each
// function returns the op's two results, and --check compares both with the
// float64 reference (the LSE within tol * (1 + |lse|), -inf rows exactly).

// f32 (IEEE), GQA 4:2, causal top-left, Tq != Tk, odd sizes and the tails
// of two block sizes; pipelined loops.
// RUN: attn-run %s -e gqa_causal --input=2x4x37x24xf32 --input=2x2x53x24xf32 --input=2x2x53x40xf32 --check | FileCheck %s --check-prefix=GQA
// RUN: attn-run %s -e gqa_causal --input=1x4x129x24xf32 --input=1x2x65x24xf32 --input=1x2x65x40xf32 --check --block-m=16 --block-n=8 --num-stages=3 | FileCheck %s --check-prefix=PASS
// GQA: attn-run: gqa_causal on cpu: q=2x4x37x24xf32 k=2x2x53x24xf32 v=2x2x53x40xf32 -> o=2x4x37x40xf32 lse=2x4x37xf32
// GQA-NEXT: check: PASS rel_l2={{[0-9.e+-]+}} max_abs={{[0-9.e+-]+}} lse_max_abs={{[0-9.e+-]+}} lse_max_err={{[0-9.e+-]+}}{{$}}
// PASS: check: PASS {{.*}} lse_max_err=

// f32 (tf32), bottom-right causal with Tq > Tk: the first Tq - Tk rows of
// every head see no key (-inf, checked exactly), plus a float mask.
// RUN: attn-run %s -e bottom_right_mask --input=2x2x50x32xf32 --input=2x2x20x32xf32 --input=2x2x20x32xf32 --input=50x20xf32 --check | FileCheck %s --check-prefix=PASS

// f16 and an i1 mask of rank 4 (random keys masked out) broadcast over the
// heads.
// RUN: attn-run %s -e f16_bool_mask --input=2x3x65x64xf16 --input=2x3x127x64xf16 --input=2x3x127x64xf16 --input=2x1x65x127xi1 --check | FileCheck %s --check-prefix=PASS

// bf16 with a sliding window, a softcap and an ALiBi score_mod (its slopes
// an argument), MQA; sampled rows of a larger problem.
// RUN: attn-run %s -e bf16_variants --input=2x8x200x64xbf16 --input=2x1x233x64xbf16 --input=2x1x233x64xbf16 --input=8xf32 --check | FileCheck %s --check-prefix=VARIANTS
// RUN: attn-run %s -e bf16_variants --input=1x8x1000x64xbf16 --input=1x1x1000x64xbf16 --input=1x1x1000x64xbf16 --input=8xf32 --check --seed=3 | FileCheck %s --check-prefix=SAMPLED
// VARIANTS: -> o=2x8x200x64xbf16 lse=2x8x200xf32
// VARIANTS-NEXT: check: PASS
// SAMPLED: check: sampled 1000 of 8000 rows
// SAMPLED-NEXT: check: PASS {{.*}} lse_max_err=

// A score_mod that sends rows i % 5 == 2 to -inf and a mask_mod that keeps
// one key in three: rows without keys among kept ones; a NaN query row
// (from numpy) gives a NaN LSE in that row only, which the check matches.
// RUN: attn-run %s -e empty_rows --input=1x2x40x16xf32 --input=1x2x40x16xf32 --input=1x2x40x16xf32 --check | FileCheck %s --check-prefix=PASS
// RUN: %python -c "import numpy as np; q = np.random.default_rng(0).uniform(-1, 1, (1, 2, 40, 16)).astype(np.float32); q[0, 1, 7, 3] = np.nan; np.save('%t.q.npy', q)"
// RUN: attn-run %s -e empty_rows --input=@%t.q.npy --input=1x2x40x16xf32 --input=1x2x40x16xf32 --check | FileCheck %s --check-prefix=PASS

// Static shapes, D = 256, Tq = Tk = 1.
// RUN: attn-run %s -e static_one --input=random --input=random --input=random --check | FileCheck %s --check-prefix=PASS

func.func @gqa_causal(%q: tensor<?x4x?x24xf32>, %k: tensor<?x2x?x24xf32>, %v: tensor<?x2x?x40xf32>) -> (tensor<?x4x?x40xf32>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, precision = #attn.precision<ieee>} : tensor<?x4x?x24xf32>, tensor<?x2x?x24xf32>, tensor<?x2x?x40xf32> -> tensor<?x4x?x40xf32>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x40xf32>, tensor<?x4x?xf32>
}

func.func @bottom_right_mask(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>, %m: tensor<?x?xf32>) -> (tensor<?x2x?x32xf32>, tensor<?x2x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x?xf32> -> tensor<?x2x?x32xf32>, tensor<?x2x?xf32>
  return %o, %lse : tensor<?x2x?x32xf32>, tensor<?x2x?xf32>
}

func.func @f16_bool_mask(%q: tensor<?x3x?x64xf16>, %k: tensor<?x3x?x64xf16>, %v: tensor<?x3x?x64xf16>, %m: tensor<?x1x?x?xi1>) -> (tensor<?x3x?x64xf16>, tensor<?x3x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) : tensor<?x3x?x64xf16>, tensor<?x3x?x64xf16>, tensor<?x3x?x64xf16>, tensor<?x1x?x?xi1> -> tensor<?x3x?x64xf16>, tensor<?x3x?xf32>
  return %o, %lse : tensor<?x3x?x64xf16>, tensor<?x3x?xf32>
}

func.func @bf16_variants(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x64xbf16>, %slopes: tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 100, right = 0>, softcap = 2.0 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%h] : tensor<8xf32>
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %t = arith.addf %s, %bias : f32
      attn.yield %t : f32
    }
    : tensor<?x8x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}

func.func @empty_rows(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> (tensor<?x2x?x16xf32>, tensor<?x2x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %c2 = arith.constant 2 : index
      %c5 = arith.constant 5 : index
      %r = arith.remui %i, %c5 : index
      %drop = arith.cmpi eq, %r, %c2 : index
      %ninf = arith.constant 0xFF800000 : f32
      %t = arith.select %drop, %ninf, %s : f32
      attn.yield %t : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c3 = arith.constant 3 : index
      %c0 = arith.constant 0 : index
      %r = arith.remui %j, %c3 : index
      %keep = arith.cmpi eq, %r, %c0 : index
      attn.yield %keep : i1
    }
    : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>, tensor<?x2x?xf32>
  return %o, %lse : tensor<?x2x?x16xf32>, tensor<?x2x?xf32>
}

func.func @static_one(%q: tensor<1x2x1x256xf16>, %k: tensor<1x2x1x256xf16>, %v: tensor<1x2x1x16xf16>) -> (tensor<1x2x1x16xf16>, tensor<1x2x1xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<1x2x1x256xf16>, tensor<1x2x1x256xf16>, tensor<1x2x1x16xf16> -> tensor<1x2x1x16xf16>, tensor<1x2x1xf32>
  return %o, %lse : tensor<1x2x1x16xf16>, tensor<1x2x1xf32>
}

// Packed variable-length sequences (cu_seqlens, FlashAttention's varlen)
// executed on the host: sequence s is the attention of query rows
// cu_q[s] .. cu_q[s+1]-1 over keys cu_k[s] .. cu_k[s+1]-1; --check compares
// with the float64 reference, which computes each sequence alone. Random
// offsets (--input=Nxi32) are random lengths summing to Tq (Tk), one
// sequence empty from three on; .npy offsets are taken as given, once
// attn-run has checked that they rise within 0..Tq (0..Tk).

// Prefill, GQA 4:2, top-left causal per sequence, the log-sum-exp; block
// sizes with query and key tails in every sequence.
// RUN: attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=6xi32 --input=6xi32 --check | FileCheck %s --check-prefix=PREFILL
// RUN: attn-run %s -e prefill --input=1x4x517x64xf16 --input=1x2x333x64xf16 --input=1x2x333x64xf16 --input=9xi32 --input=9xi32 --check --block-m=16 --block-n=8 --num-stages=3 --seed=5 | FileCheck %s --check-prefix=PREFILL
// PREFILL: attn-run: prefill on cpu: q=1x4x{{[0-9]+}}x64xf16 k={{.*}} v={{.*}} cu_seqlens_q={{[0-9]+}}xi32 cu_seqlens_k={{[0-9]+}}xi32 -> o={{.*}} lse={{.*}}
// PREFILL-NEXT: check: PASS {{.*}} lse_max_err=

// Offsets from files: rows before the first and after the last sequence
// (zeros, lse -inf), an empty sequence, a sequence with queries and no
// keys, one sequence; bottom-right causal with Tq_s > Tk_s (rows without
// keys) and a window, bf16.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/cq.npy', np.array([3, 50, 50, 181, 290], np.int32)); np.save('%t/ck.npy', np.array([0, 70, 75, 75, 420], np.int32))"
// RUN: attn-run %s -e window --input=1x4x300x32xbf16 --input=1x2x420x32xbf16 --input=1x2x420x32xbf16 --input=@%t/cq.npy --input=@%t/ck.npy --check --output=@%t/o.npy --output=@%t/lse.npy | FileCheck %s --check-prefix=LSE
// RUN: %python -c "import numpy as np; o = np.load('%t/o.npy'); lse = np.load('%t/lse.npy'); out = np.r_[0:3, 290:300]; z = (o.view('<u2') & 0x7fff) == 0; print('outside', bool(z[0][:, out].all()), bool(np.isneginf(lse[0][:, out]).all()), 'no_keys', bool(np.isneginf(lse[0][:, 50:181]).all() and z[0][:, 50:181].all()), 'inside', bool(np.isfinite(lse[0][:, 181:290]).all()))" | FileCheck %s --check-prefix=ROWS
// ROWS: outside True True no_keys True inside True
// LSE: check: PASS {{.*}} lse_max_err=
// RUN: %python -c "import numpy as np; np.save('%t/one.npy', np.array([0, 300], np.int32))"
// RUN: attn-run %s -e window --input=1x4x300x32xbf16 --input=1x2x300x32xbf16 --input=1x2x300x32xbf16 --input=@%t/one.npy --input=@%t/one.npy --check | FileCheck %s --check-prefix=LSE

// Regions see b = the sequence and positions within it: a score_mod
// adding b to every score and a mask_mod keeping j <= i + b.
// RUN: attn-run %s -e regions --input=1x2x200x16xf16 --input=1x2x260x16xf16 --input=1x2x260x16xf16 --input=5xi32 --input=5xi32 --check | FileCheck %s --check-prefix=PASS
// PASS: check: PASS

// Offsets that do not rise within the operands, of the wrong count or
// type, and a batch other than 1: refused before anything runs.
// RUN: %python -c "import numpy as np; np.save('%t/down.npy', np.array([0, 50, 40, 300], np.int32)); np.save('%t/past.npy', np.array([0, 50, 400], np.int32)); np.save('%t/neg.npy', np.array([-1, 50, 300], np.int32)); np.save('%t/three.npy', np.array([0, 50, 300], np.int32))"
// RUN: not attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=@%t/down.npy --input=4xi32 2>&1 | FileCheck %s --check-prefix=DOWN
// RUN: not attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=3xi32 --input=@%t/past.npy 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: not attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=@%t/neg.npy --input=3xi32 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=@%t/three.npy --input=5xi32 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not attn-run %s -e prefill --input=1x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=1xi32 --input=1xi32 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not attn-run %s -e prefill --input=2x4x300x64xf16 --input=1x2x300x64xf16 --input=1x2x300x64xf16 --input=3xi32 --input=3xi32 2>&1 | FileCheck %s --check-prefix=BATCH
// DOWN: attn-run: error: the inputs do not fit attn.attention: cu_seqlens_q[2] = 40 is below 50 (cu_seqlens_q[1]): the offsets must not decrease
// PAST: attn-run: error: the inputs do not fit attn.attention: cu_seqlens_k[2] = 400 is past the packed length 300
// NEG: attn-run: error: the inputs do not fit attn.attention: cu_seqlens_q[0] = -1 is below 0
// COUNT: attn-run: error: the inputs do not fit attn.attention: cu_seqlens_q has shape 3xi32 and cu_seqlens_k 5xi32, expected one length (N + 1)
// ONE: attn-run: error: the inputs do not fit attn.attention: cu_seqlens_q has shape 1xi32, expected N + 1 >= 2 offsets (N >= 1 sequences)
// BATCH: attn-run: error: input #0 (q): got 2x4x300x64xf16, but the function takes tensor<1x4x?x64xf16> (dimension 0 is 2, expected 1)

func.func @prefill(%q: tensor<1x4x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x64xf16>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<top_left>}
     : tensor<1x4x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
  return %o, %lse : tensor<1x4x?x64xf16>, tensor<1x4x?xf32>
}

func.func @window(%q: tensor<1x4x?x32xbf16>, %k: tensor<1x2x?x32xbf16>, %v: tensor<1x2x?x32xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x4x?x32xbf16>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) {causal = #attn.causal<bottom_right>, window = #attn.window<left = 40, right = -1>}
     : tensor<1x4x?x32xbf16>, tensor<1x2x?x32xbf16>, tensor<1x2x?x32xbf16> -> tensor<1x4x?x32xbf16>, tensor<1x4x?xf32>
  return %o, %lse : tensor<1x4x?x32xbf16>, tensor<1x4x?xf32>
}

func.func @regions(%q: tensor<1x2x?x16xf16>, %k: tensor<1x2x?x16xf16>, %v: tensor<1x2x?x16xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x2x?x16xf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
     score_mod {
     ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
       %bi = arith.index_cast %b : index to i64
       %bf = arith.sitofp %bi : i64 to f32
       %t = arith.addf %s, %bf : f32
       attn.yield %t : f32
     }
     mask_mod {
     ^bb0(%b: index, %h: index, %i: index, %j: index):
       %last = arith.addi %i, %b : index
       %keep = arith.cmpi sle, %j, %last : index
       attn.yield %keep : i1
     }
     : tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16> -> tensor<1x2x?x16xf16>
  return %o : tensor<1x2x?x16xf16>
}

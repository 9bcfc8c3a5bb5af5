// The variants of SPEC.md section 1.1 executed on the host and checked
// against the float64 reference, which evaluates the regions as written
// (an interpreter over their ops, independent of the kernel path).

// A causal sliding window of 40 keys with a softcap, GQA, Tq != Tk, and the
// tails of two block sizes.
// RUN: attn-run %s -e sliding --input=2x4x129x64xbf16 --input=2x2x200x64xbf16 --input=2x2x200x64xbf16 --check | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e sliding --input=1x4x77x64xbf16 --input=1x2x77x64xbf16 --input=1x2x77x64xbf16 --check --block-m=16 --block-n=8 --num-stages=3 | FileCheck %s --check-prefix=PASS
// Two stages, where the left edge's and the unmasked loops are empty and
// the last loop holds every block: the chain of pipelined loops is the last
// two (the left edge's loop does not load the others' first blocks).
// RUN: attn-run %s -e wide_window --input=2x4x64x64xf32 --input=2x2x64x64xf32 --input=2x2x64x16xf32 --check --block-m=64 --block-n=32 --num-stages=2 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e wide_window --input=1x4x100x64xf32 --input=1x2x300x64xf32 --input=1x2x300x16xf32 --check --block-m=16 --block-n=16 --num-stages=2 | FileCheck %s --check-prefix=PASS

// ALiBi (slopes[h]) and a document mask (doc[b, i] == doc[b, j]): the
// function's extra arguments, i32 ids random in [0, 4) or from a .npy file.
// RUN: attn-run %s -e alibi_document --input=2x4x90x32xf16 --input=2x2x90x32xf16 --input=2x2x90x32xf16 --input=4xf32 --input=2x90xi32 --check | FileCheck %s --check-prefix=DOC
// RUN: %python -c "import numpy as np; np.save('%t.doc.npy', np.repeat(np.arange(3, dtype=np.int64), 30).reshape(1, 90).repeat(2, 0))"
// RUN: %python -c "import numpy as np; np.save('%t.slopes.npy', (2.0 ** -np.arange(1, 5)).astype(np.float32))"
// RUN: attn-run %s -e alibi_document_i64 --input=2x4x90x32xf32 --input=2x2x90x32xf32 --input=2x2x90x32xf32 --input=@%t.slopes.npy --input=@%t.doc.npy --check | FileCheck %s --check-prefix=PASS

// DOC: attn-run: alibi_document on cpu: q=2x4x90x32xf16 k=2x2x90x32xf16 v=2x2x90x32xf16 score_mod=4xf32 mask_mod=2x90xi32 -> o=2x4x90x32xf16
// DOC-NEXT: check: PASS
// PASS: check: PASS

// A mask_mod that leaves row 3 without a key, and a score_mod that sends
// row 5 to -inf: both rows are 0 (written to a file and read back).
// RUN: attn-run %s -e empty_rows --input=1x1x8x16xf32 --input=1x1x8x16xf32 --input=1x1x8x16xf32 --check --output=@%t.o.npy | FileCheck %s --check-prefix=PASS
// RUN: %python -c "import numpy as np; o = np.load('%t.o.npy'); print('rows', (o[0, 0, 3] == 0).all(), (o[0, 0, 5] == 0).all(), (o[0, 0, 4] != 0).any())" | FileCheck %s --check-prefix=ROWS
// ROWS: rows True True True

// Prefix-LM with a scalar from above the op, and math ops that LLVM has no
// intrinsic for (libm on the host, std:: in the reference).
// RUN: attn-run %s -e prefix_erf --input=1x2x50x16xf32 --input=1x2x60x16xf32 --input=1x2x60x16xf32 --check | FileCheck %s --check-prefix=PASS

// mask_mods of index arithmetic are classified per block on intervals:
// blocks they remove are skipped, whole blocks they keep run unmasked
// (prefix-LM without causal, chunks of 24 keys, block sizes that cut
// across both).
// RUN: attn-run %s -e prefix_chunked --input=1x2x200x16xf32 --input=1x2x200x16xf32 --input=1x2x200x16xf32 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e prefix_chunked --input=2x2x77x16xf32 --input=2x2x150x16xf32 --input=2x2x150x16xf32 --check --block-m=32 --block-n=16 --num-stages=2 | FileCheck %s --check-prefix=PASS
// Unsigned compares are classified where both sides are non-negative
// (prefix-LM written with ule/ult); i - j < 16 unsigned wraps for j > i and
// keeps a band of 16 keys.
// RUN: attn-run %s -e unsigned_mods --input=1x2x200x16xf32 --input=1x2x200x16xf32 --input=1x2x200x16xf32 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e unsigned_mods --input=2x2x77x16xf32 --input=2x2x150x16xf32 --input=2x2x150x16xf32 --check --block-m=32 --block-n=16 --num-stages=2 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e chunked --input=1x2x200x16xf16 --input=1x2x200x16xf16 --input=1x2x200x16xf16 --check --block-m=16 --block-n=8 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s -e chunked --input=1x2x100x16xf16 --input=1x2x130x16xf16 --input=1x2x130x16xf16 --check --block-m=8 --block-n=16 | FileCheck %s --check-prefix=PASS

// A constant tensor from above the op (per-head biases), read with an index
// computed in the region.
// RUN: attn-run %s -e constant_table --input=1x4x33x16xf16 --input=1x4x33x16xf16 --input=1x4x33x16xf16 --check | FileCheck %s --check-prefix=PASS

func.func @sliding(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 40, right = 0>, softcap = 0.5 : f32} : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

func.func @alibi_document(%q: tensor<2x4x90x32xf16>, %k: tensor<2x2x90x32xf16>, %v: tensor<2x2x90x32xf16>, %slopes: tensor<4xf32>, %doc: tensor<2x90xi32>) -> tensor<2x4x90x32xf16> {
  %o = attn.attention %q, %k, %v {window = #attn.window<left = 30, right = 5>}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %slope = tensor.extract %slopes[%h] : tensor<4xf32>
           %d = arith.subi %j, %i : index
           %di = arith.index_cast %d : index to i64
           %df = arith.sitofp %di : i64 to f32
           %bias = arith.mulf %slope, %df : f32
           %t = arith.addf %s, %bias : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %di = tensor.extract %doc[%b, %i] : tensor<2x90xi32>
           %dj = tensor.extract %doc[%b, %j] : tensor<2x90xi32>
           %same = arith.cmpi eq, %di, %dj : i32
           attn.yield %same : i1
         }
         : tensor<2x4x90x32xf16>, tensor<2x2x90x32xf16>, tensor<2x2x90x32xf16> -> tensor<2x4x90x32xf16>
  return %o : tensor<2x4x90x32xf16>
}

func.func @alibi_document_i64(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>, %slopes: tensor<?xf32>, %doc: tensor<?x?xi64>) -> tensor<?x4x?x32xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, precision = #attn.precision<ieee>}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %slope = tensor.extract %slopes[%h] : tensor<?xf32>
           %d = arith.subi %j, %i : index
           %di = arith.index_cast %d : index to i64
           %df = arith.sitofp %di : i64 to f32
           %bias = arith.mulf %slope, %df : f32
           %t = arith.addf %s, %bias : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %di = tensor.extract %doc[%b, %i] : tensor<?x?xi64>
           %dj = tensor.extract %doc[%b, %j] : tensor<?x?xi64>
           %same = arith.cmpi eq, %di, %dj : i64
           attn.yield %same : i1
         }
         : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}

func.func @empty_rows(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %row = arith.cmpi eq, %i, %c5 : index
           %ninf = arith.constant 0xFF800000 : f32
           %t = arith.select %row, %ninf, %s : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %keep = arith.cmpi ne, %i, %c3 : index
           attn.yield %keep : i1
         }
         : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

func.func @prefix_erf(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %prefix = arith.constant 7 : index
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>}
         score_mod {
         ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
           %e = math.erf %s : f32
           %a = math.atan2 %s, %e : f32
           %t = arith.addf %e, %a : f32
           attn.yield %t : f32
         }
         mask_mod {
         ^bb0(%b: index, %h: index, %i: index, %j: index):
           %in = arith.cmpi slt, %j, %prefix : index
           %seen = arith.cmpi sle, %j, %i : index
           %keep = arith.ori %in, %seen : i1
           attn.yield %keep : i1
         }
         : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @constant_table(%q: tensor<1x4x33x16xf16>, %k: tensor<1x4x33x16xf16>, %v: tensor<1x4x33x16xf16>) -> tensor<1x4x33x16xf16> {
  %table = arith.constant dense<[[0.0, -1.0, 2.0, 0.5], [1.0, 1.0, -3.0, 0.0]]> : tensor<2x4xf32>
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %parity = arith.remui %j, %c2 : index
    %bias = tensor.extract %table[%parity, %h] : tensor<2x4xf32>
    %t = arith.addf %s, %bias : f32
    attn.yield %t : f32
  } : tensor<1x4x33x16xf16>, tensor<1x4x33x16xf16>, tensor<1x4x33x16xf16> -> tensor<1x4x33x16xf16>
  return %o : tensor<1x4x33x16xf16>
}

func.func @prefix_chunked(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %prefix = arith.constant 20 : index
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %in = arith.cmpi slt, %j, %prefix : index
    %seen = arith.cmpi sle, %j, %i : index
    %c50 = arith.constant 50 : index
    %i50 = arith.floordivsi %i, %c50 : index
    %j50 = arith.floordivsi %j, %c50 : index
    %same = arith.cmpi eq, %i50, %j50 : index
    %near = arith.andi %seen, %same : i1
    %keep = arith.ori %in, %near : i1
    attn.yield %keep : i1
  } : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @unsigned_mods(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>} mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 40 : index
    %seen = arith.cmpi ule, %j, %i : index
    %in = arith.cmpi ult, %j, %p : index
    %prefix = arith.ori %seen, %in : i1
    %d = arith.subi %i, %j : index
    %c16 = arith.constant 16 : index
    %band = arith.cmpi ult, %d, %c16 : index
    %c100 = arith.constant 100 : index
    %late = arith.cmpi uge, %i, %c100 : index
    %keep = arith.select %late, %band, %prefix : i1
    attn.yield %keep : i1
  } : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @chunked(%q: tensor<?x2x?x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x16xf16>) -> tensor<?x2x?x16xf16> {
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c24 = arith.constant 24 : index
    %ci = arith.floordivsi %i, %c24 : index
    %cj = arith.floordivsi %j, %c24 : index
    %keep = arith.cmpi eq, %ci, %cj : index
    attn.yield %keep : i1
  } : tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x2x?x16xf16>
  return %o : tensor<?x2x?x16xf16>
}

func.func @wide_window(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>, window = #attn.window<left = 500, right = 2>} : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

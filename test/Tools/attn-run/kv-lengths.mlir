// attn-run with the per-batch key counts of attn.attention (kv_lengths): the
// argument is labelled kv_lengths, random ones are lengths in 0..Tk, and a
// kernel's manifest (--emit-kernel) carries the operand, whose inputs the
// manifest run checks before it opens a device.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s -e f --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 --input=3xi32 --check | FileCheck %s --check-prefix=RUN1
// RUN1: attn-run: f on cpu: q=3x2x3x16xf32 k=3x2x5x16xf32 v=3x2x5x16xf32 kv_lengths=3xi32 -> o=3x2x3x16xf32
// RUN1-NEXT: check: PASS
// RUN: attn-run %s -e f --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 --input=3xi32 --json | FileCheck %s --check-prefix=JSON
// JSON: {"dtype":"i32","name":"kv_lengths","shape":[3],"source":"random"}

// Random lengths (any seed) lie in 0..Tk, one of three batches 0 (its rows
// zero), one Tk.
// RUN: attn-run %s -e f --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 --input=3xi32 --seed=5 --output=@%t/o.npy
// RUN: %python -c "import numpy as np; o = np.load('%t/o.npy'); print('batches without keys', int((o == 0).all(axis=(1, 2, 3)).sum()))" | FileCheck %s --check-prefix=EMPTY
// EMPTY: batches without keys 1

// The kernel of such a function: the manifest's kv_lengths (version 5).
// RUN: attn-run %s -e f --target=cuda --emit-kernel=%t/k | FileCheck %s --check-prefix=EMIT
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/k/f.json
// EMIT: attn-run: wrote {{.*}}f.ptx and {{.*}}f.json for sm_90a
// MANIFEST: "version": 5,
// MANIFEST: "kv_lengths": {"element_type": "i32", "shape": [-1]},
// MANIFEST: {"kind": "memref", "operand": "kv_lengths", "rank": 1},

// The manifest run takes the lengths after the value (and a mask); its
// input checks come before the device.
// RUN: not attn-run %t/k/f.json --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not attn-run %t/k/f.json --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 --input=3xi64 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not attn-run %t/k/f.json --input=3x2x3x16xf32 --input=3x2x5x16xf32 --input=3x2x5x16xf32 --input=4xi32 2>&1 | FileCheck %s --check-prefix=SHAPE
// COUNT: attn-run: error: kernel 'f' takes 4 inputs (q: ?x2x?x16xf32, k: ?x2x?x16xf32, v: ?x2x?x16xf32, kv_lengths: ?xi32), got 3 --input values
// TYPE: attn-run: error: input #3 (kv_lengths): got 3xi64, but the kernel takes ?xi32 (element type i64, expected i32)
// SHAPE: attn-run: error: the inputs do not fit kernel 'f': kv_lengths: dimension 0 (B) is 4 but query has B = 3 (query 3x2x3x16, kv_lengths 4)

// Lengths that are not a function argument are refused by name.
// RUN: not attn-run %s -e computed --input=2x2x3x16xf32 --input=2x2x5x16xf32 --input=2x2x5x16xf32 2>&1 | FileCheck %s --check-prefix=COMPUTED
// COMPUTED: attn-run: error: operand 'kv_lengths' of the attn.attention in 'computed' is not a function argument; attn-run passes q, k, v, the mask, kv_lengths, cu_seqlens and block_table as arguments

func.func @f(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %l: tensor<?xi32>) -> tensor<?x2x?x16xf32> {
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<?xi32>) : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

func.func @computed(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %l = arith.constant dense<[1, 2]> : tensor<2xi32>
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<2xi32>) : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

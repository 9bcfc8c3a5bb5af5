// REQUIRES: numpy, host-x86_64
// On a CPU without F16C (--jit-cpu=x86-64), LLVM lowers f32 <-> f16
// conversions to calls of __truncsfhf2 / __extendhfsf2, which attn-run
// provides to the JIT (attn/Runner/SoftFloat.h). With Q = 0 every score is
// 0, so O[b,h,0,:] = (V[b,h,0,:] + V[b,h,1,:]) / 2 is exact in f32 and only
// its rounding to f16 differs between implementations: the software
// conversion must match the host's hardware one bit for bit (round to
// nearest even, subnormals included) over 8*16*256 values.

func.func @avg(%q: tensor<8x16x1x16xf16>, %k: tensor<8x16x2x16xf16>, %v: tensor<8x16x2x256xf16>) -> tensor<8x16x1x256xf16> {
  %o = attn.attention %q, %k, %v : tensor<8x16x1x16xf16>, tensor<8x16x2x16xf16>, tensor<8x16x2x256xf16> -> tensor<8x16x1x256xf16>
  return %o : tensor<8x16x1x256xf16>
}

// RUN: %python -c "import numpy as np; np.save('%t.q.npy', np.zeros((8, 16, 1, 16), np.float16))"
// RUN: attn-run %s --input=@%t.q.npy --input=random --input=random --output=@%t.host.npy
// RUN: attn-run %s --input=@%t.q.npy --input=random --input=random --output=@%t.generic.npy --jit-cpu=x86-64
// RUN: cmp %t.host.npy %t.generic.npy

// And the whole run checks out against the reference.
// RUN: attn-run %s --input=random --input=random --input=random --jit-cpu=x86-64 --check \
// RUN:   | FileCheck %s
// CHECK: check: PASS

// CPUs LLVM would abort on are errors, not crashes.
// RUN: not attn-run %s --input=random --input=random --input=random --jit-cpu=no-such-cpu 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-CPU
// BAD-CPU: attn-run: error: compiling 'avg' for cpu failed: unknown --jit-cpu 'no-such-cpu' for x86_64-{{.*}}
// RUN: not attn-run %s --input=random --input=random --input=random --jit-cpu=i686 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU-32
// CPU-32: attn-run: error: compiling 'avg' for cpu failed: --jit-cpu 'i686' cannot run x86_64-{{.*}} code

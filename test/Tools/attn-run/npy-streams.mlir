// An --input=@FILE that is a device or a FIFO: the .npy magic string is read
// from the first bytes, so attn-run stops there with one error line instead
// of reading /dev/zero until memory runs out or waiting for a FIFO's writer.

func.func @attn(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x5x8xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}

// RUN: not attn-run %s --input=@/dev/zero --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO
// ZERO: attn-run: error: input #0 (q): '/dev/zero' is not a .npy file (bad magic string)

// RUN: not attn-run %s --input=random --input=@/dev/full --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL
// FULL: attn-run: error: input #1 (k): '/dev/full' is not a .npy file (bad magic string)

// RUN: not attn-run %s --input=random --input=random --input=@/dev/urandom 2>&1 \
// RUN:   | FileCheck %s --check-prefix=URANDOM
// URANDOM: attn-run: error: input #2 (v): '/dev/urandom' is not a .npy file (bad magic string)

// A FIFO that no process writes reads as empty.
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not attn-run %s --input=@%t.fifo --input=random --input=random 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOWRITER
// NOWRITER: attn-run: error: input #0 (q): '{{.*}}.fifo' is not a .npy file (bad magic string)

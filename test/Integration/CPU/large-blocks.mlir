// Blocks far larger than the problem: a program's buffers over 64 KiB go on
// the heap (a 1024 x 1024 score block is 4 MiB, a 4096-row Q tile of head
// dim 256 as much; on the stack they overflowed it).
// A static grid of one program and a dynamic one both run, and check.
// RUN: attn-run %s -e one --input=1x1x33x256xf32 --input=1x1x40x256xf32 --input=1x1x40x256xf32 --check --block-m=1024 --block-n=1024 | FileCheck %s
// RUN: attn-run %s -e one --input=1x1x33x256xf32 --input=1x1x40x256xf32 --input=1x1x40x256xf32 --check --block-m=4096 --block-n=64 | FileCheck %s
// RUN: attn-run %s -e many --input=2x3x1000x64xbf16 --input=2x3x17x64xbf16 --input=2x3x17x64xbf16 --check --block-m=2048 --block-n=512 | FileCheck %s
// Past the config verifier's limit: one line, no crash.
// RUN: not attn-run %s -e one --input=1x1x33x256xf32 --input=1x1x40x256xf32 --input=1x1x40x256xf32 --block-m=8192 2>&1 | FileCheck %s --check-prefix=LIMIT
// CHECK: check: PASS
// LIMIT: the kernel config: expects block_m and block_n <= 4096, got 8192 and

func.func @one(%q: tensor<1x1x33x256xf32>, %k: tensor<1x1x40x256xf32>, %v: tensor<1x1x40x256xf32>) -> tensor<1x1x33x256xf32> {
  %o = attn.attention %q, %k, %v : tensor<1x1x33x256xf32>, tensor<1x1x40x256xf32>, tensor<1x1x40x256xf32> -> tensor<1x1x33x256xf32>
  return %o : tensor<1x1x33x256xf32>
}

func.func @many(%q: tensor<?x3x?x64xbf16>, %k: tensor<?x3x?x64xbf16>, %v: tensor<?x3x?x64xbf16>) -> tensor<?x3x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x3x?x64xbf16>, tensor<?x3x?x64xbf16>, tensor<?x3x?x64xbf16> -> tensor<?x3x?x64xbf16>
  return %o : tensor<?x3x?x64xbf16>
}

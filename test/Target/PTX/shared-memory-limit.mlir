// A config whose K/V slots do not fit in the chip's shared memory is a
// compile error that says so, not a launch failure on the GPU:
// RUN: rm -f %t.ptx
// RUN: not attn-translate --attn-to-ptx %s -o %t.ptx --block-n=32 --num-stages=4 2>&1 | FileCheck %s
// RUN: not test -e %t.ptx
// The same kernel on sm_80 (163 KiB) with 2 stages does not fit either:
// RUN: not attn-translate --attn-to-ptx %s -o %t.ptx --chip=sm_80 --block-n=32 --num-stages=2 2>&1 | FileCheck %s --check-prefix=SM80
// With 2 stages it fits on sm_90a (227 KiB):
// RUN: attn-translate --attn-to-ptx %s -o %t.ptx --block-n=32 --num-stages=2
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// CHECK: error: the kernel needs 338944 bytes of shared memory (block_m = 64, block_n = 32, num_stages = 4); sm_90a allows 232448 per block: use fewer stages or smaller blocks
// CHECK-NOT: see current operation
// SM80: error: the kernel needs 202752 bytes of shared memory (block_m = 64, block_n = 32, num_stages = 2); sm_80 allows 166912 per block
// PTX: .entry big_kernel
func.func @big(%q: tensor<?x4x?x256xf32>, %k: tensor<?x4x?x256xf32>, %v: tensor<?x4x?x256xf32>) -> tensor<?x4x?x256xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x256xf32>, tensor<?x4x?x256xf32>, tensor<?x4x?x256xf32> -> tensor<?x4x?x256xf32>
  return %o : tensor<?x4x?x256xf32>
}

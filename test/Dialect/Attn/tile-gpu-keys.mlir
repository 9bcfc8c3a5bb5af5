// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile="target=sm_80 block-n=8" | FileCheck %s

// A 16-bit key block is whole k16 steps of P V on a GPU (m16n8k16, wgmma's
// k16): 8 keys would leave half of each step out.
func.func @bf16_keys(%q: tensor<1x2x32x64xbf16>) -> tensor<1x2x32x64xbf16> {
  // expected-error @+1 {{the kernel config: expects block_n to be a multiple of 16 for 'bf16' on sm_80 (the k of P V's 16-bit MMAs), got 8}}
  %o = attn.attention %q, %q, %q : tensor<1x2x32x64xbf16>, tensor<1x2x32x64xbf16>, tensor<1x2x32x64xbf16> -> tensor<1x2x32x64xbf16>
  return %o : tensor<1x2x32x64xbf16>
}

// -----

// tf32's steps are k8: the same key block is whole steps.
// CHECK-LABEL: func.func @f32_keys
// CHECK: #attn.config<block_m = 64, block_n = 8, num_warps = 4, num_stages = 2, target = "sm_80">
func.func @f32_keys(%q: tensor<1x2x32x64xf32>) -> tensor<1x2x32x64xf32> {
  %o = attn.attention %q, %q, %q : tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32> -> tensor<1x2x32x64xf32>
  return %o : tensor<1x2x32x64xf32>
}

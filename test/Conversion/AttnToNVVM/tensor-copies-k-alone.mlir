// A tf32 kernel whose V tile cannot go by a tensor copy (head dim 256: the
// padded box would be 260 elements wide, over TMA's 256) while its K can:
// tensor-copies=auto takes a tf32 K only together with its V (K alone was
// slower), so it loads both by cp.async.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline="scores-ahead=all" \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=AUTO

// AUTO-LABEL: gpu.func @d256_kernel
// AUTO-NOT:   attn.kernel_tensor_maps
// AUTO-NOT:   nvvm.cp.async.bulk.tensor
// AUTO:       nvvm.cp.async.shared.global
// AUTO-NOT:   nvvm.cp.async.bulk.tensor
func.func @d256(%q: tensor<1x2x100x256xf32>, %k: tensor<1x2x100x256xf32>, %v: tensor<1x2x100x256xf32>) -> tensor<1x2x100x256xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x2x100x256xf32>, tensor<1x2x100x256xf32>, tensor<1x2x100x256xf32> -> tensor<1x2x100x256xf32>
  return %o : tensor<1x2x100x256xf32>
}

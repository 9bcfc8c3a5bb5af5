// A 16-bit P V whose key block is not whole k16 steps (here 8 keys) is an
// error of the conversion, not a kernel that drops the rest: --attn-tile
// refuses such a config for a GPU chip, so the block IR is tiled for the
// host and retargeted here.
// RUN: attn-opt %s --attn-tile="target=cpu block-m=64 block-n=8 num-warps=4 num-stages=2" --attn-online-softmax --attn-pipeline --cse --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | sed 's/target = "cpu"/target = "sm_90a"/' \
// RUN:   | not attn-opt --convert-attn-to-nvvm 2>&1 | FileCheck %s
// CHECK: error: 'linalg.generic' op expects a reduction of whole 16-element MMA steps, got k = 8
// CHECK-NOT: error:
func.func @f16_block_n8(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

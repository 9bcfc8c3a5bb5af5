func.func @f(%q: tensor<1x6x16x64xf16>, %k: tensor<1x4x16x64xf16>, %v: tensor<1x4x16x64xf16>) -> tensor<1x6x16x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<1x6x16x64xf16>, tensor<1x4x16x64xf16>, tensor<1x4x16x64xf16> -> tensor<1x6x16x64xf16>
  return %o : tensor<1x6x16x64xf16>
}

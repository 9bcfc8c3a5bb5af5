func.func @empty(%x: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  return %x : tensor<1x1x16x16xf16>
}
func.func @f(%q: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  %o = attn.attention %q, %q, %q : tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16> -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

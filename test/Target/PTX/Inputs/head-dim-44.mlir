func.func @f(%q: tensor<?x2x?x44xf16>, %k: tensor<?x2x?x44xf16>, %v: tensor<?x2x?x44xf16>) -> tensor<?x2x?x44xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x2x?x44xf16>, tensor<?x2x?x44xf16>, tensor<?x2x?x44xf16> -> tensor<?x2x?x44xf16>
  return %o : tensor<?x2x?x44xf16>
}

func.func @f(%q: tensor<?x2x?x40xf16>, %k: tensor<?x2x?x40xf16>, %v: tensor<?x2x?x40xf16>) -> tensor<?x2x?x40xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x2x?x40xf16>, tensor<?x2x?x40xf16>, tensor<?x2x?x40xf16> -> tensor<?x2x?x40xf16>
  return %o : tensor<?x2x?x40xf16>
}

func.func @f(%q: tensor<?x2x?x40xf16>) -> tensor<?x2x?x40xf16> {
  %o = attn.attention %q %q : tensor<?x2x?x40xf16>
}

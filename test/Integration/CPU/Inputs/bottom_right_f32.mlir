func.func @f(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, precision = #attn.precision<ieee>} : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

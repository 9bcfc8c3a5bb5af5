// A bottom-right causal f32 function under an additive mask tensor
// (causal-rows.test).
func.func @f(%q: tensor<1x2x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>, %m: tensor<1x1x?x?xf32>) -> tensor<1x2x?x64xf32> {
  %o = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x1x?x?xf32> -> tensor<1x2x?x64xf32>
  return %o : tensor<1x2x?x64xf32>
}

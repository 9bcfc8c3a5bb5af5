// The function of lse-output.test (IEEE f32, so that numpy's float64
// attention can hold it to 1e-5).
func.func @lse(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>, %m: tensor<?x?xi1>) -> (tensor<?x4x?x8xf32>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>, precision = #attn.precision<ieee>} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>, tensor<?x?xi1> -> tensor<?x4x?x8xf32>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x8xf32>, tensor<?x4x?xf32>
}

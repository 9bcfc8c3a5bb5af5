// attn-run-inputs: --input=1x96x100x128xf32 --input=1x96x100x128xf32 --input=1x96x100x128xf32 --input=1x1x100x100xf32
// The workload that started attn-mlir: fp32 inputs with tf32 matmuls, an
// additive causal mask tensor shared by every batch and head, B=32, H=96,
// D=128, T up to 512 (dynamic here: one kernel serves every B and T).
func.func @seed(%q: tensor<?x96x?x128xf32>, %k: tensor<?x96x?x128xf32>,
                %v: tensor<?x96x?x128xf32>, %mask: tensor<1x1x?x?xf32>)
    -> tensor<?x96x?x128xf32> {
  %o = attn.attention %q, %k, %v mask(%mask) {precision = #attn.precision<tf32>}
         : tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>, tensor<?x96x?x128xf32>,
           tensor<1x1x?x?xf32> -> tensor<?x96x?x128xf32>
  return %o : tensor<?x96x?x128xf32>
}

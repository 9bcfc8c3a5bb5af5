// attn-run-inputs: --input=2x32x77x128xbf16 --input=2x8x77x128xbf16 --input=2x8x77x128xbf16
// Grouped-query attention as in Llama-style models: 32 query heads sharing 8
// key/value heads, bf16, causal, any batch and sequence length.
func.func @gqa(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>,
               %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>}
         : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
           -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

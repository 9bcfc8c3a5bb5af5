// A program of head dim 59 (bf16 rows of 118 bytes) with two K/V stages, as
// --attn-tile never configures it (padded-head-dim.mlir).
func.func @narrow_async(%q: memref<?x2x?x59xbf16>, %k: memref<?x2x?x59xbf16>, %v: memref<?x2x?x59xbf16>, %o: memref<?x2x?x59xbf16>) {
  %c0 = arith.constant 0 : index
  %nb = memref.dim %q, %c0 : memref<?x2x?x59xbf16>
  scf.forall (%b, %h, %qb) in (%nb, 2, 1) {
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">, scale = 0.125 : f32} : memref<?x2x?x59xbf16>, memref<?x2x?x59xbf16>, memref<?x2x?x59xbf16> outs memref<?x2x?x59xbf16>
  } {attn.config = #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">}
  return
}

// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @config_block(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects block_m and block_n >= 1, got 0 and 32}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 0, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_warps(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects num_warps and num_stages >= 1, got 4 and 0}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 0, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_target(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects a target ('cpu' or a chip like 'sm_90a')}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_unknown_target(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects target 'cpu' or a CUDA chip sm_XY with an optional 'a' or 'f' suffix (such as sm_90a), got 'gpu'}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "gpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_old_chip(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects a CUDA chip of sm_80 or newer (the kernels use mma.sync on 16-bit floats and cp.async), got 'sm_75'}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_75">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_gpu_rows(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects block_m to be a multiple of 16 * num_warps on sm_90a (each warp owns whole 16-row tiles), got block_m = 48, num_warps = 4}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 48, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90a">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_gpu_keys(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects block_n to be a multiple of 8 on sm_80, got 20}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 20, num_warps = 4, num_stages = 2, target = "sm_80">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

// The CPU target takes any block sizes (a 48-row program of 4 "warps").
func.func @config_cpu_rows(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 48, block_n = 20, num_warps = 4, num_stages = 2, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">
func.func @element_type(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xbf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'key' to have the element type of 'query' ('f16'), got 'bf16'}}
  attn.block_attention ins(%q, %k, %q) outs(%o) at [%i, %i, %i] {config = #cfg, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xbf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">
func.func @mask_rank(%q: memref<?x8x?x64xf16>, %m: memref<?xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'mask' of rank 2 or 4, got 'memref<?xf16>'}}
  attn.block_attention ins(%q, %q, %q mask(%m)) outs(%o) at [%i, %i, %i] {config = #cfg, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> mask memref<?xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">
func.func @head_dim(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x32xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'query' and 'key' to share the head dim}}
  attn.block_attention ins(%q, %k, %q) outs(%o) at [%i, %i, %i] {config = #cfg, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x32xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

#cfg = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">
func.func @value_head_dim(%q: memref<?x8x?x64xf16>, %v: memref<?x8x?x32xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'value' and 'output' to share the head dim Dv}}
  attn.block_attention ins(%q, %q, %v) outs(%o) at [%i, %i, %i] {config = #cfg, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x32xf16> outs memref<?x8x?x64xf16>
  return
}


// -----

#cfg = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">
func.func @block_map_without_mask(%q: memref<?x8x?x64xf16>, %map: memref<1x1x?x?xi8>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'block_map' only with a 'mask' or a 'mask_mod'}}
  attn.block_attention ins(%q, %q, %q block_map(%map)) outs(%o) at [%i, %i, %i] {config = #cfg, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> block_map memref<1x1x?x?xi8> outs memref<?x8x?x64xf16>
  return
}

// -----

// A chip of the right form that LLVM's NVPTX backend does not know.
func.func @config_unknown_chip(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects a CUDA chip that LLVM's NVPTX backend knows (sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_100f, sm_101, sm_101a, sm_101f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, sm_121, sm_121a, sm_121f), got 'sm_90f'}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 64, block_n = 32, num_warps = 4, num_stages = 2, target = "sm_90f">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_huge_block(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects block_m and block_n <= 4096, got 8192 and 32}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 8192, block_n = 32, num_warps = 4, num_stages = 2, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @config_many_warps(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects num_warps <= 32 and num_stages <= 16, got 64 and 2}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 1024, block_n = 32, num_warps = 64, num_stages = 2, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

// A key split writes f32 partial results and their log-sum-exp.
func.func @key_split_no_lse(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf32>, %i: index) {
  // expected-error @+1 {{expects an f32 'output' and an 'lse' with 'key_split' (the partial results a combine step merges)}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] key_split [%i of %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf32>
  return
}

// -----

func.func @key_split_f16_output(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>, %l: memref<?x8x?xf32>, %i: index) {
  // expected-error @+1 {{expects an f32 'output' and an 'lse' with 'key_split'}}
  attn.block_attention ins(%q, %q, %q) outs(%o lse(%l)) at [%i, %i, %i] key_split [%i of %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf16> lse memref<?x8x?xf32>
  return
}

// -----

// Without a key split, the output has the inputs' type.
func.func @f32_output_unsplit(%q: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf32>, %i: index) {
  // expected-error @+1 {{expects 'output' to have the element type of 'query' ('f16'), got 'f32'}}
  attn.block_attention ins(%q, %q, %q) outs(%o) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x8x?x64xf16>, memref<?x8x?x64xf16> outs memref<?x8x?x64xf32>
  return
}

// -----

// packed_heads: p query heads of one KV head, their static Tq rows in one
// query block.
func.func @packed_heads_not_dividing(%q: memref<?x8x4x64xf16>, %k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'packed_heads' (3) to divide the static query heads of a KV head, with a static Tq}}
  attn.block_attention ins(%q, %k, %k) outs(%q) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, packed_heads = 3, scale = 0.125 : f32} : memref<?x8x4x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x4x64xf16>
  return
}

// -----

func.func @packed_heads_dynamic_tq(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'packed_heads' (2) to divide the static query heads of a KV head, with a static Tq}}
  attn.block_attention ins(%q, %k, %k) outs(%q) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, packed_heads = 2, scale = 0.125 : f32} : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x?x64xf16>
  return
}

// -----

func.func @packed_heads_past_block(%q: memref<?x8x16x64xf16>, %k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects 'packed_heads' x Tq (64) rows within block_m (32)}}
  attn.block_attention ins(%q, %k, %k) outs(%q) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, packed_heads = 4, scale = 0.125 : f32} : memref<?x8x16x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x16x64xf16>
  return
}

// -----

func.func @packed_heads_softcap(%q: memref<?x8x4x64xf16>, %k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{expects no 'mask', 'cu_seqlens', window, softcap or region with 'packed_heads'}}
  attn.block_attention ins(%q, %k, %k) outs(%q) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, packed_heads = 2, scale = 0.125 : f32, softcap = 30.0 : f32} : memref<?x8x4x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x4x64xf16>
  return
}

// -----

func.func @packed_heads_one(%q: memref<?x8x4x64xf16>, %k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{attribute 'packed_heads' failed to satisfy constraint}}
  attn.block_attention ins(%q, %k, %k) outs(%q) at [%i, %i, %i] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, packed_heads = 1, scale = 0.125 : f32} : memref<?x8x4x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x8x4x64xf16>
  return
}

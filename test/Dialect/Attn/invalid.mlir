// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'query' of rank 4 (B x Hq x Tq x D), got 'tensor<8x128x64xf16>'}}
  %o = attn.attention %q, %k, %v : tensor<8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @key_rank(%q: tensor<1x8x128x64xf16>, %k: tensor<1x1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'key' of rank 4 (B x Hkv x Tk x D)}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @value_rank(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'value' of rank 4 (B x Hkv x Tk x Dv)}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @result_rank(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<8x128x64xf16> {
  // expected-error @+1 {{expects 'result' of rank 4 (B x Hq x Tq x Dv)}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<8x128x64xf16>
  return %o : tensor<8x128x64xf16>
}

// -----

func.func @key_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'key' to have the element type of 'query' ('f16'), got 'bf16'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @value_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'value' to have the element type of 'query' ('f16'), got 'f32'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @result_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf32> {
  // expected-error @+1 {{expects the result to have the element type of 'query' ('f16'), got 'f32'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

func.func @unsupported_element_type(%q: tensor<1x8x128x64xf64>, %k: tensor<1x8x128x64xf64>, %v: tensor<1x8x128x64xf64>) -> tensor<1x8x128x64xf64> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x8x128x64xf64>'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf64>, tensor<1x8x128x64xf64>, tensor<1x8x128x64xf64> -> tensor<1x8x128x64xf64>
  return %o : tensor<1x8x128x64xf64>
}

// -----

func.func @head_dim_too_large(%q: tensor<1x8x128x512xf16>, %k: tensor<1x8x128x512xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects a static head dim D in 1..256 in 'query' (dim 3), got 512}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x512xf16>, tensor<1x8x128x512xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @head_dim_dynamic(%q: tensor<1x8x128x?xf16>, %k: tensor<1x8x128x?xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects a static head dim D in 1..256 in 'query' (dim 3), got ?}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x?xf16>, tensor<1x8x128x?xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @value_head_dim_too_large(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x320xf16>) -> tensor<1x8x128x320xf16> {
  // expected-error @+1 {{expects a static head dim Dv in 1..256 in 'value' (dim 3), got 320}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x320xf16> -> tensor<1x8x128x320xf16>
  return %o : tensor<1x8x128x320xf16>
}

// -----

func.func @key_head_dim(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x32xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'key' dim 3 (D) to be 64 as in 'query', got 32}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x32xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @batch_mismatch(%q: tensor<2x8x128x64xf16>, %k: tensor<3x8x128x64xf16>, %v: tensor<3x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  // expected-error @+1 {{expects 'key' and 'value' batch (dim 0) to match 'query' (2), got 3 and 3}}
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xf16>, tensor<3x8x128x64xf16>, tensor<3x8x128x64xf16> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

func.func @kv_heads_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x2x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'value' heads (dim 1) to match 'key' (4), got 2}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @kv_length_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x100x64xf16>, %v: tensor<1x8x99x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'value' sequence length (dim 2) to match 'key' (Tk = 100), got 99}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x100x64xf16>, tensor<1x8x99x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @gqa_not_divisible(%q: tensor<1x6x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x4x128x64xf16>) -> tensor<1x6x128x64xf16> {
  // expected-error @+1 {{expects 'query' heads (Hq = 6) to be a multiple of 'key' heads (Hkv = 4)}}
  %o = attn.attention %q, %k, %v : tensor<1x6x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16> -> tensor<1x6x128x64xf16>
  return %o : tensor<1x6x128x64xf16>
}

// -----

func.func @result_dv_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x32xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects the result shape to be 1x8x128x32 (B x Hq x Tq x Dv), got 'tensor<1x8x128x64xf16>'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x32xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @result_tq_mismatch(%q: tensor<?x8x128x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x64x64xf16> {
  // expected-error @+1 {{expects the result shape to be ?x8x128x64 (B x Hq x Tq x Dv), got 'tensor<?x8x64x64xf16>'}}
  %o = attn.attention %q, %k, %v : tensor<?x8x128x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x64x64xf16>
  return %o : tensor<?x8x64x64xf16>
}

// -----

func.func @mask_rank(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>, %m: tensor<8x128x128xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'mask' of rank 2 (Tq x Tk) or 4 (B x Hq x Tq x Tk), got 'tensor<8x128x128xf16>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<8x128x128xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @mask_broadcast_rank4(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x96x64xf16>, %v: tensor<2x8x96x64xf16>, %m: tensor<1x4x128x96xf16>) -> tensor<2x8x128x64xf16> {
  // expected-error @+1 {{expects 'mask' dim 1 to be 1 or to match 8 so that it broadcasts to B x Hq x Tq x Tk (2x8x128x96), got 'tensor<1x4x128x96xf16>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<2x8x128x64xf16>, tensor<2x8x96x64xf16>, tensor<2x8x96x64xf16>, tensor<1x4x128x96xf16> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

func.func @mask_broadcast_rank2(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x96x64xf16>, %v: tensor<2x8x96x64xf16>, %m: tensor<128x128xi1>) -> tensor<2x8x128x64xf16> {
  // expected-error @+1 {{expects 'mask' dim 1 to be 1 or to match 96 so that it broadcasts to B x Hq x Tq x Tk (2x8x128x96), got 'tensor<128x128xi1>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<2x8x128x64xf16>, tensor<2x8x96x64xf16>, tensor<2x8x96x64xf16>, tensor<128x128xi1> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

func.func @mask_element_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>, %m: tensor<128x128xi8>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 1-bit signless integer values, but got 'tensor<128x128xi8>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<128x128xi8> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @scale_zero(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'scale' to be a finite positive f32, got 0}}
  %o = attn.attention %q, %k, %v {scale = 0.0 : f32} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @scale_negative(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'scale' to be a finite positive f32, got -0.125}}
  %o = attn.attention %q, %k, %v {scale = -0.125 : f32} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @scale_nan(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'scale' to be a finite positive f32, got nan}}
  %o = attn.attention %q, %k, %v {scale = 0x7FC00000 : f32} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @scale_inf(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{expects 'scale' to be a finite positive f32, got inf}}
  %o = attn.attention %q, %k, %v {scale = 0x7F800000 : f32} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @scale_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 32-bit float attribute}}
  %o = attn.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @precision_non_f32(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  // expected-error @+1 {{expects 'precision' only with f32 inputs, got 'bf16' 'query'}}
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>} : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

// -----

func.func @bad_causal(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+2 {{expected ::mlir::attn::CausalKind to be one of: top_left, bottom_right}}
  // expected-error @+1 {{failed to parse Attn_CausalAttr parameter 'value' which is to be a `::mlir::attn::CausalKind`}}
  %o = attn.attention %q, %k, %v {causal = #attn.causal<diagonal>} : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// A static size of 0: here the KV heads, which GQA divides by.
func.func @zero_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x0x8x16xf32>, %v: tensor<1x0x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expects 'key' dim 1 to be >= 1 (B x Hkv x Tk x D), got 'tensor<1x0x8x16xf32>'}}
  %o = attn.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @zero_queries(%q: tensor<1x1x0x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x0x16xf32> {
  // expected-error @+1 {{expects 'query' dim 2 to be >= 1 (B x Hq x Tq x D), got 'tensor<1x1x0x16xf32>'}}
  %o = attn.attention %q, %k, %v : tensor<1x1x0x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x0x16xf32>
  return %o : tensor<1x1x0x16xf32>
}

// -----

func.func @zero_mask(%q: tensor<?x1x?x16xf32>, %k: tensor<?x1x?x16xf32>, %v: tensor<?x1x?x16xf32>, %m: tensor<0x?xf32>) -> tensor<?x1x?x16xf32> {
  // expected-error @+1 {{expects 'mask' dim 0 to be >= 1, got 'tensor<0x?xf32>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<0x?xf32> -> tensor<?x1x?x16xf32>
  return %o : tensor<?x1x?x16xf32>
}

// -----

// Key and value batches differ while the query's is dynamic.
func.func @kv_batch(%q: tensor<?x1x8x16xf32>, %k: tensor<2x1x8x16xf32>, %v: tensor<3x1x8x16xf32>) -> tensor<?x1x8x16xf32> {
  // expected-error @+1 {{expects 'value' batch (dim 0) to match 'key' (2), got 3}}
  %o = attn.attention %q, %k, %v : tensor<?x1x8x16xf32>, tensor<2x1x8x16xf32>, tensor<3x1x8x16xf32> -> tensor<?x1x8x16xf32>
  return %o : tensor<?x1x8x16xf32>
}

// -----

// The result's batch is checked against the key's when the query's is dynamic.
func.func @result_batch(%q: tensor<?x1x8x16xf32>, %k: tensor<2x1x8x16xf32>, %v: tensor<2x1x8x16xf32>) -> tensor<3x1x8x16xf32> {
  // expected-error @+1 {{expects the result shape to be 2x1x8x16 (B x Hq x Tq x Dv), got 'tensor<3x1x8x16xf32>'}}
  %o = attn.attention %q, %k, %v : tensor<?x1x8x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<3x1x8x16xf32>
  return %o : tensor<3x1x8x16xf32>
}

// -----

// The mask's Tk is checked against the value's when the key's is dynamic.
func.func @mask_keys(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x?x16xf32>, %v: tensor<1x1x8x16xf32>, %m: tensor<8x9xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask' dim 1 to be 1 or to match 8 so that it broadcasts to B x Hq x Tq x Tk (1x1x8x8), got 'tensor<8x9xf32>'}}
  %o = attn.attention %q, %k, %v mask(%m) : tensor<1x1x8x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x8x16xf32>, tensor<8x9xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @dynamic_result_dv(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x?xf32> {
  // expected-error @+1 {{expects a static head dim Dv in the result (dim 3), 16 as in 'value', got 'tensor<1x1x8x?xf32>'}}
  %o = attn.attention %q, %k, %v : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x?xf32>
  return %o : tensor<1x1x8x?xf32>
}

// -----

// The log-sum-exp result is B x Hq x Tq.
func.func @lse_shape(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x9x16xf32>, %v: tensor<2x2x9x16xf32>) -> tensor<2x4x9xf32> {
  // expected-error @+1 {{expects the log-sum-exp result shape to be 2x4x8 (B x Hq x Tq), got 'tensor<2x4x9xf32>'}}
  %o, %l = attn.attention %q, %k, %v : tensor<2x4x8x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x9xf32>
  return %l : tensor<2x4x9xf32>
}

// -----

func.func @lse_rank(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x1xf32> {
  // expected-error @+1 {{expects the log-sum-exp result shape to be ?x4x? (B x Hq x Tq), got 'tensor<?x4x?x1xf32>'}}
  %o, %l = attn.attention %q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x?x1xf32>
  return %l : tensor<?x4x?x1xf32>
}

// -----

// The log-sum-exp is f32 for every input type.
func.func @lse_type(%q: tensor<1x1x8x16xf16>, %k: tensor<1x1x8x16xf16>, %v: tensor<1x1x8x16xf16>) -> tensor<1x1x8xf16> {
  // expected-error @+1 {{result #1 must be ranked tensor of 32-bit float values, but got 'tensor<1x1x8xf16>'}}
  %o, %l = attn.attention %q, %k, %v : tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16> -> tensor<1x1x8x16xf16>, tensor<1x1x8xf16>
  return %l : tensor<1x1x8xf16>
}

// -----

// kv_lengths holds one count per batch.
func.func @kv_lengths_shape(%q: tensor<2x4x1x16xf32>, %k: tensor<2x2x9x16xf32>, %v: tensor<2x2x9x16xf32>, %l: tensor<3xi32>) -> tensor<2x4x1x16xf32> {
  // expected-error @+1 {{expects 'kv_lengths' of shape 2 (B), got 'tensor<3xi32>'}}
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<3xi32>) : tensor<2x4x1x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

func.func @kv_lengths_type(%q: tensor<2x4x1x16xf32>, %k: tensor<2x2x9x16xf32>, %v: tensor<2x2x9x16xf32>, %l: tensor<2xi64>) -> tensor<2x4x1x16xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<2xi64>'}}
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<2xi64>) : tensor<2x4x1x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32> -> tensor<2x4x1x16xf32>
  return %o : tensor<2x4x1x16xf32>
}

// -----

// cu_seqlens: both offset vectors, of one length N + 1 >= 2, batch 1
// everywhere, no mask and no kv_lengths.
func.func @cu_seqlens_one(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %c: tensor<?xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects both 'cu_seqlens_q' and 'cu_seqlens_k', or neither}}
  %o = "attn.attention"(%q, %k, %v, %c) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0>}> ({}, {}) : (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?xi32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_lengths(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects 'cu_seqlens_q' and 'cu_seqlens_k' of one length (N + 1), got 'tensor<3xi32>' and 'tensor<4xi32>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<3xi32>, tensor<4xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_short(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %c: tensor<1xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects 'cu_seqlens_q' of shape N + 1 (N >= 1 sequences), got 'tensor<1xi32>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<1xi32>, tensor<1xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_rank(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %c: tensor<2x3xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects 'cu_seqlens_q' of shape N + 1 (N >= 1 sequences), got 'tensor<2x3xi32>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<2x3xi32>, tensor<2x3xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_batch(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %c: tensor<?xi32>) -> tensor<?x4x?x16xf32> {
  // expected-error @+1 {{expects 'query' of batch 1 (static) with 'cu_seqlens' (the sequences are packed along dim 2), got 'tensor<?x4x?x16xf32>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

func.func @cu_seqlens_batch2(%q: tensor<1x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x16xf32>, %c: tensor<?xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects 'key' and 'value' batch (dim 0) to match 'query' (1), got 2 and 2}}
  %o = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_lse(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %c: tensor<?xi32>) -> (tensor<1x4x?x16xf32>, tensor<?x4x?xf32>) {
  // expected-error @+1 {{expects 'log-sum-exp result' of batch 1 (static) with 'cu_seqlens' (the sequences are packed along dim 2), got 'tensor<?x4x?xf32>'}}
  %o, %l = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>, tensor<?x4x?xf32>
  return %o, %l : tensor<1x4x?x16xf32>, tensor<?x4x?xf32>
}

// -----

func.func @cu_seqlens_mask(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %m: tensor<?x?xi1>, %c: tensor<?xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects no 'mask' with 'cu_seqlens' (a mask addresses batches and whole sequences; use mask_mod, whose b is the sequence)}}
  %o = attn.attention %q, %k, %v mask(%m) cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<?x?xi1> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_kv_lengths(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %l: tensor<1xi32>, %c: tensor<?xi32>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{expects no 'kv_lengths' with 'cu_seqlens' (cu_seqlens_k gives each sequence its keys)}}
  %o = attn.attention %q, %k, %v kv_lengths(%l : tensor<1xi32>) cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

func.func @cu_seqlens_type(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %c: tensor<?xi64>) -> tensor<1x4x?x16xf32> {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<?xi64>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%c, %c : tensor<?xi64>, tensor<?xi64>) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

// block_table: rank 2 (B x P), a static page in K/V dim 2, V pages like
// K's, B of the query, no cu_seqlens; a mask is as wide as P * page.
func.func @block_table_rank(%q: tensor<?x4x1x16xf16>, %k: tensor<?x2x16x16xf16>, %v: tensor<?x2x16x16xf16>, %bt: tensor<?xi32>) -> tensor<?x4x1x16xf16> {
  // expected-error @+1 {{expects 'block_table' of rank 2 (B x P, the pages of each batch), got 'tensor<?xi32>'}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?xi32>) : tensor<?x4x1x16xf16>, tensor<?x2x16x16xf16>, tensor<?x2x16x16xf16> -> tensor<?x4x1x16xf16>
  return %o : tensor<?x4x1x16xf16>
}

// -----

func.func @block_table_dynamic_page(%q: tensor<?x4x1x16xf16>, %k: tensor<?x2x?x16xf16>, %v: tensor<?x2x?x16xf16>, %bt: tensor<?x?xi32>) -> tensor<?x4x1x16xf16> {
  // expected-error @+1 {{expects a static page size in 'key' dim 2 with 'block_table' (NP x Hkv x page x D), got 'tensor<?x2x?x16xf16>'}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) : tensor<?x4x1x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16> -> tensor<?x4x1x16xf16>
  return %o : tensor<?x4x1x16xf16>
}

// -----

func.func @block_table_value_pages(%q: tensor<?x4x1x16xf16>, %k: tensor<?x2x16x16xf16>, %v: tensor<?x2x32x16xf16>, %bt: tensor<?x?xi32>) -> tensor<?x4x1x16xf16> {
  // expected-error @+1 {{expects 'value' of NP x Hkv x page x Dv pages as 'key' ('tensor<?x2x16x16xf16>'), got 'tensor<?x2x32x16xf16>'}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) : tensor<?x4x1x16xf16>, tensor<?x2x16x16xf16>, tensor<?x2x32x16xf16> -> tensor<?x4x1x16xf16>
  return %o : tensor<?x4x1x16xf16>
}

// -----

func.func @block_table_batch(%q: tensor<3x4x1x16xf16>, %k: tensor<?x2x16x16xf16>, %v: tensor<?x2x16x16xf16>, %bt: tensor<2x?xi32>) -> tensor<3x4x1x16xf16> {
  // expected-error @+1 {{expects 'block_table' dim 0 to match 'query' batch (3), got 'tensor<2x?xi32>'}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<2x?xi32>) : tensor<3x4x1x16xf16>, tensor<?x2x16x16xf16>, tensor<?x2x16x16xf16> -> tensor<3x4x1x16xf16>
  return %o : tensor<3x4x1x16xf16>
}

// -----

func.func @block_table_cu_seqlens(%q: tensor<1x4x?x16xf16>, %k: tensor<?x2x16x16xf16>, %v: tensor<?x2x16x16xf16>, %c: tensor<?xi32>, %bt: tensor<?x?xi32>) -> tensor<1x4x?x16xf16> {
  // expected-error @+1 {{expects no 'cu_seqlens' with 'block_table' (packed sequences have no batch rows to give pages to)}}
  %o = attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) cu_seqlens(%c, %c : tensor<?xi32>, tensor<?xi32>) : tensor<1x4x?x16xf16>, tensor<?x2x16x16xf16>, tensor<?x2x16x16xf16> -> tensor<1x4x?x16xf16>
  return %o : tensor<1x4x?x16xf16>
}

// -----

func.func @block_table_mask_width(%q: tensor<2x4x8x16xf16>, %k: tensor<?x2x16x16xf16>, %v: tensor<?x2x16x16xf16>, %m: tensor<8x16xi1>, %bt: tensor<2x3xi32>) -> tensor<2x4x8x16xf16> {
  // expected-error @+1 {{expects 'mask' dim 1 to be 1 or to match 48 so that it broadcasts to B x Hq x Tq x Tk (2x4x8x48), got 'tensor<8x16xi1>'}}
  %o = attn.attention %q, %k, %v mask(%m) block_table(%bt : tensor<2x3xi32>) : tensor<2x4x8x16xf16>, tensor<?x2x16x16xf16>, tensor<?x2x16x16xf16>, tensor<8x16xi1> -> tensor<2x4x8x16xf16>
  return %o : tensor<2x4x8x16xf16>
}

// RUN: attn-opt %s -split-input-file -verify-diagnostics

// An attribute the op does not define would change nothing it computes:
// it is an error, named, not silently ignored.
func.func @unknown_attribute(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'attn.attention' op does not know attribute 'softcap_value'}}
  %o = attn.attention %q, %k, %v {softcap_value = 50.0 : f32, scale = 0.25 : f32} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A dialect-prefixed name is no exception.
func.func @prefixed_attribute(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{does not know attribute 'attn.window'}}
  %o = attn.attention %q, %k, %v {attn.window = 4 : i64} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A misspelled attribute the op has.
func.func @misspelled_attribute(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{does not know attribute 'casual'}}
  %o = attn.attention %q, %k, %v {casual = #attn.causal<top_left>} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

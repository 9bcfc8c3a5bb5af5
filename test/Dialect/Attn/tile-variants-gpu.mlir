// RUN: attn-opt %s --attn-tile="target=sm_90a" --split-input-file -verify-diagnostics

// The GPU lowering of the variants is not there yet: a GPU target refuses
// them at the op rather than compiling a kernel that ignores them.

func.func @window(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x64x16xf16>, %v: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  // expected-error @+1 {{window, softcap, score_mod and mask_mod are not yet supported on sm_90a}}
  %o = attn.attention %q, %k, %v {window = #attn.window<left = 16, right = 0>} : tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}

// -----

func.func @softcap(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x64x16xf16>, %v: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  // expected-error @+1 {{not yet supported on sm_90a}}
  %o = attn.attention %q, %k, %v {softcap = 20.0 : f32} : tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}

// -----

func.func @mask_mod(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x64x16xf16>, %v: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  // expected-error @+1 {{not yet supported on sm_90a}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi sle, %j, %i : index
    attn.yield %c : i1
  } : tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}

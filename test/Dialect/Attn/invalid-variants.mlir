// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The variants of SPEC.md section 1.1: each malformed window, softcap,
// score_mod and mask_mod is an error that names what is wrong.

func.func @window_bound(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects window left and right >= -1 (-1: unbounded), got -2 and 0}}
  %o = attn.attention %q, %k, %v {window = #attn.window<left = -2, right = 0>} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @softcap_negative(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'softcap' to be a finite positive f32, got -50}}
  %o = attn.attention %q, %k, %v {softcap = -50.0 : f32} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @softcap_inf(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'softcap' to be a finite positive f32, got inf}}
  %o = attn.attention %q, %k, %v {softcap = 0x7F800000 : f32} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @softcap_type(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{attribute 'softcap' failed to satisfy constraint: 32-bit float attribute}}
  %o = attn.attention %q, %k, %v {softcap = 50 : i32} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @unknown_attribute(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{does not know attribute 'soft_cap' (its attributes: scale, causal, precision, window, softcap)}}
  %o = attn.attention %q, %k, %v {soft_cap = 50.0 : f32} : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @two_blocks(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to have one block, got 2}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %s : f32
  ^bb1(%t: f32):
    attn.yield %t : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @score_arguments(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' block arguments (s: f32, b: index, h: index, i: index, j: index), got (f32, index, index, index)}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    attn.yield %s : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @score_argument_type(%q: tensor<1x1x8x16xf16>, %k: tensor<1x1x8x16xf16>, %v: tensor<1x1x8x16xf16>) -> tensor<1x1x8x16xf16> {
  // expected-error @+1 {{expects 'score_mod' block arguments (s: f32, b: index, h: index, i: index, j: index), got (f16, index, index, index, index)}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %t = arith.extf %s : f16 to f32
    attn.yield %t : f32
  } : tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16>, tensor<1x1x8x16xf16> -> tensor<1x1x8x16xf16>
  return %o : tensor<1x1x8x16xf16>
}

// -----

func.func @mask_arguments(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask_mod' block arguments (b: index, h: index, i: index, j: index), got (index, index, index, i32)}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: i32):
    %t = arith.constant true
    attn.yield %t : i1
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @score_yield_type(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to yield 'f32', got 'f16'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.truncf %s : f32 to f16
    attn.yield %t : f16
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @mask_yield_type(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask_mod' to yield 'i1', got 'index'}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    attn.yield %j : index
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @no_terminator(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask_mod' to end in attn.yield}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// An op with memory effects.
func.func @impure(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %buf: memref<8xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to hold only pure arith, math, tensor.extract and scf.if ops, got 'memref.store'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    memref.store %s, %buf[%i] : memref<8xf32>
    attn.yield %s : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// A call may do anything.
func.func private @bias(f32) -> f32
func.func @call(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to hold only pure arith, math, tensor.extract and scf.if ops, got 'func.call'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = func.call @bias(%s) : (f32) -> f32
    attn.yield %t : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// Inside an scf.if too.
func.func @nested_impure(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %buf: memref<8xi1>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask_mod' to hold only pure arith, math, tensor.extract and scf.if ops, got 'memref.load'}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi sle, %j, %i : index
    %keep = scf.if %c -> i1 {
      %m = memref.load %buf[%j] : memref<8xi1>
      scf.yield %m : i1
    } else {
      scf.yield %c : i1
    }
    attn.yield %keep : i1
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// A pure op outside the ones the compiler lowers.
func.func @unsupported_pure(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %doc: tensor<?xi32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'mask_mod' to hold only pure arith, math, tensor.extract and scf.if ops, got 'tensor.dim'}}
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %doc, %c0 : tensor<?xi32>
    %keep = arith.cmpi slt, %j, %n : index
    attn.yield %keep : i1
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// A tensor from above is read element by element only.
func.func @captured_tensor(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %t: tensor<4xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to read values defined above the op as scalars or, through tensor.extract, as ranked tensors; got 'tensor<4xf32>' in 'arith.addf'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %twice = arith.addf %t, %t : tensor<4xf32>
    attn.yield %s : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @captured_vector(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %w: vector<4xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{got 'vector<4xf32>' in 'arith.mulf'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %w2 = arith.mulf %w, %w : vector<4xf32>
    attn.yield %s : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// Values computed inside are scalars.
func.func @tensor_value(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{expects 'score_mod' to compute on scalars, got 'tensor<4xf32>' from 'arith.constant'}}
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant dense<1.0> : tensor<4xf32>
    %e = tensor.extract %c[%h] : tensor<4xf32>
    %t = arith.addf %s, %e : f32
    attn.yield %t : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

func.func @yield_outside() -> f32 {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{expects parent op to be one of 'attn.attention, attn.block_attention'}}
  attn.yield %c : f32
}

// -----

// Block level: the regions read the op's captures, by memref.load.
func.func @block_not_captured(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %slopes: memref<4xf32>, %b: index, %h: index, %qb: index) {
  // expected-error @+1 {{expects 'score_mod' to read values defined above the op as scalars or, through memref.load, as the op's captures; got 'memref<4xf32>' in 'memref.load'}}
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.5 : f32}
    score_mod {
    ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %j: index):
      %slope = memref.load %slopes[%hh] : memref<4xf32>
      %t = arith.addf %s, %slope : f32
      attn.yield %t : f32
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// -----

func.func @block_tensor_extract(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %slopes: tensor<4xf32>, %b: index, %h: index, %qb: index) {
  // expected-error @+1 {{expects 'score_mod' to hold only pure arith, math, memref.load and scf.if ops, got 'tensor.extract'}}
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.5 : f32}
    score_mod {
    ^bb0(%s: f32, %bb: index, %hh: index, %i: index, %j: index):
      %slope = tensor.extract %slopes[%hh] : tensor<4xf32>
      %t = arith.addf %s, %slope : f32
      attn.yield %t : f32
    } : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// -----

func.func @block_softcap(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>, %b: index, %h: index, %qb: index) {
  // expected-error @+1 {{expects 'softcap' to be a finite positive f32, got 0}}
  attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb] {config = #attn.config<block_m = 32, block_n = 32, num_warps = 1, num_stages = 1, target = "cpu">, scale = 0.5 : f32, softcap = 0.0 : f32} : memref<?x4x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16> outs memref<?x4x?x64xf16>
  return
}

// attn-run with variants it refuses or cannot check: one error line on
// stderr, exit code 1.

// The extra arguments are counted and named by the regions that read them.
// RUN: not attn-run %s -e alibi --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=1x4x8x16xf32 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: attn-run: error: function 'alibi' takes 4 inputs (q: tensor<1x4x8x16xf32>, k: tensor<1x4x8x16xf32>, v: tensor<1x4x8x16xf32>, score_mod: tensor<4xf32>), got 3 --input values
// RUN: not attn-run %s -e alibi --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=4xi32 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: attn-run: error: input #3 (score_mod): got 4xi32, but the function takes tensor<4xf32> (element type i32, expected f32)

// A region that reads outside its tensor: the reference says where.
// RUN: not attn-run %s -e out_of_bounds --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=4xf32 --check 2>&1 | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: attn-run: error: --check: a region reads element 4 of dimension 0 of a tensor of 4

// An op the reference cannot evaluate (the kernel can).
// RUN: not attn-run %s -e ctlz --input=1x1x8x16xf32 --input=1x1x8x16xf32 --input=1x1x8x16xf32 --check 2>&1 | FileCheck %s --check-prefix=OP
// OP: attn-run: error: the reference cannot evaluate 'math.ctlz' in a mask_mod
// Without --check it runs.
// RUN: attn-run %s -e ctlz --input=1x1x8x16xf32 --input=1x1x8x16xf32 --input=1x1x8x16xf32 | FileCheck %s --check-prefix=RAN
// RAN: attn-run: ctlz on cpu

// Arguments are tensors.
// RUN: not attn-run %s -e scalar --input=1x1x8x16xf32 --input=1x1x8x16xf32 --input=1x1x8x16xf32 --input=1xf32 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: attn-run: error: argument #3 of 'scalar' is not a ranked tensor; attn-run passes tensors only

// The GPU path compiles the regions; a runner without MLIR runs their
// kernels but cannot check them (the manifest does not carry the regions).
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx --chip=sm_90a -e alibi %s -o %t/alibi.ptx
// RUN: not attn-run %t/alibi.json --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=1x4x8x16xf32 --input=4xf32 --check 2>&1 | FileCheck %s --check-prefix=RUNNER
// RUNNER: attn-run: error: --check: kernel 'alibi_kernel' has a score_mod or mask_mod region, which its manifest does not carry; check it with the attn-run built with MLIR, which evaluates the regions
// A scalar read from above that is not a constant has no kernel argument.
// RUN: not attn-translate --attn-to-ptx --chip=sm_90a -e scalar_above %s -o %t/s.ptx 2>&1 | FileCheck %s --check-prefix=SCALAR-GPU
// SCALAR-GPU: error: 'attn.attention' op reads a value from above that is neither a tensor nor a constant; the GPU kernel takes tensors only

func.func @alibi(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<4xf32>
    %t = arith.addf %s, %slope : f32
    attn.yield %t : f32
  } : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

func.func @out_of_bounds(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x8x16xf32> {
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %h1 = arith.addi %h, %c1 : index
    %h2 = arith.minsi %h1, %c3 : index
    %last = arith.cmpi eq, %i, %c3 : index
    %at = arith.select %last, %h1, %h2 : index
    %slope = tensor.extract %slopes[%at] : tensor<4xf32>
    %t = arith.addf %s, %slope : f32
    attn.yield %t : f32
  } : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

func.func @ctlz(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %ji = arith.index_cast %j : index to i32
    %z = math.ctlz %ji : i32
    %c28 = arith.constant 28 : i32
    %keep = arith.cmpi sle, %z, %c28 : i32
    attn.yield %keep : i1
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

func.func @scalar(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %bias: f32) -> tensor<1x1x8x16xf32> {
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.addf %s, %bias : f32
    attn.yield %t : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

func.func @scalar_above(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x1x8x16xf32>, %t: tensor<1xf32>) -> tensor<1x1x8x16xf32> {
  %c0 = arith.constant 0 : index
  %x = tensor.extract %t[%c0] : tensor<1xf32>
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %y = arith.addf %s, %x : f32
    attn.yield %y : f32
  } : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

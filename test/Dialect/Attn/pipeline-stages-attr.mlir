// RUN: attn-opt %s --attn-pipeline="phase=expand" --split-input-file --verify-diagnostics

// The expansion takes attn.pipeline_stages from 2 to the #attn.config bound
// (16): 0 and negative counts made scf::pipelineForLoop run out of memory.

func.func @zero_stages(%src: memref<?x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloca() : memref<2x8x32xf16>
  // expected-error @below {{'scf.for' op needs attn.pipeline_stages 2 to 16, got 0}}
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.subview %src[%i, 0] [8, 32] [1, 1] {attn.pipeline_stage = 0 : i64} : memref<?x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
    %t = memref.subview %buf[0, 0, 0] [1, 8, 32] [1, 1, 1] {attn.pipeline_stage = -1 : i64} : memref<2x8x32xf16> to memref<8x32xf16, strided<[32, 1]>>
    linalg.copy {attn.pipeline_stage = -1 : i64} ins(%s : memref<8x32xf16, strided<[32, 1], offset: ?>>) outs(%t : memref<8x32xf16, strided<[32, 1]>>)
  } {attn.pipeline_stages = 0 : i64}
  return
}

// -----

func.func @one_stage(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op needs attn.pipeline_stages 2 to 16, got 1}}
  scf.for %i = %c0 to %n step %c1 {
  } {attn.pipeline_stages = 1 : i64}
  return
}

// -----

func.func @too_many_stages(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'scf.for' op needs attn.pipeline_stages 2 to 16, got 2147483648}}
  scf.for %i = %c0 to %n step %c1 {
  } {attn.pipeline_stages = 2147483648 : i64}
  return
}

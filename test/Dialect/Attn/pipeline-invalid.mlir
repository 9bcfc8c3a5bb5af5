// RUN: attn-opt %s --attn-pipeline="phase=expand" --split-input-file --verify-diagnostics
// RUN: not attn-opt %s --attn-pipeline="phase=sometimes" 2>&1 | FileCheck %s --check-prefix=PHASE

// PHASE: error: --attn-pipeline: phase must be 'all', 'schedule' or 'expand', got 'sometimes'

func.func @missing_stage(%src: memref<?x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloca() : memref<2x8x32xf16>
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.subview %src[%i, 0] [8, 32] [1, 1] {attn.pipeline_stage = 0 : i64} : memref<?x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
    // expected-error @below {{'memref.subview' op in a pipelined loop needs attn.pipeline_stage 0 or 1}}
    %t = memref.subview %buf[0, 0, 0] [1, 8, 32] [1, 1, 1] : memref<2x8x32xf16> to memref<8x32xf16, strided<[32, 1]>>
    linalg.copy {attn.pipeline_stage = 0 : i64} ins(%s : memref<8x32xf16, strided<[32, 1], offset: ?>>) outs(%t : memref<8x32xf16, strided<[32, 1]>>)
  } {attn.pipeline_stages = 2 : i64}
  return
}

// -----

func.func @stage_out_of_range(%src: memref<?x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloca() : memref<2x8x32xf16>
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{'memref.subview' op in a pipelined loop needs attn.pipeline_stage 0 or 1}}
    %s = memref.subview %src[%i, 0] [8, 32] [1, 1] {attn.pipeline_stage = 2 : i64} : memref<?x32xf16> to memref<8x32xf16, strided<[32, 1], offset: ?>>
  } {attn.pipeline_stages = 2 : i64}
  return
}

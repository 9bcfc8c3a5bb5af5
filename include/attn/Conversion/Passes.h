//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Conversion/AttnToNVVM/Options.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;

namespace attn {

#define GEN_PASS_DECL_CONVERTATTNTOLLVMCPU
#include "attn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

/// The upstream passes that lower bufferized block-level IR to the LLVM
/// dialect on the host, in order; `--convert-attn-to-llvm-cpu` runs them.
void buildHostLoweringPassPipeline(OpPassManager &pm);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_PASSES_H

//===- Pipelines.cpp - named attn-mlir pass pipelines -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::attn::buildAttnToLLVMCPUPipeline(
    OpPassManager &pm, const AttnToLLVMCPUOptions &options) {
  AttnTileOptions tileOptions;
  tileOptions.target = "cpu";
  tileOptions.blockM = options.blockM;
  tileOptions.blockN = options.blockN;
  pm.addNestedPass<func::FuncOp>(createAttnTile(tileOptions));
  pm.addNestedPass<func::FuncOp>(createAttnOnlineSoftmax());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Tensors at the function boundary become buffers with identity layouts.
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));

  pm.addPass(createConvertAttnToLLVMCPU());
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnToLLVMCPUOptions>(
      "attn-to-llvm-cpu",
      "attn.attention to LLVM for the host: tile, online softmax, "
      "bufferize, lower (the IR attn-run --target=cpu executes)",
      buildAttnToLLVMCPUPipeline);
}

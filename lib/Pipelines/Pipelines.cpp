//===- Pipelines.cpp - named attn-mlir pass pipelines -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

/// Tensors at the function boundary become buffers with identity layouts.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferizeOptions;
  bufferizeOptions.bufferizeFunctionBoundaries = true;
  bufferizeOptions.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferizeOptions));
}

void mlir::attn::buildAttnToLLVMCPUPipeline(
    OpPassManager &pm, const AttnToLLVMCPUOptions &options) {
  AttnTileOptions tileOptions;
  tileOptions.target = "cpu";
  tileOptions.blockM = options.blockM;
  tileOptions.blockN = options.blockN;
  tileOptions.numStages = options.numStages;
  tileOptions.splitPrograms = options.splitPrograms;
  pm.addNestedPass<func::FuncOp>(createAttnTile(tileOptions));
  if (options.maskBlockMap)
    pm.addNestedPass<func::FuncOp>(createAttnMaskBlockMap());
  pm.addNestedPass<func::FuncOp>(createAttnOnlineSoftmax());
  AttnPipelineOptions pipelineOptions;
  pipelineOptions.scoresAhead = options.scoresAhead;
  pm.addNestedPass<func::FuncOp>(createAttnPipeline(pipelineOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  addBufferization(pm);

  pm.addPass(createConvertAttnToLLVMCPU());
}

void mlir::attn::buildAttnToGPUKernelsPipeline(
    OpPassManager &pm, const AttnToNVVMOptions &options) {
  AttnTileOptions tileOptions;
  tileOptions.target = options.chip;
  tileOptions.blockM = options.blockM;
  tileOptions.blockN = options.blockN;
  tileOptions.numWarps = options.numWarps;
  tileOptions.numStages = options.numStages;
  tileOptions.splitPrograms = options.splitPrograms;
  pm.addNestedPass<func::FuncOp>(createAttnTile(tileOptions));
  if (options.maskBlockMap)
    pm.addNestedPass<func::FuncOp>(createAttnMaskBlockMap());
  pm.addNestedPass<func::FuncOp>(createAttnOnlineSoftmax());
  AttnPipelineOptions pipelineOptions;
  pipelineOptions.scoresAhead = options.scoresAhead;
  pm.addNestedPass<func::FuncOp>(createAttnPipeline(pipelineOptions));
  // CSE only: the canonicalizer would fold unit dims out of the program
  // grid, and the kernel's block coordinates come from its three dims.
  pm.addPass(createCSEPass());
  addBufferization(pm);
  pm.addPass(createConvertAttnToNVVM(options.convert));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

LogicalResult
mlir::attn::AttnToNVVMOptions::parseFromString(StringRef text,
                                               raw_ostream &errorStream) {
  // Items are `key[=value]`, split at spaces outside quotes and braces.
  std::string own, rest;
  char quote = 0;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ' ';
    if (quote) {
      quote = c == quote ? 0 : quote;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '{')
      ++depth;
    else if (c == '}')
      --depth;
    if (c != ' ' || depth > 0)
      continue;
    StringRef item = text.slice(start, i).trim();
    start = i + 1;
    if (item.empty())
      continue;
    // The pipeline's own options, by name; the rest are the conversion's.
    bool isOwn = OptionsMap.count(item.split('=').first.trim());
    (isOwn ? own : rest).append((item + " ").str());
  }
  if (failed(mlir::detail::PassOptions::parseFromString(own, errorStream)))
    return failure();
  return parseConvertAttnToNVVMOptions(
      rest, convert, [&](const Twine &error) { errorStream << error << "\n"; });
}

void mlir::attn::useShortSharedPointers() {
  // The NVPTX backend reads this flag when it creates its target machine
  // (gpu-module-to-binary does so per serialization). It has no per-module
  // form, so it is set process-wide; it only affects PTX generation.
  auto &registered = llvm::cl::getRegisteredOptions();
  auto it = registered.find("nvptx-short-ptr");
  if (it != registered.end())
    static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
}

void mlir::attn::buildAttnToNVVMPipeline(OpPassManager &pm,
                                         const AttnToNVVMOptions &options) {
  useShortSharedPointers();
  buildAttnToGPUKernelsPipeline(pm, options);
  gpu::GPUToNVVMPipelineOptions nvvmOptions;
  nvvmOptions.cubinChip = options.chip;
  nvvmOptions.cubinFeatures = options.features;
  // PTX 8.0 (the default) is older than sm_100 and newer need, on which
  // LLVM aborts: there the chip's minimum, as attn-translate picks it.
  if (options.features == kDefaultPTXFeatures &&
      parseCudaChip(options.chip).value_or(0) >= 100)
    nvvmOptions.cubinFeatures = "";
  nvvmOptions.cubinFormat = options.format;
  nvvmOptions.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvmOptions);
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnToNVVMOptions>(
      "attn-to-gpu-kernels",
      "attn.attention to GPU kernels on threads and warps (gpu/nvgpu), "
      "before MLIR's NVVM lowering; also takes --convert-attn-to-nvvm's "
      "options",
      buildAttnToGPUKernelsPipeline);
  PassPipelineRegistration<AttnToNVVMOptions>(
      "attn-to-nvvm",
      "attn.attention to NVVM and PTX: tile for the chip, online softmax, "
      "bufferize, map onto warps with tensor cores, lower to NVVM, serialize "
      "(gpu.binary); also takes --convert-attn-to-nvvm's options",
      buildAttnToNVVMPipeline);
  PassPipelineRegistration<AttnToLLVMCPUOptions>(
      "attn-to-llvm-cpu",
      "attn.attention to LLVM for the host: tile, online softmax, "
      "bufferize, lower (the IR attn-run --target=cpu executes)",
      buildAttnToLLVMCPUPipeline);
}

//===- KernelConfig.cpp - choose block sizes, warps and stages --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Defaults {
  int64_t blockM, blockN, numWarps, numStages;
};
} // namespace

/// Defaults per target. The GPU numbers follow FlashAttention-2's forward
/// kernel (128-row query blocks for 16-bit types up to head dim 128; halved
/// blocks where f32 tiles or D = 256 would not fit shared memory and
/// registers). The CPU numbers keep every block buffer small enough for the
/// stack of one program and make tails cheap.
static Defaults getDefaults(Type elementType, int64_t headDim,
                            int64_t valueHeadDim, StringRef target) {
  if (target == "cpu")
    return {32, 32, 1, 1};
  int64_t maxDim = std::max(headDim, valueHeadDim);
  bool wide = elementType.isF32();
  if (maxDim > 128)
    return {64, 32, 4, 2};
  if (wide)
    return {64, 32, 4, 2};
  if (maxDim > 64)
    return {128, 64, 8, 2};
  return {128, 64, 4, 3};
}

KernelConfigAttr
mlir::attn::selectKernelConfig(MLIRContext *context, Type elementType,
                               int64_t headDim, int64_t valueHeadDim,
                               StringRef target,
                               const KernelConfigOverrides &overrides) {
  Defaults d = getDefaults(elementType, headDim, valueHeadDim, target);
  auto pick = [](int64_t override, int64_t fallback) {
    return override > 0 ? override : fallback;
  };
  return KernelConfigAttr::get(
      context, pick(overrides.blockM, d.blockM),
      pick(overrides.blockN, d.blockN), pick(overrides.numWarps, d.numWarps),
      pick(overrides.numStages, d.numStages), target);
}

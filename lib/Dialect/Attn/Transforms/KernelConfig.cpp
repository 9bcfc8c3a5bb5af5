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

/// Defaults per target. On GPUs each warp owns 16 query rows (one m16 tile
/// of mma.sync): 4 warps and 64 rows (at head dim 128, 64 rows and 4 warps
/// ran 10-25% faster than 128 rows and 8 warps on the H200: two blocks fit
/// an SM; bench/results/2026-11-30-h200-quick-perf-v3.log); key blocks of
/// 64, 32 where f32 tiles or D = 256 would crowd shared memory and
/// registers, 16 for f32 with D > 128. These keep every kernel of the CI matrix
/// free of spills (test/Target/PTX/ptxas-matrix.test). The CPU numbers keep
/// every block buffer small enough for the stack of one program and make tails
/// cheap.
static Defaults getDefaults(Type elementType, int64_t headDim,
                            int64_t valueHeadDim, StringRef target) {
  if (target == "cpu")
    return {32, 32, 1, 1};
  int64_t maxDim = std::max(headDim, valueHeadDim);
  bool wide = elementType.isF32();
  // Two K/V stages (cp.async one block ahead) for 16-bit types; one for
  // f32, where the masked seed kernel measured 9% slower with two
  // (bench/results/2026-11-30-h200-quick-perf-v5.log).
  if (maxDim > 128)
    return {64, wide ? 16 : 32, 4, wide ? 1 : 2};
  if (wide)
    return {64, 32, 4, 1};
  return {64, 64, 4, 2};
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
  return KernelConfigAttr::get(context, pick(overrides.blockM, d.blockM),
                               pick(overrides.blockN, d.blockN),
                               pick(overrides.numWarps, d.numWarps),
                               pick(overrides.numStages, d.numStages), target);
}

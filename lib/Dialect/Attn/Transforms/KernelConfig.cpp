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

/// Defaults per target, from the H200 sweeps of bench/config_sweep.py
/// (docs/GPU.md, Kernel configs, has the numbers):
///  - 16-bit types on sm_90a at head dims 64 and 128: 64x64, one warpgroup
///    of 16-row warps, two stages, both products on wgmma (below).
///  - Other 16-bit kernels: 4 warps of 32 query rows each (two m16 tiles
///    per warp share every K/V fragment they load, halving shared-memory
///    reads per FLOP), key blocks of 64 at head dim <= 64 and 32 above:
///    128x64 at D = 64, 128x32 at D = 128. Three K/V stages (--attn-pipeline:
///    cp.async two blocks ahead): they hide more of the loads' latency at
///    D = 128, and at D = 64 the two-stage full kernel spills. Below D = 64
///    two stages (tiles of short rows; three spill at D = 16).
///  - f32 (tf32): 4 warps of 16 rows, key blocks of 32 (16 above head dim
///    128), two stages at D <= 128 (one with precision = ieee); f32 fragments
///    take twice the registers. One stage copies K/V through registers at the
///    loop head, where the stores wait for their loads with nothing else to
///    do.
///  - D > 128: 64-row programs, key blocks of 32 (16-bit) or 16 (f32).
/// These keep every kernel of the CI matrix free of spills
/// (test/Target/PTX/ptxas-matrix.test). The CPU numbers keep every block
/// buffer small enough for the stack of one program and make tails cheap.
static Defaults getDefaults(Type elementType, int64_t headDim,
                            int64_t valueHeadDim, bool hasMask, bool ieee,
                            StringRef target) {
  if (target == "cpu")
    return {32, 32, 1, 1};
  int64_t maxDim = std::max(headDim, valueHeadDim);
  bool wide = elementType.isF32();
  // Exact f32 (precision = ieee) keeps one stage: its three-pass products
  // take the registers a second stage's addresses need (8 bytes spilled at
  // head dim 128 with two).
  int64_t wideStages = ieee ? 1 : 2;
  // 16-bit on sm_90a at head dims 64 and 128 (rows of whole 128-byte
  // atoms), with or without a mask tensor: 64x64, 4 warps of 16 rows, two
  // stages, both products on wgmma, which reads K and V from shared memory
  // once per warpgroup instead of once per warp (docs/GPU.md, Kernel
  // configs).
  if (!wide && target == "sm_90a" && (headDim == 64 || headDim == 128) &&
      (valueHeadDim == 64 || valueHeadDim == 128))
    return {64, 64, 4, 2};
  if (hasMask) {
    // The mask tensor's bias takes registers of its own. f32 at D <= 128:
    // 64x32, two stages, as without a mask: the pipelined loop runs over the
    // live range of the block map (--attn-online-softmax), so the blocks a
    // causal mask tensor removes are not loaded. At D > 128 64x16 fits
    // without spills with two stages for 16-bit and one for f32 (two spill
    // 16 bytes with a window and softcap).
    if (wide && maxDim <= 128)
      return {64, 32, 4, wideStages};
    if (maxDim > 128)
      return {64, 16, 4, wide ? 1 : 2};
    // 16-bit: 64x64 at D <= 64; at D <= 128 128x32 with three stages, as
    // without a mask: with the block map 128-row programs pay, and three
    // stages are spill-free with bottom_right causal, where two spill 20
    // bytes. At D = 64 128x32 loses more at short sequences than it gains
    // at long ones (docs/GPU.md, Kernel configs).
    // A padded head dim (not a multiple of 16) takes 64x64 too: with the
    // copies' column bounds, 128x32 spilled 8 bytes at D = 72, Dv = 120
    // (ptxas matrix).
    if (maxDim <= 64 || headDim % 16 != 0 || valueHeadDim % 16 != 0)
      return {64, 64, 4, 2};
    return {128, 32, 4, 3};
  }
  if (maxDim > 128)
    return {64, wide ? 16 : 32, 4, wide ? 1 : 2};
  if (wide)
    return {64, 32, 4, wideStages};
  return {128, maxDim <= 64 ? 64 : 32, 4, maxDim < 64 ? 2 : 3};
}

KernelConfigAttr mlir::attn::selectKernelConfig(
    function_ref<InFlightDiagnostic()> emitError, MLIRContext *context,
    Type elementType, int64_t headDim, int64_t valueHeadDim, bool hasMask,
    bool ieee, StringRef target, const KernelConfigOverrides &overrides) {
  Defaults d =
      getDefaults(elementType, headDim, valueHeadDim, hasMask, ieee, target);
  auto pick = [](int64_t override, int64_t fallback) {
    return override > 0 ? override : fallback;
  };
  return KernelConfigAttr::getChecked(
      emitError, context, pick(overrides.blockM, d.blockM),
      pick(overrides.blockN, d.blockN), pick(overrides.numWarps, d.numWarps),
      pick(overrides.numStages, d.numStages), target);
}

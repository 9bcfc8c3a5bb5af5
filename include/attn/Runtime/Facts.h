//===- Facts.h - Facts shared with the Python package -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// python/attn_mlir/facts.json, embedded at build time: the CUDA chips the
// compiler knows, the peak FLOP/s table, the explain thresholds
// (docs/Explain.md), the benchmark's warm-up, the tensor map cache's size and
// cuda.h values, which the Python package reads from the same file.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_FACTS_H
#define ATTN_RUNTIME_FACTS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Dense peak TFLOP/s of devices of one compute capability whose name
/// contains `deviceNameContains`.
struct PeakEntry {
  std::string name;
  int major = 0, minor = 0;
  std::string deviceNameContains;
  double f16 = 0.0, tf32 = 0.0, f32 = 0.0; // f32: FMA units
};

struct Facts {
  std::vector<PeakEntry> peaks; // the first that applies wins
  int64_t lowOccupancyBlocks = 0, lowOccupancyWarps = 0;
  int64_t coalescedAlignmentBytes = 0, shortProgramKeys = 0;
  double sharedBytesPerCycle = 0.0, programCostKeys = 0.0;
  double benchWarmupMs = 0.0;
  size_t tensorMapCacheCapacity = 0;
  /// By name, e.g. "CU_FUNC_ATTRIBUTE_NUM_REGS".
  std::map<std::string, int64_t> cuda;
};

/// Parsed once.
const Facts &getFacts();

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_FACTS_H

//===- Facts.h - Facts shared with the Python package -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The facts python/attn_mlir/facts.json holds for the C++ runtime and the
// Python package alike: the CUDA chips the compiler knows, the peak FLOP/s
// table, the explain report's thresholds (docs/Explain.md), the benchmark's
// warm-up, the tensor map cache's size and the cuda.h enum values the
// Python package passes. The file is embedded at build time
// (lib/Runtime/CMakeLists.txt), so a change is made once, in the file.
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

/// Dense peak TFLOP/s of one chip: the entry applies to devices of its
/// compute capability whose name contains `deviceNameContains`.
struct PeakEntry {
  std::string name;
  int major = 0, minor = 0;
  std::string deviceNameContains;
  /// f16/bf16 and tf32 tensor cores, fp32 FMA units.
  double f16 = 0.0, tf32 = 0.0, f32 = 0.0;
};

struct Facts {
  std::vector<std::string> knownCudaChips;
  /// Tried in order; the first that applies wins.
  std::vector<PeakEntry> peaks;
  /// The explain report's thresholds (Explain.h).
  int64_t lowOccupancyBlocks = 0, lowOccupancyWarps = 0;
  int64_t coalescedAlignmentBytes = 0, shortProgramKeys = 0;
  double sharedBytesPerCycle = 0.0, programCostKeys = 0.0;
  /// GPU time the benchmark's untimed launches take at least.
  double benchWarmupMs = 0.0;
  /// Device copies of tensor maps a kernel keeps (TensorMapCache).
  size_t tensorMapCacheCapacity = 0;
  /// cuda.h enum values by name, e.g. "CU_FUNC_ATTRIBUTE_NUM_REGS".
  std::map<std::string, int64_t> cuda;
};

/// The facts, parsed once from the embedded file.
const Facts &getFacts();

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_FACTS_H

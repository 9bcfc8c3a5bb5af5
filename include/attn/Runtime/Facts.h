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

#include <algorithm>
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

/// The bytes of the vectors the kernels move rows of `rowBytes` bytes in
/// (query, key, value, output: a head dim's row): 16, or the largest power
/// of two dividing `rowBytes` where a row is not whole 16-byte vectors. The
/// compiler's copies use it and the runtimes check the operands' start and
/// strides against it (docs/Manifest.md; python/attn_mlir/runtime.py's
/// row_vector_bytes is the same).
inline int64_t getRowVectorBytes(int64_t rowBytes) {
  return rowBytes > 0 ? std::min<int64_t>(16, rowBytes & -rowBytes) : 16;
}

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_FACTS_H

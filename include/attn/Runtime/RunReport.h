//===- RunReport.h - attn-run's check, bench and JSON reports ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What attn-run prints, as text or as one JSON object:
//
//   attn-run: f on cuda: q=1x2x17x64xf16 k=... v=... -> o=1x2x17x64xf16
//                                        [lse=1x2x17xf32]
//   bench: median_ms=... tflops=... floor_ms=...        (--bench)
//   explain: key=value ... explain: causes=...          (--explain, Explain.h)
//   check: sampled 1000 of N rows                       (--check, large N)
//   check: PASS rel_l2=... max_abs=... [lse_max_abs=... lse_max_err=...]
//                                                        (--check, always last)
//
// --bench reports the median of the timed runs and the roofline floor of
// Explain.h. MLIR-free, so that the runner-only attn-run prints what the
// full one prints. The JSON is one line, keys sorted, integral numbers as
// integers, others in the shortest form that reads back, non-finite as null.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_RUNREPORT_H
#define ATTN_RUNTIME_RUNREPORT_H

#include "attn/Runtime/Explain.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Reference.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Problems with at most this many rows (B*Hq*Tq) are checked in full.
constexpr int64_t kCheckAllRowsLimit = 4096;
/// Rows checked in larger problems.
constexpr int64_t kCheckSampledRows = 1000;

/// The seed of the random data of input `index`: each input different, the
/// same for the same command line.
uint64_t deriveInputSeed(uint64_t seed, unsigned index);

/// The outcome of --check.
struct CheckReport {
  CheckResult result;
  Tolerance tolerance = {0.0, 0.0};
  int64_t totalRows = 0;
  bool sampled = false;
};

/// Compares `output`, and `lse` when given (the log-sum-exp result, f32
/// B x Hq x Tq), with the float64 reference (all rows, or kCheckSampledRows
/// rows chosen from `seed`).
CheckReport checkOutput(const AttentionProblem &problem,
                        const HostTensor &output, bool tf32, uint64_t seed,
                        const HostTensor *lse = nullptr);

/// What the roofline floor of --bench assumes about the device.
struct DeviceInfo {
  std::string description; // one line, with the peak rates
  double peakFlops = 0.0, bytesPerSecond = 0.0;
};

/// The outcome of --bench.
struct BenchReport {
  unsigned iterations = 0;
  double medianMs = 0.0, minMs = 0.0, flops = 0.0, bytes = 0.0, tflops = 0.0;
  double flopFloorMs = 0.0, memoryFloorMs = 0.0, floorMs = 0.0;
  DeviceInfo device;
};

/// The median (mean of the middle two for an even count); 0 when empty.
double getMedian(std::vector<double> values);

/// Summarizes the times (ms) of the timed runs; the bytes count the
/// log-sum-exp result `lse` too when given.
BenchReport summarizeBench(const std::vector<double> &timesMs,
                           const AttentionProblem &problem,
                           const HostTensor &output, const DeviceInfo &device,
                           const HostTensor *lse = nullptr);

/// The outcome of --explain: the facts and the report computed from them.
struct ExplainResult {
  ExplainFacts facts;
  ExplainReport report;
};

/// Everything one run reports.
struct RunSummary {
  std::string function, target;
  /// Per input: label ("q", "k", "q/k/v", ...), shape, type and source
  /// ("random" or the .npy path).
  struct Argument {
    std::string label;
    std::vector<int64_t> shape;
    ElementType type;
    std::string source;
  };
  std::vector<Argument> arguments;
  std::vector<int64_t> resultShape;
  ElementType resultType = ElementType::F32;
  /// The shape of the log-sum-exp result (f32 B x Hq x Tq); empty when the
  /// function or kernel has none.
  std::vector<int64_t> lseShape;
  double scale = 1.0;
  CausalMode causal = CausalMode::None;
  bool tf32 = false;
  /// The .npy files written, one per result in result order (--output), if
  /// any.
  std::vector<std::string> outputPaths;
  std::optional<CheckReport> check;
  std::optional<BenchReport> bench;
  std::optional<ExplainResult> explain;
};

/// "attn-run: f on cpu: q=... k=... v=... -> o=..."
std::string formatHeaderLine(const RunSummary &summary);
/// The lines after the header, each ending in '\n': the bench line
/// ("bench: median_ms=... tflops=... floor_ms=..."), the explain lines, then
/// the sample line ("check: sampled 1000 of N rows") and the check line
/// (last).
std::string formatResultLines(const RunSummary &summary);
/// The summary as one JSON object on one line (non-finite numbers as null).
std::string formatJson(const RunSummary &summary);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_RUNREPORT_H

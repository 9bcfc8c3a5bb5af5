//===- Report.h - attn-run's check, bench and JSON reports ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What attn-run prints, as text or as one JSON object:
//
//   attn-run: f on cpu: q=1x2x17x64xf16 k=... v=... -> o=1x2x17x64xf16
//   bench: median_ms=... tflops=... floor_ms=...        (--bench)
//   check: sampled 1000 of N rows                       (--check, large N)
//   check: PASS rel_l2=... max_abs=...                  (--check, always last)
//
// --check compares every row with the float64 reference when
// B*Hq*Tq <= 4096, else 1000 rows chosen by selectCheckRows from --seed.
//
// --bench reports the median of the timed runs. FLOPs are counted as
// FlashAttention does, 2*B*Hq*Tq*Tk*(D+Dv), halved for causal masking when
// Tq == Tk; bytes are Q, K, V, the mask and O, each moved once. floor_ms is
// the larger of FLOPs / peak flops and bytes / bandwidth of the device
// (DeviceInfo; for the CPU see CPUBackend.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_REPORT_H
#define ATTN_RUNNER_REPORT_H

#include "attn/Runner/Backend.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Reference.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
namespace runner {

/// Problems with at most this many rows (B*Hq*Tq) are checked in full.
constexpr int64_t kCheckAllRowsLimit = 4096;
/// Rows checked in larger problems.
constexpr int64_t kCheckSampledRows = 1000;

/// The outcome of --check.
struct CheckReport {
  ::attn::runtime::CheckResult result;
  ::attn::runtime::Tolerance tolerance = {0.0, 0.0};
  int64_t totalRows = 0;
  bool sampled = false;
};

/// Compares `output` with the float64 reference of `problem`.
CheckReport checkOutput(const ::attn::runtime::AttentionProblem &problem,
                        const ::attn::runtime::HostTensor &output, bool tf32,
                        uint64_t seed);

/// The outcome of --bench.
struct BenchReport {
  unsigned iterations = 0;
  double medianMs = 0.0;
  double minMs = 0.0;
  double flops = 0.0;
  double bytes = 0.0;
  double tflops = 0.0;
  double flopFloorMs = 0.0;
  double memoryFloorMs = 0.0;
  double floorMs = 0.0;
  DeviceInfo device;
};

/// FLOPs of one forward pass (see the file comment).
double countFlops(const ::attn::runtime::AttentionProblem &problem);

/// Bytes of Q, K, V, the mask and the output.
double countBytes(const ::attn::runtime::AttentionProblem &problem,
                  const ::attn::runtime::HostTensor &output);

/// Summarizes the wall times (ms) of the timed runs.
BenchReport summarizeBench(std::vector<double> timesMs,
                           const ::attn::runtime::AttentionProblem &problem,
                           const ::attn::runtime::HostTensor &output,
                           const DeviceInfo &device);

/// Everything one run reports.
struct RunSummary {
  std::string function;
  std::string target;
  /// Per argument: its label ("q", "k", ...), shape, type and source.
  struct Argument {
    std::string label;
    std::vector<int64_t> shape;
    ::attn::runtime::ElementType type;
    std::string source;
  };
  std::vector<Argument> arguments;
  std::vector<int64_t> resultShape;
  ::attn::runtime::ElementType resultType = ::attn::runtime::ElementType::F32;
  double scale = 1.0;
  ::attn::runtime::CausalKind causal = ::attn::runtime::CausalKind::None;
  bool tf32 = false;
  /// The .npy file written, if any.
  std::string outputPath;
  std::optional<CheckReport> check;
  std::optional<BenchReport> bench;
};

/// "attn-run: f on cpu: q=... k=... v=... -> o=..."
std::string formatHeaderLine(const RunSummary &summary);
/// "bench: median_ms=... tflops=... floor_ms=..."
std::string formatBenchLine(const BenchReport &report);
/// "check: sampled 1000 of N rows"
std::string formatSampleLine(const CheckReport &report);
/// The summary as one JSON object on one line (non-finite numbers as null).
std::string formatJson(const RunSummary &summary);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_REPORT_H

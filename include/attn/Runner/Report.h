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
// A function that returns the log-sum-exp too (SPEC.md section 1.2) shows
// it in the header (`lse=1x2x17xf32`) and the check line
// (`lse_max_abs=... lse_max_err=...`), and its rows are checked with the
// output's.
//
// --bench reports the median of the timed runs. FLOPs are counted as
// FlashAttention does, 2*B*Hq*Tq*Tk*(D+Dv), halved for causal masking when
// Tq == Tk; bytes are Q, K, V, the mask and O, each moved once. floor_ms is
// the larger of FLOPs / peak flops and bytes / bandwidth of the device
// (DeviceInfo; for the CPU see CPUBackend.cpp).
//
// The implementation is MLIR-free and shared with the runner-only attn-run:
// attn/Runtime/RunReport.h. This header makes it part of the runner's
// namespace.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_REPORT_H
#define ATTN_RUNNER_REPORT_H

#include "attn/Runner/Backend.h"
#include "attn/Runtime/RunReport.h"

namespace mlir {
namespace attn {
namespace runner {

using ::attn::runtime::kCheckAllRowsLimit;
using ::attn::runtime::kCheckSampledRows;

using ::attn::runtime::BenchReport;
using ::attn::runtime::CheckReport;
using ::attn::runtime::RunSummary;

using ::attn::runtime::checkOutput;
using ::attn::runtime::formatHeaderLine;
using ::attn::runtime::formatJson;
using ::attn::runtime::summarizeBench;

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_REPORT_H

//===- Report.cpp - attn-run's check, bench and JSON reports --------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Report.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

using namespace mlir;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

//===----------------------------------------------------------------------===//
// Check
//===----------------------------------------------------------------------===//

CheckReport mlir::attn::runner::checkOutput(const rt::AttentionProblem &problem,
                                            const rt::HostTensor &output,
                                            bool tf32, uint64_t seed) {
  CheckReport report;
  report.totalRows = rt::getNumRows(problem);
  std::vector<int64_t> rows;
  if (report.totalRows <= kCheckAllRowsLimit) {
    rows.resize(report.totalRows);
    std::iota(rows.begin(), rows.end(), 0);
  } else {
    rows = rt::selectCheckRows(report.totalRows, kCheckSampledRows, seed);
    report.sampled = true;
  }
  std::vector<double> reference;
  rt::referenceRows(problem, rows, reference);
  report.tolerance = rt::getTolerance(output.type, tf32);
  report.result = rt::compareRows(output, rows, reference,
                                  problem.value->shape[3], report.tolerance);
  return report;
}

//===----------------------------------------------------------------------===//
// Bench
//===----------------------------------------------------------------------===//

double mlir::attn::runner::countFlops(const rt::AttentionProblem &problem) {
  const std::vector<int64_t> &q = problem.query->shape;
  double tk = static_cast<double>(problem.key->shape[2]);
  double d = static_cast<double>(q[3]);
  double dv = static_cast<double>(problem.value->shape[3]);
  double flops = 2.0 * q[0] * q[1] * q[2] * tk * (d + dv);
  if (problem.causal != rt::CausalKind::None && q[2] == problem.key->shape[2])
    flops /= 2.0;
  return flops;
}

double mlir::attn::runner::countBytes(const rt::AttentionProblem &problem,
                                      const rt::HostTensor &output) {
  double bytes = static_cast<double>(problem.query->getNumBytes()) +
                 problem.key->getNumBytes() + problem.value->getNumBytes() +
                 output.getNumBytes();
  if (problem.mask)
    bytes += problem.mask->getNumBytes();
  return bytes;
}

BenchReport mlir::attn::runner::summarizeBench(
    std::vector<double> timesMs, const rt::AttentionProblem &problem,
    const rt::HostTensor &output, const DeviceInfo &device) {
  BenchReport report;
  report.iterations = timesMs.size();
  report.device = device;
  if (!timesMs.empty()) {
    std::sort(timesMs.begin(), timesMs.end());
    size_t n = timesMs.size();
    report.medianMs =
        n % 2 ? timesMs[n / 2] : 0.5 * (timesMs[n / 2 - 1] + timesMs[n / 2]);
    report.minMs = timesMs.front();
  }
  report.flops = countFlops(problem);
  report.bytes = countBytes(problem, output);
  report.tflops = report.medianMs > 0.0
                      ? report.flops / (report.medianMs * 1e-3) / 1e12
                      : 0.0;
  if (device.peakFlops > 0.0)
    report.flopFloorMs = report.flops / device.peakFlops * 1e3;
  if (device.bytesPerSecond > 0.0)
    report.memoryFloorMs = report.bytes / device.bytesPerSecond * 1e3;
  report.floorMs = std::max(report.flopFloorMs, report.memoryFloorMs);
  return report;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string mlir::attn::runner::formatHeaderLine(const RunSummary &summary) {
  std::string line =
      "attn-run: " + summary.function + " on " + summary.target + ":";
  for (const RunSummary::Argument &argument : summary.arguments)
    line += " " + argument.label + "=" +
            rt::formatShape(argument.shape, argument.type);
  line += " -> o=" + rt::formatShape(summary.resultShape, summary.resultType);
  return line;
}

std::string mlir::attn::runner::formatBenchLine(const BenchReport &report) {
  char line[160];
  std::snprintf(line, sizeof(line),
                "bench: median_ms=%.4g tflops=%.4g floor_ms=%.4g",
                report.medianMs, report.tflops, report.floorMs);
  return line;
}

std::string mlir::attn::runner::formatSampleLine(const CheckReport &report) {
  return "check: sampled " + std::to_string(report.result.checkedRows) +
         " of " + std::to_string(report.totalRows) + " rows";
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// A JSON number, or null when `value` is NaN or infinite.
static llvm::json::Value number(double value) {
  if (std::isfinite(value))
    return value;
  return nullptr;
}

static llvm::json::Array shapeArray(const std::vector<int64_t> &shape) {
  llvm::json::Array array;
  for (int64_t dim : shape)
    array.push_back(dim);
  return array;
}

static const char *getCausalName(rt::CausalKind kind) {
  switch (kind) {
  case rt::CausalKind::None:
    return "none";
  case rt::CausalKind::TopLeft:
    return "top_left";
  case rt::CausalKind::BottomRight:
    return "bottom_right";
  }
  return "none";
}

std::string mlir::attn::runner::formatJson(const RunSummary &summary) {
  llvm::json::Object root;
  root["function"] = summary.function;
  root["target"] = summary.target;
  root["dtype"] = rt::getTypeName(summary.resultType);
  llvm::json::Array inputs;
  for (const RunSummary::Argument &argument : summary.arguments)
    inputs.push_back(
        llvm::json::Object{{"name", argument.label},
                           {"shape", shapeArray(argument.shape)},
                           {"dtype", rt::getTypeName(argument.type)},
                           {"source", argument.source}});
  root["inputs"] = std::move(inputs);
  llvm::json::Object output{{"shape", shapeArray(summary.resultShape)},
                            {"dtype", rt::getTypeName(summary.resultType)}};
  if (!summary.outputPath.empty())
    output["file"] = summary.outputPath;
  root["output"] = std::move(output);
  root["scale"] = number(summary.scale);
  root["causal"] = getCausalName(summary.causal);
  if (summary.resultType == rt::ElementType::F32)
    root["precision"] = summary.tf32 ? "tf32" : "ieee";

  if (summary.check) {
    const CheckReport &check = *summary.check;
    root["check"] = llvm::json::Object{
        {"status", check.result.pass ? "PASS" : "FAIL"},
        {"rel_l2", number(check.result.relL2)},
        {"max_abs", number(check.result.maxAbs)},
        {"rel_l2_tol", number(check.tolerance.relL2)},
        {"max_abs_tol", number(check.tolerance.maxAbs)},
        {"rows_checked", check.result.checkedRows},
        {"rows_total", check.totalRows},
        {"sampled", check.sampled},
        {"nan_mismatches", check.result.nanMismatches},
        {"non_finite_outputs", check.result.nonFiniteOutputs},
        {"reason", check.result.reason}};
  }
  if (summary.bench) {
    const BenchReport &bench = *summary.bench;
    root["bench"] =
        llvm::json::Object{{"median_ms", number(bench.medianMs)},
                           {"min_ms", number(bench.minMs)},
                           {"tflops", number(bench.tflops)},
                           {"floor_ms", number(bench.floorMs)},
                           {"flop_floor_ms", number(bench.flopFloorMs)},
                           {"memory_floor_ms", number(bench.memoryFloorMs)},
                           {"iters", static_cast<int64_t>(bench.iterations)},
                           {"flops", number(bench.flops)},
                           {"bytes", number(bench.bytes)},
                           {"device", bench.device.description}};
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}

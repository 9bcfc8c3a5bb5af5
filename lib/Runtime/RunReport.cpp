//===- RunReport.cpp - attn-run's check, bench and JSON reports -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/RunReport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

using namespace attn::runtime;

uint64_t attn::runtime::deriveInputSeed(uint64_t seed, unsigned index) {
  // Two splitmix64 steps: the first separates seeds, the second inputs.
  SplitMix64 base(seed);
  SplitMix64 mixed(base.next() + 0x9E3779B97F4A7C15ull * (index + 1));
  return mixed.next();
}

//===----------------------------------------------------------------------===//
// Check
//===----------------------------------------------------------------------===//

CheckReport attn::runtime::checkOutput(const AttentionProblem &problem,
                                       const HostTensor &output, bool tf32,
                                       uint64_t seed) {
  CheckReport report;
  report.totalRows = getNumRows(problem);
  std::vector<int64_t> rows;
  if (report.totalRows <= kCheckAllRowsLimit) {
    rows.resize(report.totalRows);
    std::iota(rows.begin(), rows.end(), 0);
  } else {
    rows = selectCheckRows(report.totalRows, kCheckSampledRows, seed);
    report.sampled = true;
  }
  std::vector<double> reference;
  referenceRows(problem, rows, reference);
  report.tolerance = getTolerance(output.type, tf32);
  report.result = compareRows(output, rows, reference, problem.value->shape[3],
                              report.tolerance);
  return report;
}

//===----------------------------------------------------------------------===//
// Bench
//===----------------------------------------------------------------------===//

double attn::runtime::countFlops(const AttentionProblem &problem) {
  const std::vector<int64_t> &q = problem.query->shape;
  double tk = static_cast<double>(problem.key->shape[2]);
  double d = static_cast<double>(q[3]);
  double dv = static_cast<double>(problem.value->shape[3]);
  double flops = 2.0 * q[0] * q[1] * q[2] * tk * (d + dv);
  if (problem.causal != CausalKind::None && q[2] == problem.key->shape[2])
    flops /= 2.0;
  return flops;
}

double attn::runtime::countBytes(const AttentionProblem &problem,
                                 const HostTensor &output) {
  double bytes = static_cast<double>(problem.query->getNumBytes()) +
                 problem.key->getNumBytes() + problem.value->getNumBytes() +
                 output.getNumBytes();
  if (problem.mask)
    bytes += problem.mask->getNumBytes();
  return bytes;
}

BenchReport attn::runtime::summarizeBench(std::vector<double> timesMs,
                                          const AttentionProblem &problem,
                                          const HostTensor &output,
                                          const DeviceInfo &device) {
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

std::string attn::runtime::formatHeaderLine(const RunSummary &summary) {
  std::string line =
      "attn-run: " + summary.function + " on " + summary.target + ":";
  for (const RunSummary::Argument &argument : summary.arguments)
    line +=
        " " + argument.label + "=" + formatShape(argument.shape, argument.type);
  line += " -> o=" + formatShape(summary.resultShape, summary.resultType);
  return line;
}

std::string attn::runtime::formatBenchLine(const BenchReport &report) {
  char line[160];
  std::snprintf(line, sizeof(line),
                "bench: median_ms=%.4g tflops=%.4g floor_ms=%.4g",
                report.medianMs, report.tflops, report.floorMs);
  return line;
}

std::string attn::runtime::formatSampleLine(const CheckReport &report) {
  return "check: sampled " + std::to_string(report.result.checkedRows) +
         " of " + std::to_string(report.totalRows) + " rows";
}

std::string attn::runtime::formatResultLines(const RunSummary &summary) {
  std::string text;
  if (summary.bench)
    text += formatBenchLine(*summary.bench) + "\n";
  if (summary.explain)
    text += formatExplainLines(summary.explain->facts, summary.explain->report);
  if (summary.check) {
    if (summary.check->sampled)
      text += formatSampleLine(*summary.check) + "\n";
    text += formatCheckLine(summary.check->result) + "\n";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {
/// An object under construction: key -> the member's JSON text. The map
/// keeps the keys sorted bytewise, as llvm::json writes them.
using JsonObject = std::map<std::string, std::string>;
} // namespace

/// A number as llvm::json writes a double, or null when not finite.
static std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

static std::string jsonInteger(int64_t value) { return std::to_string(value); }

static std::string jsonBool(bool value) { return value ? "true" : "false"; }

static std::string jsonString(const std::string &value) {
  std::string text = "\"";
  for (char c : value) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      text += '\\';
    if (byte >= 0x20) {
      text += c;
      continue;
    }
    if (c == '\t' || c == '\n' || c == '\r') {
      text += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
      continue;
    }
    char escape[8];
    std::snprintf(escape, sizeof(escape), "\\u%04x", byte);
    text += escape;
  }
  return text + "\"";
}

static std::string jsonObject(const JsonObject &object) {
  std::string text = "{";
  for (const auto &[key, value] : object) {
    if (text.size() > 1)
      text += ",";
    text += jsonString(key) + ":" + value;
  }
  return text + "}";
}

static std::string jsonShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + jsonInteger(shape[i]);
  return text + "]";
}

static const char *getCausalKindName(CausalKind kind) {
  switch (kind) {
  case CausalKind::None:
    return "none";
  case CausalKind::TopLeft:
    return "top_left";
  case CausalKind::BottomRight:
    return "bottom_right";
  }
  return "none";
}

std::string attn::runtime::formatJson(const RunSummary &summary) {
  JsonObject root;
  root["function"] = jsonString(summary.function);
  root["target"] = jsonString(summary.target);
  root["dtype"] = jsonString(getTypeName(summary.resultType));
  std::string inputs = "[";
  for (const RunSummary::Argument &argument : summary.arguments) {
    if (inputs.size() > 1)
      inputs += ",";
    inputs += jsonObject({{"name", jsonString(argument.label)},
                          {"shape", jsonShape(argument.shape)},
                          {"dtype", jsonString(getTypeName(argument.type))},
                          {"source", jsonString(argument.source)}});
  }
  root["inputs"] = inputs + "]";
  JsonObject output{{"shape", jsonShape(summary.resultShape)},
                    {"dtype", jsonString(getTypeName(summary.resultType))}};
  if (!summary.outputPath.empty())
    output["file"] = jsonString(summary.outputPath);
  root["output"] = jsonObject(output);
  root["scale"] = jsonNumber(summary.scale);
  root["causal"] = jsonString(getCausalKindName(summary.causal));
  if (summary.resultType == ElementType::F32)
    root["precision"] = jsonString(summary.tf32 ? "tf32" : "ieee");

  if (summary.check) {
    const CheckReport &check = *summary.check;
    root["check"] = jsonObject(
        {{"status", jsonString(check.result.pass ? "PASS" : "FAIL")},
         {"rel_l2", jsonNumber(check.result.relL2)},
         {"max_abs", jsonNumber(check.result.maxAbs)},
         {"rel_l2_tol", jsonNumber(check.tolerance.relL2)},
         {"max_abs_tol", jsonNumber(check.tolerance.maxAbs)},
         {"rows_checked", jsonInteger(check.result.checkedRows)},
         {"rows_total", jsonInteger(check.totalRows)},
         {"sampled", jsonBool(check.sampled)},
         {"nan_mismatches", jsonInteger(check.result.nanMismatches)},
         {"non_finite_outputs", jsonInteger(check.result.nonFiniteOutputs)},
         {"reason", jsonString(check.result.reason)}});
  }
  if (summary.bench) {
    const BenchReport &bench = *summary.bench;
    root["bench"] =
        jsonObject({{"median_ms", jsonNumber(bench.medianMs)},
                    {"min_ms", jsonNumber(bench.minMs)},
                    {"tflops", jsonNumber(bench.tflops)},
                    {"floor_ms", jsonNumber(bench.floorMs)},
                    {"flop_floor_ms", jsonNumber(bench.flopFloorMs)},
                    {"memory_floor_ms", jsonNumber(bench.memoryFloorMs)},
                    {"iters", jsonInteger(bench.iterations)},
                    {"flops", jsonNumber(bench.flops)},
                    {"bytes", jsonNumber(bench.bytes)},
                    {"device", jsonString(bench.device.description)}});
  }
  if (summary.explain)
    root["explain"] = writeJson(
        explainToJson(summary.explain->facts, summary.explain->report),
        /*indent=*/0);
  return jsonObject(root);
}

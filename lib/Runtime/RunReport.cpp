//===- RunReport.cpp - attn-run's check, bench and JSON reports -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/RunReport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

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
                                       uint64_t seed, const HostTensor *lse) {
  CheckReport report;
  report.totalRows = getNumRows(problem);
  report.sampled = report.totalRows > kCheckAllRowsLimit;
  std::vector<int64_t> rows = selectCheckRows(
      report.totalRows, report.sampled ? kCheckSampledRows : report.totalRows,
      seed);
  std::vector<double> reference, referenceLse;
  referenceRows(problem, rows, reference, lse ? &referenceLse : nullptr);
  report.tolerance = getTolerance(output.type, tf32);
  report.result = compareRows(output, rows, reference, problem.value->shape[3],
                              report.tolerance);
  if (lse)
    compareLseRows(*lse, rows, referenceLse, report.tolerance, report.result);
  return report;
}

//===----------------------------------------------------------------------===//
// Bench
//===----------------------------------------------------------------------===//

double attn::runtime::getMedian(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle]
                           : 0.5 * (values[middle - 1] + values[middle]);
}

BenchReport attn::runtime::summarizeBench(const std::vector<double> &timesMs,
                                          const AttentionProblem &problem,
                                          const HostTensor &output,
                                          const DeviceInfo &device,
                                          const HostTensor *lse) {
  BenchReport report;
  report.iterations = timesMs.size();
  report.device = device;
  report.medianMs = getMedian(timesMs);
  if (!timesMs.empty())
    report.minMs = *std::min_element(timesMs.begin(), timesMs.end());
  // The roofline of Explain.h; the mask moves once, as stored, and so does
  // the LSE.
  const std::vector<int64_t> &q = problem.query->shape, &k = problem.key->shape;
  ProblemSizes sizes = {
      q[0], q[1], k[1], q[2], k[2], q[3], problem.value->shape[3]};
  // A paged cache holds P * page logical keys (the pool's size does not
  // count).
  const HostTensor *table = problem.blockTable;
  int64_t page = k[2], capacity = table ? table->shape[1] * page : k[2];
  sizes.Tk = capacity;
  // The keys the kernel reads: a paged cache's whole pages.
  ProblemSizes read = sizes;
  // Under kv_lengths the kernel reads and multiplies each batch's own keys:
  // count their mean, not the capacity.
  if (const HostTensor *lengths = problem.kvLengths; lengths && q[0] > 0) {
    int64_t keys = 0, pageKeys = 0;
    for (int64_t b = 0; b < q[0]; ++b) {
      int64_t n = std::clamp<int64_t>(lengths->getInteger(b), 0, capacity);
      keys += n;
      pageKeys += table ? (n + page - 1) / page * page : n;
    }
    sizes.Tk = (keys + q[0] / 2) / q[0];
    read.Tk = (pageKeys + q[0] / 2) / q[0];
  }
  report.flops = getAttentionFlops(sizes, problem.causal);
  if (problem.cuSeqlensQ && problem.cuSeqlensK) {
    // Packed sequences: each sequence's own Tq_s x Tk_s.
    report.flops = 0.0;
    const HostTensor &cuQ = *problem.cuSeqlensQ, &cuK = *problem.cuSeqlensK;
    for (int64_t s = 0; s + 1 < cuQ.shape[0]; ++s) {
      ProblemSizes sequence = sizes;
      sequence.Tq = cuQ.getInteger(s + 1) - cuQ.getInteger(s);
      sequence.Tk = cuK.getInteger(s + 1) - cuK.getInteger(s);
      report.flops += getAttentionFlops(sequence, problem.causal);
    }
  }
  report.bytes = getAttentionBytes(table ? read : sizes, output.type) +
                 (problem.mask ? double(problem.mask->getNumBytes()) : 0.0) +
                 (lse ? double(lse->getNumBytes()) : 0.0);
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
  if (!summary.lseShape.empty())
    line += " lse=" + formatShape(summary.lseShape, ElementType::F32);
  return line;
}

std::string attn::runtime::formatResultLines(const RunSummary &summary) {
  std::string text;
  if (const std::optional<BenchReport> &bench = summary.bench)
    text += formatString("bench: median_ms=%.4g tflops=%.4g floor_ms=%.4g\n",
                         bench->medianMs, bench->tflops, bench->floorMs);
  if (summary.explain)
    text += formatExplainLines(summary.explain->facts, summary.explain->report);
  if (summary.check) {
    if (summary.check->sampled)
      text += concat("check: sampled ", summary.check->result.checkedRows,
                     " of ", summary.check->totalRows, " rows\n");
    text += formatCheckLine(summary.check->result) + "\n";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// Integral numbers as integers, as JSON readers expect of counts.
static nlohmann::json number(double value) {
  return value == std::trunc(value) && std::abs(value) < 0x1p53
             ? nlohmann::json(int64_t(value))
             : nlohmann::json(value);
}

std::string attn::runtime::formatJson(const RunSummary &summary) {
  // nlohmann::json keeps its keys sorted.
  nlohmann::json root = {{"function", summary.function},
                         {"target", summary.target},
                         {"dtype", getTypeName(summary.resultType)},
                         {"inputs", nlohmann::json::array()},
                         {"output",
                          {{"shape", summary.resultShape},
                           {"dtype", getTypeName(summary.resultType)}}},
                         {"scale", number(summary.scale)},
                         {"causal", summary.causal == CausalMode::None
                                        ? "none"
                                        : getCausalName(summary.causal)}};
  for (const RunSummary::Argument &argument : summary.arguments)
    root["inputs"].push_back({{"name", argument.label},
                              {"shape", argument.shape},
                              {"dtype", getTypeName(argument.type)},
                              {"source", argument.source}});
  if (!summary.outputPaths.empty())
    root["output"]["file"] = summary.outputPaths[0];
  if (!summary.lseShape.empty()) {
    root["lse"] = {{"shape", summary.lseShape},
                   {"dtype", getTypeName(ElementType::F32)}};
    if (summary.outputPaths.size() > 1)
      root["lse"]["file"] = summary.outputPaths[1];
  }
  if (summary.resultType == ElementType::F32)
    root["precision"] = summary.tf32 ? "tf32" : "ieee";
  if (const std::optional<CheckReport> &check = summary.check)
    root["check"] = {{"status", check->result.pass ? "PASS" : "FAIL"},
                     {"rel_l2", number(check->result.relL2)},
                     {"max_abs", number(check->result.maxAbs)},
                     {"rel_l2_tol", number(check->tolerance.relL2)},
                     {"max_abs_tol", number(check->tolerance.maxAbs)},
                     {"rows_checked", check->result.checkedRows},
                     {"rows_total", check->totalRows},
                     {"sampled", check->sampled},
                     {"nan_mismatches", check->result.nanMismatches},
                     {"non_finite_outputs", check->result.nonFiniteOutputs},
                     {"reason", check->result.reason}};
  if (summary.check && summary.check->result.lse) {
    const LseCheckResult &lse = *summary.check->result.lse;
    root["check"]["lse"] = {{"max_abs", number(lse.maxAbs)},
                            {"max_err", number(lse.maxErr)},
                            {"tol", number(summary.check->tolerance.lse)},
                            {"mismatches", lse.mismatches},
                            {"non_finite_outputs", lse.nonFiniteOutputs}};
  }
  if (const std::optional<BenchReport> &bench = summary.bench)
    root["bench"] = {{"median_ms", number(bench->medianMs)},
                     {"min_ms", number(bench->minMs)},
                     {"tflops", number(bench->tflops)},
                     {"floor_ms", number(bench->floorMs)},
                     {"flop_floor_ms", number(bench->flopFloorMs)},
                     {"memory_floor_ms", number(bench->memoryFloorMs)},
                     {"iters", bench->iterations},
                     {"flops", number(bench->flops)},
                     {"bytes", number(bench->bytes)},
                     {"device", bench->device.description}};
  if (summary.explain)
    root["explain"] = nlohmann::json::parse(
        explainToJson(summary.explain->facts, summary.explain->report));
  return root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

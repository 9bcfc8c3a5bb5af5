//===- RunReportTest.cpp - attn-run's results, check and report -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What attn-run does with the results of a function or kernel that has the
// log-sum-exp (SPEC.md sections 1.2 and 2): one --output per result, in
// result order, no more than the results; --check of both; the header, the
// check line and the JSON report.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/RunReport.h"
#include "attn/Runtime/ManifestRun.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

using namespace attn::runtime;

namespace {

TEST(RunReportTest, OutputFlags) {
  RunFlags flags;
  flags.outputs = {"@o.npy", "lse.npy"};
  std::vector<std::string> paths;
  std::string error;
  ASSERT_TRUE(checkRunFlags(flags, paths, error)) << error;
  EXPECT_EQ(paths, (std::vector<std::string>{"o.npy", "lse.npy"}));
  flags.outputs = {"@o.npy", "@o.npy"};
  EXPECT_FALSE(checkRunFlags(flags, paths, error));
  EXPECT_EQ(error, "--output 'o.npy' is given twice; each result needs a file "
                   "of its own");
  flags.outputs = {"@o.npy", "@"};
  EXPECT_FALSE(checkRunFlags(flags, paths, error));
  EXPECT_EQ(error, "--output needs a file name, as in --output=@o.npy");
  flags.outputs = {"@no-such-directory/lse.npy"};
  EXPECT_FALSE(checkRunFlags(flags, paths, error));
  EXPECT_EQ(error, "cannot write 'no-such-directory/lse.npy': no directory "
                   "'no-such-directory'");
  flags.outputs.clear();
  ASSERT_TRUE(checkRunFlags(flags, paths, error)) << error;
  EXPECT_TRUE(paths.empty());
}

TEST(RunReportTest, OutputCount) {
  std::vector<std::string> results = {"o: ?x4x?x8xf16", "lse: ?x4x?xf32"};
  std::string error;
  // Fewer --output than results is fine (iree-run-module's convention).
  EXPECT_TRUE(checkOutputCount({}, "function 'f'", results, error));
  EXPECT_TRUE(checkOutputCount({"o.npy"}, "function 'f'", results, error));
  EXPECT_TRUE(
      checkOutputCount({"o.npy", "l.npy"}, "function 'f'", results, error));
  EXPECT_FALSE(checkOutputCount({"o.npy", "l.npy", "x.npy"}, "function 'f'",
                                results, error));
  EXPECT_EQ(error, "--output is given 3 times, but function 'f' has 2 results "
                   "(o: ?x4x?x8xf16, lse: ?x4x?xf32); give one --output per "
                   "result, in result order");
  EXPECT_FALSE(checkOutputCount({"o.npy", "l.npy"}, "kernel 'k'",
                                {"o: 1x2x3x4xbf16"}, error));
  EXPECT_EQ(error, "--output is given 2 times, but kernel 'k' has 1 result "
                   "(o: 1x2x3x4xbf16); give one --output per result, in "
                   "result order");
}

/// A problem of 2 heads x 3 rows whose last row sees no key (an i1 mask).
struct Problem {
  HostTensor q, k, v, mask;
  AttentionProblem problem;

  Problem() {
    q = makeRandomTensor({1, 2, 3, 8}, ElementType::F16, 1);
    k = makeRandomTensor({1, 1, 5, 8}, ElementType::F16, 2);
    v = makeRandomTensor({1, 1, 5, 4}, ElementType::F16, 3);
    mask = makeZeroTensor({3, 5}, ElementType::I1);
    for (int64_t i = 0; i < 10; ++i)
      mask.set(i, 1.0);
    problem.query = &q;
    problem.key = &k;
    problem.value = &v;
    problem.mask = &mask;
    problem.scale = 0.35;
  }

  /// The reference's output (rounded to f16) and LSE (rounded to f32).
  void reference(HostTensor &output, HostTensor &lse) {
    std::vector<int64_t> rows = {0, 1, 2, 3, 4, 5};
    std::vector<double> out, lseValues;
    referenceRows(problem, rows, out, &lseValues);
    output = makeZeroTensor({1, 2, 3, 4}, ElementType::F16);
    lse = makeZeroTensor({1, 2, 3}, ElementType::F32);
    for (size_t i = 0; i < out.size(); ++i)
      output.set(i, out[i]);
    for (size_t i = 0; i < lseValues.size(); ++i)
      lse.set(i, lseValues[i]);
  }
};

TEST(RunReportTest, CheckBothResults) {
  Problem p;
  HostTensor output, lse;
  p.reference(output, lse);
  EXPECT_EQ(lse.get(2), -std::numeric_limits<double>::infinity());
  CheckReport report = checkOutput(p.problem, output, false, 7, &lse);
  EXPECT_TRUE(report.result.pass) << report.result.reason;
  ASSERT_TRUE(report.result.lse.has_value());
  EXPECT_LT(report.result.lse->maxErr, 1e-7);
  EXPECT_EQ(report.tolerance.lse, getTolerance(ElementType::F16, false).lse);
  // Without the LSE, the output alone.
  EXPECT_FALSE(checkOutput(p.problem, output, false, 7).result.lse);

  // A kept row reported as -inf fails; a row without keys reported finite
  // too.
  HostTensor wrong = lse;
  wrong.set(4, -std::numeric_limits<double>::infinity());
  report = checkOutput(p.problem, output, false, 7, &wrong);
  EXPECT_FALSE(report.result.pass);
  EXPECT_EQ(report.result.reason,
            "1 non-finite LSE values where the reference is finite");
  wrong = lse;
  wrong.set(5, 0.0);
  report = checkOutput(p.problem, output, false, 7, &wrong);
  EXPECT_FALSE(report.result.pass);
  EXPECT_EQ(report.result.reason,
            "1 LSE values that differ from a -inf/NaN reference");
  // An error past the tolerance, relative to 1 + |lse|.
  wrong = lse;
  wrong.set(1, lse.get(1) + 0.01 * (1.0 + std::fabs(lse.get(1))));
  report = checkOutput(p.problem, output, false, 7, &wrong);
  EXPECT_FALSE(report.result.pass);
  EXPECT_NEAR(report.result.lse->maxErr, 0.01, 1e-6);
  EXPECT_NE(report.result.reason.find("lse_max_err 1.0e-02 > 1.0e-03"),
            std::string::npos)
      << report.result.reason;
}

TEST(RunReportTest, LinesAndJson) {
  Problem p;
  HostTensor output, lse;
  p.reference(output, lse);
  RunSummary summary;
  summary.function = "f";
  summary.target = "cpu";
  summary.arguments = {{"q", p.q.shape, p.q.type, "random"}};
  summary.resultShape = output.shape;
  summary.resultType = ElementType::F16;
  summary.lseShape = lse.shape;
  summary.outputPaths = {"o.npy", "lse.npy"};
  summary.check = checkOutput(p.problem, output, false, 7, &lse);
  EXPECT_EQ(formatHeaderLine(summary),
            "attn-run: f on cpu: q=1x2x3x8xf16 -> o=1x2x3x4xf16 "
            "lse=1x2x3xf32");
  std::string lines = formatResultLines(summary);
  EXPECT_EQ(lines.rfind("check: PASS rel_l2=", 0), 0u) << lines;
  EXPECT_NE(lines.find(" lse_max_abs="), std::string::npos) << lines;
  EXPECT_NE(lines.find(" lse_max_err="), std::string::npos) << lines;

  nlohmann::json json = nlohmann::json::parse(formatJson(summary));
  EXPECT_EQ(json["output"]["file"], "o.npy");
  EXPECT_EQ(json["lse"]["file"], "lse.npy");
  EXPECT_EQ(json["lse"]["dtype"], "f32");
  EXPECT_EQ(json["lse"]["shape"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(json["check"]["status"], "PASS");
  EXPECT_EQ(json["check"]["lse"]["tol"], 1e-3);
  EXPECT_EQ(json["check"]["lse"]["mismatches"], 0);
  EXPECT_EQ(json["check"]["lse"]["non_finite_outputs"], 0);
  EXPECT_TRUE(json["check"]["lse"]["max_err"].is_number());
  EXPECT_TRUE(json["check"]["lse"]["max_abs"].is_number());

  // One --output: the LSE has no file; no LSE: no key.
  summary.outputPaths = {"o.npy"};
  json = nlohmann::json::parse(formatJson(summary));
  EXPECT_FALSE(json["lse"].contains("file"));
  summary.lseShape.clear();
  summary.check = checkOutput(p.problem, output, false, 7);
  json = nlohmann::json::parse(formatJson(summary));
  EXPECT_FALSE(json.contains("lse"));
  EXPECT_FALSE(json["check"].contains("lse"));
  EXPECT_EQ(formatHeaderLine(summary),
            "attn-run: f on cpu: q=1x2x3x8xf16 -> o=1x2x3x4xf16");
}

TEST(RunReportTest, BenchCountsTheLse) {
  Problem p;
  HostTensor output, lse;
  p.reference(output, lse);
  DeviceInfo device;
  BenchReport without = summarizeBench({1.0}, p.problem, output, device);
  BenchReport with = summarizeBench({1.0}, p.problem, output, device, &lse);
  EXPECT_EQ(with.bytes - without.bytes, 6 * 4);
  EXPECT_EQ(with.flops, without.flops);
}

TEST(RunReportTest, BenchCountsEachBatchsKeys) {
  // Under kv_lengths the FLOPs and the K/V bytes follow the mean of the
  // clamped lengths (here 5, 1 and 0 of 5: a mean of 2), not Tk.
  HostTensor q = makeRandomTensor({3, 2, 1, 8}, ElementType::F16, 1);
  HostTensor k = makeRandomTensor({3, 1, 5, 8}, ElementType::F16, 2);
  HostTensor v = makeRandomTensor({3, 1, 5, 8}, ElementType::F16, 3);
  HostTensor output = makeZeroTensor({3, 2, 1, 8}, ElementType::F16);
  HostTensor lengths = makeZeroTensor({3}, ElementType::I32);
  lengths.set(0, 9.0);
  lengths.set(1, 1.0);
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  DeviceInfo device;
  BenchReport full = summarizeBench({1.0}, problem, output, device);
  problem.kvLengths = &lengths;
  BenchReport part = summarizeBench({1.0}, problem, output, device);
  EXPECT_DOUBLE_EQ(part.flops, full.flops * 2 / 5);
  // Q and O: 2 x 48 f16; K and V: 2 x 3 x 8 f16 per key.
  EXPECT_DOUBLE_EQ(full.bytes - part.bytes, 3 * 2 * 3 * 8 * 2);
}

TEST(RunReportTest, BenchCountsEachPackedSequence) {
  // Tq 3 = 1 + 2 over Tk 5 = 4 + 1: 2 * Hq * (1 * 4 + 2 * 1) * (D + Dv).
  Problem p;
  p.problem.mask = nullptr;
  HostTensor cuQ = makeZeroTensor({3}, ElementType::I32);
  HostTensor cuK = makeZeroTensor({3}, ElementType::I32);
  for (int64_t s = 0; s < 3; ++s) {
    cuQ.set(s, double(std::vector<int64_t>{0, 1, 3}[s]));
    cuK.set(s, double(std::vector<int64_t>{0, 4, 5}[s]));
  }
  p.problem.cuSeqlensQ = &cuQ;
  p.problem.cuSeqlensK = &cuK;
  HostTensor output = makeZeroTensor({1, 2, 3, 4}, ElementType::F16);
  BenchReport report = summarizeBench({1.0}, p.problem, output, DeviceInfo());
  EXPECT_EQ(report.flops, 2.0 * 2 * (1 * 4 + 2 * 1) * (8 + 4));
}

TEST(RunReportTest, BenchCountsThePagesRead) {
  // A paged cache of 3 pages of 4 keys per batch (Tk 12) in a pool of 9:
  // lengths 5, 12 and 0 multiply 17 / 3 keys each on the mean, and read 2,
  // 3 and 0 whole pages: 20 / 3 keys. The pool's size does not count.
  HostTensor q = makeRandomTensor({3, 2, 1, 8}, ElementType::F16, 1);
  HostTensor k = makeRandomTensor({9, 1, 4, 8}, ElementType::F16, 2);
  HostTensor table = makeZeroTensor({3, 3}, ElementType::I32);
  for (int64_t i = 0; i < 9; ++i)
    table.set(i, double(8 - i));
  HostTensor lengths = makeZeroTensor({3}, ElementType::I32);
  lengths.set(0, 5.0);
  lengths.set(1, 12.0);
  HostTensor output = makeZeroTensor({3, 2, 1, 8}, ElementType::F16);
  AttentionProblem problem;
  problem.query = &q;
  problem.key = problem.value = &k;
  problem.blockTable = &table;
  DeviceInfo device;
  BenchReport full = summarizeBench({1.0}, problem, output, device);
  // Without lengths: every batch's 12 keys.
  EXPECT_DOUBLE_EQ(full.flops, 4.0 * 3 * 2 * 1 * 12 * 8);
  EXPECT_DOUBLE_EQ(full.bytes, 2 * (2.0 * 3 * 2 * 8 + 2.0 * 3 * 12 * 8));
  problem.kvLengths = &lengths;
  BenchReport part = summarizeBench({1.0}, problem, output, device);
  // The means, rounded as for kv_lengths: 6 keys multiplied, 7 read.
  EXPECT_DOUBLE_EQ(part.flops, 4.0 * 3 * 2 * 1 * 6 * 8);
  EXPECT_DOUBLE_EQ(part.bytes, 2 * (2.0 * 3 * 2 * 8 + 2.0 * 3 * 7 * 8));
}

} // namespace

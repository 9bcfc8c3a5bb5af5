//===- ReferenceLseTest.cpp - The reference's log-sum-exp -----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// SPEC.md section 1.2 in the float64 reference: each row's log-sum-exp of
// the final scores (after softcap, bias and score_mod), -inf for a row with
// no kept key, NaN within a NaN row; and its check (compareLseRows, the
// tolerances, the check line).
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace attn::runtime;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor makeTensor(std::vector<int64_t> shape, std::vector<double> values,
                      ElementType type = ElementType::F32) {
  HostTensor tensor = makeZeroTensor(std::move(shape), type);
  EXPECT_EQ(static_cast<int64_t>(values.size()), tensor.getNumElements());
  for (size_t i = 0; i < values.size(); ++i)
    tensor.set(static_cast<int64_t>(i), values[i]);
  return tensor;
}

/// The output and the LSE of every row of a valid problem.
struct AllRows {
  std::vector<double> out, lse;
};

AllRows runAll(const AttentionProblem &problem) {
  std::string error;
  EXPECT_TRUE(validateProblem(problem, error)) << error;
  std::vector<int64_t> rows(getNumRows(problem));
  for (size_t r = 0; r < rows.size(); ++r)
    rows[r] = static_cast<int64_t>(r);
  AllRows all;
  referenceRows(problem, rows, all.out, &all.lse);
  EXPECT_EQ(all.lse.size(), rows.size());
  return all;
}

/// log(sum_j exp(s_j)), directly.
double logSumExp(std::initializer_list<double> scores) {
  double sum = 0.0;
  for (double s : scores)
    sum += std::exp(s);
  return std::log(sum);
}

TEST(ReferenceLseTest, ClosedForm) {
  // Tq = 1, Tk = 2, D = 1: s = scale * [1 * 1, 1 * 2] = [0.5, 1].
  HostTensor q = makeTensor({1, 1, 1, 1}, {1.0});
  HostTensor k = makeTensor({1, 1, 2, 1}, {1.0, 2.0});
  HostTensor v = makeTensor({1, 1, 2, 2}, {3.0, -1.0, 5.0, 4.0});
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  problem.scale = 0.5;
  AllRows all = runAll(problem);
  EXPECT_NEAR(all.lse[0], logSumExp({0.5, 1.0}), 1e-15);
  // Large scores do not overflow: log(e^1000 + e^1000) = 1000 + log 2.
  problem.scale = 1000.0;
  HostTensor k2 = makeTensor({1, 1, 2, 1}, {1.0, 1.0});
  problem.key = &k2;
  EXPECT_NEAR(runAll(problem).lse[0], 1000.0 + std::log(2.0), 1e-12);
  // Without `lse`, the output alone, as before.
  std::vector<double> out;
  referenceRows(problem, {0}, out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(ReferenceLseTest, MasksAndFullyMaskedRows) {
  // Q = 0: every kept key scores its bias; the LSE is log(sum exp(bias)).
  HostTensor q = makeZeroTensor({1, 1, 3, 2}, ElementType::F32);
  HostTensor k = makeRandomTensor({1, 1, 3, 2}, ElementType::F32, 1);
  HostTensor v = makeRandomTensor({1, 1, 3, 1}, ElementType::F32, 2);
  HostTensor mask = makeTensor(
      {3, 3}, {0.0, -kInf, std::log(2.0), -kInf, -kInf, -kInf, 1.0, 1.0, 1.0});
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  problem.mask = &mask;
  AllRows all = runAll(problem);
  // e^0 + e^log 2, with log 2 rounded to f32.
  EXPECT_NEAR(all.lse[0], std::log(3.0), 1e-7);
  EXPECT_EQ(all.lse[1], -kInf); // no kept key
  EXPECT_EQ(all.out[1], 0.0);
  EXPECT_NEAR(all.lse[2], 1.0 + std::log(3.0), 1e-15);
  // An i1 mask removes keys without a bias, and combines with causal.
  HostTensor keep =
      makeTensor({3, 3}, {1, 0, 1, 1, 1, 1, 0, 0, 0}, ElementType::I1);
  problem.mask = &keep;
  problem.causal = CausalMode::TopLeft;
  all = runAll(problem);
  EXPECT_NEAR(all.lse[0], 0.0, 1e-15); // key 0 alone: log(e^0)
  EXPECT_NEAR(all.lse[1], std::log(2.0), 1e-15);
  EXPECT_EQ(all.lse[2], -kInf);
}

TEST(ReferenceLseTest, FinalScores) {
  // Q = 1, K = [2, -3], scale 1, softcap 1.5, bias [0, 0.25], then a
  // score_mod that doubles key 1 and drops key 2 (-inf: masked).
  HostTensor q = makeTensor({1, 1, 1, 1}, {1.0});
  HostTensor k = makeTensor({1, 1, 3, 1}, {2.0, -3.0, 1.0});
  HostTensor v = makeTensor({1, 1, 3, 1}, {0.0, 1.0, 2.0});
  HostTensor mask = makeTensor({1, 3}, {0.0, 0.25, 0.0});
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  problem.mask = &mask;
  problem.softcap = 1.5;
  problem.scoreMod = [](double s, int64_t, int64_t, int64_t, int64_t j) {
    return j == 2 ? -kInf : j == 1 ? 2.0 * s : s;
  };
  double s0 = 1.5 * std::tanh(2.0 / 1.5);
  double s1 = 2.0 * (1.5 * std::tanh(-3.0 / 1.5) + 0.25);
  EXPECT_NEAR(runAll(problem).lse[0], logSumExp({s0, s1}), 1e-15);
  // A score_mod that removes every key: -inf.
  problem.scoreMod = [](double, int64_t, int64_t, int64_t, int64_t) {
    return -kInf;
  };
  EXPECT_EQ(runAll(problem).lse[0], -kInf);
  // mask_mod and a window remove keys as masks do.
  problem.scoreMod = {};
  problem.maskMod = [](int64_t, int64_t, int64_t, int64_t j) { return j != 0; };
  problem.windowLeft = -1;
  problem.windowRight = 1;
  double c1 = 1.5 * std::tanh(-3.0 / 1.5) + 0.25;
  EXPECT_NEAR(runAll(problem).lse[0], c1, 1e-15); // key 1 alone
}

TEST(ReferenceLseTest, GroupedHeadsAndSelectedRows) {
  // Hq = 4, Hkv = 2, Tq = 3, Tk = 5: the LSE of any subset of rows is that
  // of all rows, each row the log-sum-exp of its own scores.
  HostTensor q = makeRandomTensor({2, 4, 3, 8}, ElementType::BF16, 3);
  HostTensor k = makeRandomTensor({2, 2, 5, 8}, ElementType::BF16, 4);
  HostTensor v = makeRandomTensor({2, 2, 5, 4}, ElementType::BF16, 5);
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  problem.scale = 0.3;
  problem.causal = CausalMode::BottomRight;
  AllRows all = runAll(problem);
  ASSERT_EQ(all.lse.size(), 24u);
  for (int64_t row = 0; row < 24; ++row) {
    int64_t i = row % 3, h = (row / 3) % 4, b = row / 12, g = h / 2;
    double sum = 0.0;
    for (int64_t j = 0; j <= i + 2; ++j) {
      double dot = 0.0;
      for (int64_t c = 0; c < 8; ++c)
        dot += q.get(row * 8 + c) * k.get(((b * 2 + g) * 5 + j) * 8 + c);
      sum += std::exp(0.3 * dot);
    }
    EXPECT_NEAR(all.lse[row], std::log(sum), 1e-13) << "row " << row;
  }
  std::vector<double> out, lse;
  referenceRows(problem, {23, 4, 0}, out, &lse);
  EXPECT_EQ(lse, (std::vector<double>{all.lse[23], all.lse[4], all.lse[0]}));
}

TEST(ReferenceLseTest, NaNStaysInItsRow) {
  HostTensor q = makeRandomTensor({1, 1, 3, 4}, ElementType::F32, 8);
  HostTensor k = makeRandomTensor({1, 1, 3, 4}, ElementType::F32, 9);
  HostTensor v = makeRandomTensor({1, 1, 3, 2}, ElementType::F32, 10);
  q.set(1 * 4 + 2, kNaN);
  AttentionProblem problem;
  problem.query = &q;
  problem.key = &k;
  problem.value = &v;
  AllRows all = runAll(problem);
  EXPECT_TRUE(std::isfinite(all.lse[0]));
  EXPECT_TRUE(std::isnan(all.lse[1]));
  EXPECT_TRUE(std::isfinite(all.lse[2]));
  // Inf in V does not reach the LSE.
  v.set(0, kInf);
  EXPECT_TRUE(std::isfinite(runAll(problem).lse[0]));
}

TEST(ReferenceLseTest, Tolerances) {
  // docs/Testing.md: relative to 1 + |lse|, by element type.
  EXPECT_EQ(getTolerance(ElementType::F32, false).lse, 1e-5);
  EXPECT_EQ(getTolerance(ElementType::F32, true).lse, 2e-3);
  EXPECT_EQ(getTolerance(ElementType::F16, false).lse, 1e-3);
  EXPECT_EQ(getTolerance(ElementType::BF16, false).lse, 8e-3);
  // Looser where the inputs or P are rounded more.
  EXPECT_LT(getTolerance(ElementType::F32, false).lse,
            getTolerance(ElementType::F16, false).lse);
  EXPECT_LT(getTolerance(ElementType::F16, false).lse,
            getTolerance(ElementType::BF16, false).lse);
}

//===----------------------------------------------------------------------===//
// compareLseRows
//===----------------------------------------------------------------------===//

/// A passing output check of one row of Dv = 1.
CheckResult passingOutput() {
  HostTensor output = makeTensor({1, 1, 1, 1}, {1.0});
  CheckResult result = compareRows(output, {0}, {1.0}, 1, {1e-5, 1e-4});
  EXPECT_TRUE(result.pass);
  return result;
}

TEST(CompareLseRowsTest, ScaledTolerance) {
  Tolerance tol{1e-5, 1e-4, 1e-3};
  // Errors of 1e-3 * (1 + |ref|) pass, at every magnitude; the f32 values
  // are rounded, hence the slack.
  HostTensor lse = makeTensor({1, 1, 3}, {0.0, 10.01, -99.9});
  CheckResult result = passingOutput();
  compareLseRows(lse, {0, 1, 2}, {0.0009, 10.0, -100.0}, tol, result);
  EXPECT_TRUE(result.pass) << result.reason;
  ASSERT_TRUE(result.lse.has_value());
  EXPECT_NEAR(result.lse->maxAbs, 0.1, 1e-5);
  EXPECT_NEAR(result.lse->maxErr, 0.1 / 101.0, 1e-6);
  EXPECT_EQ(formatCheckLine(result),
            "check: PASS rel_l2=0.000e+00 max_abs=0.000e+00 "
            "lse_max_abs=1.000e-01 lse_max_err=9.901e-04");
  // One row past it fails, and says so on the check line.
  result = passingOutput();
  compareLseRows(lse, {0, 1, 2}, {0.0011, 10.0, -100.0}, tol, result);
  EXPECT_FALSE(result.pass);
  EXPECT_EQ(result.reason, "lse_max_err 1.1e-03 > 1.0e-03");
  EXPECT_EQ(formatCheckLine(result),
            "check: FAIL rel_l2=0.000e+00 max_abs=0.000e+00 "
            "lse_max_abs=1.000e-01 lse_max_err=1.099e-03 (lse_max_err "
            "1.1e-03 > 1.0e-03)");
  // Only the checked rows count.
  result = passingOutput();
  compareLseRows(lse, {1}, {10.0}, tol, result);
  EXPECT_TRUE(result.pass) << result.reason;
}

TEST(CompareLseRowsTest, NonFiniteRows) {
  Tolerance tol = getTolerance(ElementType::BF16, false);
  HostTensor lse = makeTensor({1, 1, 3}, {-kInf, kNaN, 2.0});
  CheckResult result = passingOutput();
  compareLseRows(lse, {0, 1, 2}, {-kInf, kNaN, 2.0}, tol, result);
  EXPECT_TRUE(result.pass) << result.reason;
  EXPECT_EQ(result.lse->mismatches, 0);
  // A row with no kept key reported as finite, and a kept row reported as
  // -inf, both fail.
  result = passingOutput();
  compareLseRows(lse, {0, 1, 2}, {1.0, kNaN, -kInf}, tol, result);
  EXPECT_FALSE(result.pass);
  EXPECT_EQ(result.lse->nonFiniteOutputs, 1);
  EXPECT_EQ(result.lse->mismatches, 1);
  EXPECT_EQ(result.reason,
            "1 non-finite LSE values where the reference is finite; 1 LSE "
            "values that differ from a -inf/NaN reference");
  // +inf or NaN for -inf fails too.
  HostTensor wrong = makeTensor({1, 1, 2}, {kInf, kNaN});
  result = passingOutput();
  compareLseRows(wrong, {0, 1}, {-kInf, -kInf}, tol, result);
  EXPECT_EQ(result.lse->mismatches, 2);
  EXPECT_FALSE(result.pass);
}

TEST(CompareLseRowsTest, AddsToAFailingOutputCheck) {
  HostTensor output = makeTensor({1, 1, 1, 1}, {2.0});
  CheckResult result = compareRows(output, {0}, {1.0}, 1, {1e-5, 1e-4});
  EXPECT_FALSE(result.pass);
  HostTensor lse = makeTensor({1, 1, 1}, {1.0});
  compareLseRows(lse, {0}, {1.0}, {1e-5, 1e-4, 1e-5}, result);
  EXPECT_FALSE(result.pass);
  EXPECT_EQ(result.reason, "rel_l2 1.0e+00 > 1.0e-05; max_abs 1.0e+00 > "
                           "1.0e-04");
  compareLseRows(lse, {0}, {-kInf}, {1e-5, 1e-4, 1e-5}, result);
  EXPECT_EQ(result.reason, "rel_l2 1.0e+00 > 1.0e-05; max_abs 1.0e+00 > "
                           "1.0e-04; 1 LSE values that differ from a "
                           "-inf/NaN reference");
}

TEST(CompareLseRowsTest, BadArguments) {
  Tolerance tol{1, 1, 1};
  HostTensor lse = makeTensor({1, 1, 2}, {1, 2});
  CheckResult result = passingOutput();
  compareLseRows(lse, {2}, {1}, tol, result);
  EXPECT_FALSE(result.pass);
  EXPECT_EQ(result.reason, "row 2 is outside the 1x1x2xf32 LSE");
  result = passingOutput();
  compareLseRows(lse, {0}, {1, 2}, tol, result);
  EXPECT_EQ(result.reason, "the LSE reference holds 2 values, expected 1");
  result = passingOutput();
  HostTensor f16 = makeTensor({1, 1, 2}, {1, 2}, ElementType::F16);
  compareLseRows(f16, {0}, {1}, tol, result);
  EXPECT_EQ(result.reason, "the LSE has element type f16, expected f32");
  EXPECT_FALSE(result.pass);
}

} // namespace

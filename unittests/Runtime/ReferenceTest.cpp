//===- ReferenceTest.cpp - Tests of the float64 attention reference -------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <algorithm>
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

HostTensor makeFilled(std::vector<int64_t> shape, double value,
                      ElementType type = ElementType::F32) {
  HostTensor tensor = makeZeroTensor(std::move(shape), type);
  for (int64_t i = 0; i < tensor.getNumElements(); ++i)
    tensor.set(i, value);
  return tensor;
}

/// Runs the reference over every row after validating the problem.
std::vector<double> runAll(const AttentionProblem &problem) {
  std::string error;
  EXPECT_TRUE(validateProblem(problem, error)) << error;
  std::vector<int64_t> rows(getNumRows(problem));
  for (size_t r = 0; r < rows.size(); ++r)
    rows[r] = static_cast<int64_t>(r);
  std::vector<double> out;
  referenceRows(problem, rows, out);
  return out;
}

TEST(ReferenceTest, TinyClosedForm) {
  // Tq = 1, Tk = 2, D = 1, Dv = 2: s = scale * [1 * 1, 1 * 2] = [0.5, 1].
  for (ElementType type : {ElementType::F32, ElementType::BF16}) {
    HostTensor q = makeTensor({1, 1, 1, 1}, {1.0}, type);
    HostTensor k = makeTensor({1, 1, 2, 1}, {1.0, 2.0}, type);
    HostTensor v = makeTensor({1, 1, 2, 2}, {3.0, -1.0, 5.0, 4.0}, type);
    AttentionProblem problem{&q, &k, &v, nullptr, 0.5, CausalMode::None};
    std::vector<double> out = runAll(problem);
    double p1 = std::exp(1.0) / (std::exp(0.5) + std::exp(1.0));
    double p0 = 1.0 - p1;
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NEAR(out[0], 3.0 * p0 + 5.0 * p1, 1e-14);
    EXPECT_NEAR(out[1], -1.0 * p0 + 4.0 * p1, 1e-14);
  }
}

TEST(ReferenceTest, UsesStoredValues) {
  // 1 + 2^-12 is stored as 1.0 in f16: s = [1, 1] and the weights are equal.
  HostTensor q = makeTensor({1, 1, 1, 1}, {1.0 + 0x1p-12}, ElementType::F16);
  HostTensor k =
      makeTensor({1, 1, 2, 1}, {1.0, 1.0 + 0x1p-12}, ElementType::F16);
  HostTensor v = makeTensor({1, 1, 2, 1}, {0.0, 1.0}, ElementType::F16);
  AttentionProblem problem{&q, &k, &v, nullptr, 100.0, CausalMode::None};
  EXPECT_EQ(runAll(problem)[0], 0.5);
}

TEST(ReferenceTest, GroupedQueryHeads) {
  // Hq = 4, Hkv = 2: heads 0 and 1 read kv head 0, heads 2 and 3 kv head 1.
  // Each kv head's values are constant, so the output names the kv head.
  HostTensor q = makeRandomTensor({1, 4, 3, 8}, ElementType::F32, 1);
  HostTensor k = makeRandomTensor({1, 2, 5, 8}, ElementType::F32, 2);
  HostTensor v = makeZeroTensor({1, 2, 5, 2}, ElementType::F32);
  for (int64_t i = 0; i < 20; ++i)
    v.set(i, i < 10 ? 10.0 : 20.0);
  AttentionProblem problem{&q, &k, &v, nullptr, 0.35, CausalMode::None};
  std::vector<double> out = runAll(problem);
  ASSERT_EQ(out.size(), 4u * 3 * 2);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t c = 0; c < 6; ++c)
      EXPECT_NEAR(out[h * 6 + c], h < 2 ? 10.0 : 20.0, 1e-12) << "head " << h;
}

// With Q = 0 every visible key has the same score, so each output is the
// mean of the visible values: V = [1, 2, 4, 8] makes the visible set readable.
struct CausalCase {
  int64_t tq, tk;
  CausalMode kind;
  std::vector<double> expected;
};

TEST(ReferenceTest, CausalAlignments) {
  const CausalCase cases[] = {
      {2, 4, CausalMode::TopLeft, {1.0, 1.5}},
      {2, 4, CausalMode::BottomRight, {7.0 / 3.0, 15.0 / 4.0}},
      {4, 2, CausalMode::TopLeft, {1.0, 1.5, 1.5, 1.5}},
      {4, 2, CausalMode::BottomRight, {0.0, 0.0, 1.0, 1.5}},
      {3, 3, CausalMode::BottomRight, {1.0, 1.5, 7.0 / 3.0}},
      {2, 4, CausalMode::None, {15.0 / 4.0, 15.0 / 4.0}},
  };
  for (const CausalCase &c : cases) {
    HostTensor q = makeFilled({1, 1, c.tq, 1}, 0.0);
    HostTensor k = makeRandomTensor({1, 1, c.tk, 1}, ElementType::F32, 3);
    std::vector<double> values = {1.0, 2.0, 4.0, 8.0};
    values.resize(c.tk);
    HostTensor v = makeTensor({1, 1, c.tk, 1}, values);
    AttentionProblem problem{&q, &k, &v, nullptr, 1.0, c.kind};
    std::vector<double> out = runAll(problem);
    ASSERT_EQ(out.size(), c.expected.size());
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_NEAR(out[i], c.expected[i], 1e-14)
          << "Tq=" << c.tq << " Tk=" << c.tk << " kind "
          << static_cast<int>(c.kind) << " row " << i;
  }
}

TEST(ReferenceTest, FloatMaskWithNegativeInfinity) {
  HostTensor q = makeFilled({1, 1, 1, 4}, 0.0);
  HostTensor k = makeRandomTensor({1, 1, 3, 4}, ElementType::F32, 4);
  HostTensor v = makeTensor({1, 1, 3, 1}, {3.0, 100.0, 6.0});
  // Weights 1, removed, 2: (3 + 2 * 6) / 3 = 5.
  HostTensor mask = makeTensor({1, 3}, {0.0, -kInf, std::log(2.0)});
  AttentionProblem problem{&q, &k, &v, &mask, 1.0, CausalMode::None};
  EXPECT_NEAR(runAll(problem)[0], 5.0, 1e-6);
  HostTensor f16Mask = makeTensor({1, 3}, {0.0, -kInf, 0.0}, ElementType::F16);
  problem.mask = &f16Mask;
  EXPECT_NEAR(runAll(problem)[0], 4.5, 1e-14);
}

TEST(ReferenceTest, BoolMask) {
  HostTensor q = makeRandomTensor({1, 1, 1, 4}, ElementType::F32, 5);
  HostTensor k = makeFilled({1, 1, 3, 4}, 0.25);
  HostTensor v = makeTensor({1, 1, 3, 1}, {3.0, 100.0, 6.0});
  HostTensor mask = makeTensor({1, 3}, {1.0, 0.0, 1.0}, ElementType::I1);
  AttentionProblem problem{&q, &k, &v, &mask, 1.0, CausalMode::None};
  EXPECT_NEAR(runAll(problem)[0], 4.5, 1e-14);
  // Mask and causal combine: row 0 of a top-left causal problem sees key 0.
  problem.causal = CausalMode::TopLeft;
  EXPECT_NEAR(runAll(problem)[0], 3.0, 1e-14);
}

TEST(ReferenceTest, FullyMaskedRowsAreZero) {
  HostTensor q = makeRandomTensor({1, 1, 3, 2}, ElementType::F32, 6);
  HostTensor k = makeRandomTensor({1, 1, 2, 2}, ElementType::F32, 7);
  HostTensor v = makeTensor({1, 1, 2, 1}, {2.0, 2.0});
  HostTensor boolMask = makeTensor({3, 2}, {1, 1, 0, 0, 0, 1}, ElementType::I1);
  AttentionProblem problem{&q, &k, &v, &boolMask, 1.0, CausalMode::None};
  std::vector<double> out = runAll(problem);
  EXPECT_EQ(out, (std::vector<double>{2.0, 0.0, 2.0}));
  // With top-left causal, row 0 sees only key 0, which is masked in row 2.
  problem.causal = CausalMode::TopLeft;
  HostTensor floatMask = makeTensor({3, 2}, {0, 0, -kInf, -kInf, -kInf, 0});
  problem.mask = &floatMask;
  out = runAll(problem);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(out[0], 2.0, 1e-14);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_NEAR(out[2], 2.0, 1e-14);
  for (double value : out)
    EXPECT_FALSE(std::isnan(value));
}

TEST(ReferenceTest, NaNStaysInItsRow) {
  HostTensor q = makeRandomTensor({1, 2, 3, 4}, ElementType::F32, 8);
  HostTensor k = makeRandomTensor({1, 1, 3, 4}, ElementType::F32, 9);
  HostTensor v = makeRandomTensor({1, 1, 3, 2}, ElementType::F32, 10);
  q.set(1 * 4 + 2, kNaN); // Head 0, row 1.
  AttentionProblem problem{&q, &k, &v, nullptr, 0.5, CausalMode::None};
  std::vector<double> out = runAll(problem);
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(std::isnan(out[row * 2 + c]), row == 1) << "row " << row;

  // A NaN in key 2 reaches the rows that see key 2 and no others.
  HostTensor q2 = makeRandomTensor({1, 1, 3, 4}, ElementType::F32, 8);
  k.set(2 * 4 + 1, kNaN);
  problem.query = &q2;
  problem.causal = CausalMode::TopLeft;
  out = runAll(problem);
  EXPECT_FALSE(std::isnan(out[0]) || std::isnan(out[2]));
  EXPECT_TRUE(std::isnan(out[4]) && std::isnan(out[5]));
}

TEST(ReferenceTest, InfinityInValuesPropagates) {
  HostTensor q = makeFilled({1, 1, 2, 1}, 0.0);
  HostTensor k = makeFilled({1, 1, 2, 1}, 0.0);
  HostTensor v = makeTensor({1, 1, 2, 1}, {1.0, kInf});
  AttentionProblem problem{&q, &k, &v, nullptr, 1.0, CausalMode::TopLeft};
  std::vector<double> out = runAll(problem);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], kInf);
}

TEST(ReferenceTest, MaskBroadcasting) {
  // B = 2, H = 2, Tq = 2, Tk = 3. Batch 0 removes key 0, batch 1 key 2.
  HostTensor q = makeRandomTensor({2, 2, 2, 4}, ElementType::F32, 11);
  HostTensor k = makeRandomTensor({2, 1, 3, 4}, ElementType::F32, 12);
  HostTensor v = makeRandomTensor({2, 1, 3, 3}, ElementType::F32, 13);
  HostTensor perBatch =
      makeTensor({2, 1, 1, 3}, {0, 1, 1, 1, 1, 0}, ElementType::I1);
  HostTensor expanded = makeZeroTensor({2, 2, 2, 3}, ElementType::I1);
  for (int64_t i = 0; i < 24; ++i)
    expanded.set(i, (i / 12 == 0) ? (i % 3 != 0) : (i % 3 != 2));
  AttentionProblem problem{&q, &k, &v, &perBatch, 0.5, CausalMode::None};
  std::vector<double> broadcast = runAll(problem);
  problem.mask = &expanded;
  std::vector<double> full = runAll(problem);
  problem.mask = nullptr;
  std::vector<double> unmasked = runAll(problem);
  EXPECT_EQ(broadcast, full);
  EXPECT_NE(broadcast, unmasked);

  // Rank 2, broadcast over rows (1 x Tk) vs. the same mask as rank 4.
  HostTensor rank2 = makeTensor({1, 3}, {0.0, -1.0, -kInf});
  HostTensor rank4 = makeZeroTensor({2, 2, 2, 3}, ElementType::F32);
  for (int64_t i = 0; i < 24; ++i)
    rank4.set(i, rank2.get(i % 3));
  problem.mask = &rank2;
  std::vector<double> fromRank2 = runAll(problem);
  problem.mask = &rank4;
  EXPECT_EQ(fromRank2, runAll(problem));
  EXPECT_NE(fromRank2, unmasked);
  // Rank 2, broadcast over keys (Tq x 1): row 1 fully removed.
  HostTensor perRow = makeTensor({2, 1}, {0.0, -kInf});
  problem.mask = &perRow;
  std::vector<double> out = runAll(problem);
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t c = 0; c < 3; ++c) {
      double expected = row % 2 == 1 ? 0.0 : unmasked[row * 3 + c];
      EXPECT_EQ(out[row * 3 + c], expected) << "row " << row;
    }
}

TEST(ReferenceTest, SelectedRowsMatchAllRows) {
  HostTensor q = makeRandomTensor({2, 4, 5, 8}, ElementType::BF16, 14);
  HostTensor k = makeRandomTensor({2, 2, 7, 8}, ElementType::BF16, 15);
  HostTensor v = makeRandomTensor({2, 2, 7, 4}, ElementType::BF16, 16);
  AttentionProblem problem{&q, &k, &v, nullptr, 0.3, CausalMode::BottomRight};
  std::vector<double> all = runAll(problem);
  std::vector<int64_t> rows = {39, 3, 17};
  std::vector<double> some;
  referenceRows(problem, rows, some);
  ASSERT_EQ(some.size(), 12u);
  for (size_t n = 0; n < rows.size(); ++n)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(some[n * 4 + c], all[rows[n] * 4 + c]);
}

TEST(ReferenceTest, ValidationErrors) {
  HostTensor q = makeZeroTensor({2, 4, 3, 8}, ElementType::F16);
  HostTensor k = makeZeroTensor({2, 2, 5, 8}, ElementType::F16);
  HostTensor v = makeZeroTensor({2, 2, 5, 6}, ElementType::F16);
  AttentionProblem problem{&q, &k, &v, nullptr, 0.125, CausalMode::None};
  std::string error;
  EXPECT_TRUE(validateProblem(problem, error)) << error;

  auto expectError = [&](const AttentionProblem &p, const std::string &text) {
    std::string message;
    EXPECT_FALSE(validateProblem(p, message));
    EXPECT_NE(message.find(text), std::string::npos) << message;
  };
  HostTensor badD = makeZeroTensor({2, 2, 5, 4}, ElementType::F16);
  problem.key = &badD;
  expectError(problem, "key has shape 2x2x5x4xf16, expected 2x?x?x8xf16");
  HostTensor badHeads = makeZeroTensor({2, 3, 5, 8}, ElementType::F16);
  problem.key = &badHeads;
  expectError(problem, "Hq % Hkv must be 0");
  HostTensor f32Key = makeZeroTensor({2, 2, 5, 8}, ElementType::F32);
  problem.key = &f32Key;
  expectError(problem, "key has element type f32, expected f16");
  problem.key = &k;
  HostTensor badV = makeZeroTensor({2, 2, 4, 6}, ElementType::F16);
  problem.value = &badV;
  expectError(problem, "value has shape 2x2x4x6xf16, expected 2x2x5x?xf16");
  problem.value = &v;
  HostTensor rank3 = makeZeroTensor({2, 4, 3}, ElementType::F16);
  problem.query = &rank3;
  expectError(problem, "query has shape 2x4x3xf16, expected rank 4");
  problem.query = &q;
  HostTensor badMask = makeZeroTensor({1, 2, 3, 5}, ElementType::F32);
  problem.mask = &badMask;
  expectError(problem, "dimension 1 is 2, expected 1 or 4");
  HostTensor rank3Mask = makeZeroTensor({3, 3, 5}, ElementType::I1);
  problem.mask = &rank3Mask;
  expectError(problem, "expected rank 2 (Tq x Tk) or 4");
  problem.mask = nullptr;
  problem.scale = 0.0;
  expectError(problem, "scale must be finite and > 0, got 0");
  problem.scale = kNaN;
  expectError(problem, "scale must be finite and > 0");
  problem.scale = 1.0;
  HostTensor shortData = makeZeroTensor({2, 4, 3, 8}, ElementType::F16);
  shortData.data.pop_back();
  problem.query = &shortData;
  expectError(problem, "query holds 383 bytes, expected 384");
  problem.query = nullptr;
  expectError(problem, "the query tensor is missing");
}

TEST(SelectCheckRowsTest, AllRowsWhenFew) {
  EXPECT_EQ(selectCheckRows(4, 4, 1), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(selectCheckRows(3, 100, 1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(selectCheckRows(10, 1, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(selectCheckRows(10, 0, 1).empty());
}

TEST(SelectCheckRowsTest, SampleIsDeterministicSortedAndDistinct) {
  std::vector<int64_t> a = selectCheckRows(1000000, 64, 7);
  EXPECT_EQ(a, selectCheckRows(1000000, 64, 7));
  EXPECT_NE(a, selectCheckRows(1000000, 64, 8));
  ASSERT_EQ(a.size(), 64u);
  EXPECT_EQ(a.front(), 0);
  EXPECT_EQ(a.back(), 999999);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());
  // Nearly all rows: still distinct and complete.
  std::vector<int64_t> b = selectCheckRows(10, 9, 3);
  ASSERT_EQ(b.size(), 9u);
  EXPECT_EQ(std::adjacent_find(b.begin(), b.end()), b.end());
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), 9);
  EXPECT_EQ(selectCheckRows(5, 2, 3), (std::vector<int64_t>{0, 4}));
}

TEST(ToleranceTest, DocumentedValues) {
  Tolerance ieee = getTolerance(ElementType::F32, false);
  EXPECT_EQ(ieee.relL2, 1e-5);
  EXPECT_EQ(ieee.maxAbs, 1e-4);
  Tolerance tf32 = getTolerance(ElementType::F32, true);
  EXPECT_EQ(tf32.relL2, 2e-3);
  EXPECT_EQ(tf32.maxAbs, 1e-2);
  EXPECT_EQ(getTolerance(ElementType::F16, true).relL2, 2e-3);
  EXPECT_EQ(getTolerance(ElementType::F16, false).maxAbs, 1e-2);
  EXPECT_EQ(getTolerance(ElementType::BF16, false).relL2, 1e-2);
  EXPECT_EQ(getTolerance(ElementType::BF16, false).maxAbs, 5e-2);
}

TEST(CompareRowsTest, PassAndFail) {
  // Output 2 rows x Dv 2; check both rows.
  std::vector<double> reference = {1.0, -2.0, 0.5, 4.0};
  HostTensor output = makeTensor({1, 1, 2, 2}, reference);
  CheckResult ok = compareRows(output, {0, 1}, reference, 2,
                               getTolerance(ElementType::F32, false));
  EXPECT_TRUE(ok.pass);
  EXPECT_EQ(ok.relL2, 0.0);
  EXPECT_EQ(ok.maxAbs, 0.0);
  EXPECT_EQ(ok.checkedRows, 2);
  EXPECT_EQ(formatCheckLine(ok),
            "check: PASS rel_l2=0.000e+00 max_abs=0.000e+00");

  output.set(3, 4.1);
  CheckResult bad = compareRows(output, {0, 1}, reference, 2, {1e-2, 5e-2});
  EXPECT_FALSE(bad.pass);
  double norm = std::sqrt(1.0 + 4.0 + 0.25 + 16.0);
  EXPECT_NEAR(bad.relL2, (static_cast<float>(4.1) - 4.0) / norm, 1e-12);
  EXPECT_NEAR(bad.maxAbs, 0.1, 1e-6);
  EXPECT_EQ(bad.reason, "rel_l2 2.2e-02 > 1.0e-02; max_abs 1.0e-01 > 5.0e-02");
  EXPECT_EQ(formatCheckLine(bad),
            "check: FAIL rel_l2=2.169e-02 max_abs=1.000e-01 (rel_l2 2.2e-02 "
            "> 1.0e-02; max_abs 1.0e-01 > 5.0e-02)");
  // The same error passes a looser tolerance; only the checked row counts.
  EXPECT_TRUE(compareRows(output, {0, 1}, reference, 2, {3e-2, 2e-1}).pass);
  EXPECT_TRUE(compareRows(output, {0}, {1.0, -2.0}, 2, {1e-9, 1e-9}).pass);
}

TEST(CompareRowsTest, NonFiniteValues) {
  Tolerance tol = getTolerance(ElementType::F16, false);
  HostTensor output =
      makeTensor({1, 1, 2, 2}, {kNaN, kInf, 1.0, 2.0}, ElementType::F16);
  CheckResult same =
      compareRows(output, {0, 1}, {kNaN, kInf, 1.0, 2.0}, 2, tol);
  EXPECT_TRUE(same.pass) << same.reason;
  EXPECT_EQ(same.nanMismatches, 0);

  CheckResult wrongKind =
      compareRows(output, {0, 1}, {kNaN, -kInf, 1.0, 2.0}, 2, tol);
  EXPECT_FALSE(wrongKind.pass);
  EXPECT_EQ(wrongKind.nanMismatches, 1);

  CheckResult finiteRef =
      compareRows(output, {0, 1}, {0.0, 0.0, 1.0, 2.0}, 2, tol);
  EXPECT_FALSE(finiteRef.pass);
  EXPECT_EQ(finiteRef.nonFiniteOutputs, 2);
  EXPECT_EQ(finiteRef.reason,
            "2 non-finite values where the reference is finite");

  CheckResult missingNaN = compareRows(output, {1}, {kNaN, 2.0}, 2, tol);
  EXPECT_FALSE(missingNaN.pass);
  EXPECT_EQ(missingNaN.nanMismatches, 1);
}

TEST(CompareRowsTest, ZeroReferenceUsesAbsoluteNorm) {
  HostTensor output = makeTensor({1, 1, 1, 2}, {0.0, 0.003});
  CheckResult result = compareRows(output, {0}, {0.0, 0.0}, 2, {1e-2, 1e-2});
  EXPECT_NEAR(result.relL2, 0.003, 1e-9);
  EXPECT_TRUE(result.pass);
  EXPECT_FALSE(compareRows(output, {0}, {0.0, 0.0}, 2, {1e-3, 1e-2}).pass);
}

TEST(CompareRowsTest, BadArguments) {
  HostTensor output = makeTensor({1, 1, 2, 2}, {1, 2, 3, 4});
  CheckResult outside = compareRows(output, {2}, {1, 2}, 2, {1, 1});
  EXPECT_FALSE(outside.pass);
  EXPECT_NE(outside.reason.find("row 2 is outside"), std::string::npos);
  EXPECT_FALSE(compareRows(output, {0}, {1, 2, 3}, 2, {1, 1}).pass);
  EXPECT_FALSE(compareRows(output, {}, {}, 2, {1, 1}).pass);
}

} // namespace

//===- ReferenceVariantsTest.cpp - The reference's variants ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// SPEC.md section 1.1 in the float64 reference: window, softcap, score_mod
// and mask_mod callbacks, on problems whose result has a closed form; and
// the integer tensors (i32, i64) the regions read.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Npy.h"
#include "attn/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace attn::runtime;

namespace {

/// Q = 0 (every visible key weighs the same), K = 1, V[j] = j (Dv = 1): a
/// row's output is the mean of the indices of its visible keys.
struct MeanProblem {
  HostTensor q, k, v;
  AttentionProblem problem;

  MeanProblem(int64_t tq, int64_t tk) {
    q = makeZeroTensor({1, 1, tq, 1}, ElementType::F32);
    k = makeZeroTensor({1, 1, tk, 1}, ElementType::F32);
    v = makeZeroTensor({1, 1, tk, 1}, ElementType::F32);
    for (int64_t j = 0; j < tk; ++j) {
      k.set(j, 1.0);
      v.set(j, static_cast<double>(j));
    }
    problem.query = &q;
    problem.key = &k;
    problem.value = &v;
  }

  std::vector<double> run() {
    std::string error;
    EXPECT_TRUE(validateProblem(problem, error)) << error;
    std::vector<int64_t> rows(getNumRows(problem));
    for (size_t r = 0; r < rows.size(); ++r)
      rows[r] = static_cast<int64_t>(r);
    std::vector<double> out;
    referenceRows(problem, rows, out);
    return out;
  }
};

TEST(ReferenceVariantsTest, WindowWithoutCausal) {
  // Row i sees keys i - 1 .. i + 2 (inside 0 .. 5).
  MeanProblem p(6, 6);
  p.problem.windowLeft = 1;
  p.problem.windowRight = 2;
  std::vector<double> out = p.run();
  std::vector<double> expected = {1.0, 1.5, 2.5, 3.5, 4.0, 4.5};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_DOUBLE_EQ(out[i], expected[i]) << "row " << i;
}

TEST(ReferenceVariantsTest, WindowBottomRight) {
  // Tq = 2, Tk = 5, off = 3: row i sees keys i + 3 - 1 .. i + 3 (causal
  // caps the window's right side of 4).
  MeanProblem p(2, 5);
  p.problem.causal = CausalMode::BottomRight;
  p.problem.windowLeft = 1;
  p.problem.windowRight = 4;
  std::vector<double> out = p.run();
  EXPECT_DOUBLE_EQ(out[0], 2.5);
  EXPECT_DOUBLE_EQ(out[1], 3.5);
}

TEST(ReferenceVariantsTest, WindowLeavesRowEmpty) {
  // Top-left causal with Tq > Tk and a window of 0 to the left: row 3 would
  // see key 3 only, past Tk = 2: zero. Unbounded (-1) on the left: keys
  // 0 .. min(i, 1).
  MeanProblem p(4, 2);
  p.problem.causal = CausalMode::TopLeft;
  p.problem.windowLeft = 0;
  std::vector<double> out = p.run();
  EXPECT_EQ(out, (std::vector<double>{0.0, 1.0, 0.0, 0.0}));
  p.problem.windowLeft = -1;
  out = p.run();
  EXPECT_EQ(out, (std::vector<double>{0.0, 0.5, 0.5, 0.5}));
}

TEST(ReferenceVariantsTest, Softcap) {
  // Q = 1, K = [2, -3], scale 1, softcap 1.5: s = 1.5 tanh([2, -3] / 1.5).
  MeanProblem p(1, 2);
  p.q.set(0, 1.0);
  p.k.set(0, 2.0);
  p.k.set(1, -3.0);
  p.problem.scale = 1.0;
  p.problem.softcap = 1.5;
  double s0 = 1.5 * std::tanh(2.0 / 1.5), s1 = 1.5 * std::tanh(-3.0 / 1.5);
  double w1 = std::exp(s1) / (std::exp(s0) + std::exp(s1));
  EXPECT_NEAR(p.run()[0], w1, 1e-15);
}

TEST(ReferenceVariantsTest, ScoreModAfterSoftcapAndBias) {
  // score_mod sees softcap(scale * dot) + bias and its result is final.
  MeanProblem p(1, 2);
  p.q.set(0, 1.0);
  p.k.set(1, 2.0);
  HostTensor mask = makeZeroTensor({1, 2}, ElementType::F32);
  mask.set(1, 0.25);
  p.problem.mask = &mask;
  p.problem.softcap = 4.0;
  std::vector<double> seen;
  p.problem.scoreMod = [&](double s, int64_t b, int64_t h, int64_t i,
                           int64_t j) {
    EXPECT_EQ(b + h + i, 0);
    seen.push_back(s);
    return j == 1 ? 2.0 * s : s;
  };
  std::vector<double> out = p.run();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_DOUBLE_EQ(seen[0], 4.0 * std::tanh(1.0 / 4.0));
  EXPECT_DOUBLE_EQ(seen[1], 4.0 * std::tanh(2.0 / 4.0) + 0.25);
  double w1 = 1.0 / (1.0 + std::exp(seen[0] - 2.0 * seen[1]));
  EXPECT_NEAR(out[0], w1, 1e-15);
}

TEST(ReferenceVariantsTest, ModsRemoveKeys) {
  // mask_mod drops odd keys; score_mod sends key 2 to -inf (masked) and
  // every key of row 1 to -inf (a row with no kept key: 0).
  MeanProblem p(2, 6);
  p.problem.maskMod = [](int64_t, int64_t, int64_t, int64_t j) {
    return j % 2 == 0;
  };
  p.problem.scoreMod = [](double s, int64_t, int64_t, int64_t i, int64_t j) {
    return i == 1 || j == 2 ? -std::numeric_limits<double>::infinity() : s;
  };
  std::vector<double> out = p.run();
  EXPECT_DOUBLE_EQ(out[0], 2.0); // keys 0 and 4
  EXPECT_EQ(out[1], 0.0);
}

TEST(ReferenceVariantsTest, Validation) {
  MeanProblem p(2, 2);
  std::string error;
  p.problem.windowLeft = -2;
  EXPECT_FALSE(validateProblem(p.problem, error));
  EXPECT_EQ(error, "window left and right must be >= -1, got -2 and -1");
  p.problem.windowLeft = 3;
  p.problem.softcap = -1.0;
  EXPECT_FALSE(validateProblem(p.problem, error));
  EXPECT_EQ(error, "softcap must be finite and > 0 (0: none), got -1");
}

TEST(ReferenceVariantsTest, IntegerTensors) {
  EXPECT_STREQ(getTypeName(ElementType::I32), "i32");
  EXPECT_EQ(getElementBytes(ElementType::I64), 8u);
  EXPECT_FALSE(isFloatType(ElementType::I32));
  ElementType type;
  ASSERT_TRUE(parseElementType("i64", type));
  EXPECT_EQ(type, ElementType::I64);
  // Random ids in [0, 4), every value drawn.
  HostTensor ids = makeRandomTensor({1000}, ElementType::I32, 7);
  int counts[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < 1000; ++i) {
    int64_t id = ids.getInteger(i);
    ASSERT_TRUE(id >= 0 && id < 4) << id;
    ++counts[id];
  }
  for (int count : counts)
    EXPECT_GT(count, 150);
  // Past 2^53, exactly; and through .npy ('<i8').
  HostTensor big = makeZeroTensor({2}, ElementType::I64);
  int64_t value = (int64_t{1} << 60) + 1;
  std::memcpy(big.data.data() + 8, &value, sizeof(value));
  EXPECT_EQ(big.getInteger(1), value);
  std::string path = ::testing::TempDir() + "/ids.npy", error;
  ASSERT_TRUE(writeNpy(path, big, error)) << error;
  HostTensor read;
  ASSERT_TRUE(readNpy(path, read, error)) << error;
  EXPECT_EQ(read.type, ElementType::I64);
  EXPECT_EQ(read.getInteger(1), value);
  std::remove(path.c_str());
}

} // namespace

namespace {

/// The per-batch key counts (kv_lengths): B = 3, Tq = 2, Tk = 6, Q = 0
/// (every visible key weighs the same), K = 1, V[j] = j (Dv = 1): a row's
/// output is the mean of its visible keys' indices, its log-sum-exp the log
/// of their count.
struct LengthsProblem {
  HostTensor q, k, v, lengths;
  AttentionProblem problem;

  explicit LengthsProblem(std::vector<int32_t> counts) {
    q = makeZeroTensor({3, 1, 2, 1}, ElementType::F32);
    k = makeZeroTensor({3, 1, 6, 1}, ElementType::F32);
    v = makeZeroTensor({3, 1, 6, 1}, ElementType::F32);
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t j = 0; j < 6; ++j) {
        k.set(b * 6 + j, 1.0);
        v.set(b * 6 + j, static_cast<double>(j));
      }
    lengths = makeZeroTensor({3}, ElementType::I32);
    for (int64_t b = 0; b < 3; ++b)
      lengths.set(b, counts[b]);
    problem.query = &q;
    problem.key = &k;
    problem.value = &v;
    problem.kvLengths = &lengths;
    problem.causal = CausalMode::BottomRight;
  }

  std::vector<double> run(std::vector<double> *lse = nullptr) {
    std::string error;
    EXPECT_TRUE(validateProblem(problem, error)) << error;
    std::vector<double> out;
    referenceRows(problem, {0, 1, 2, 3, 4, 5}, out, lse);
    return out;
  }
};

TEST(ReferenceVariantsTest, KvLengthsBottomRight) {
  // Batch 0 has no key; batch 1 all 6 (offset 4: rows see 0..4 and 0..5);
  // batch 2 three (offset 1: 0..1 and 0..2). Out-of-range counts clamp.
  for (std::vector<int32_t> counts :
       {std::vector<int32_t>{0, 6, 3}, std::vector<int32_t>{-4, 99, 3}}) {
    LengthsProblem p(counts);
    std::vector<double> lse;
    std::vector<double> out = p.run(&lse);
    std::vector<double> expected = {0.0, 0.0, 2.0, 2.5, 0.5, 1.0};
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_DOUBLE_EQ(out[i], expected[i]) << "row " << i;
    double negInf = -std::numeric_limits<double>::infinity();
    std::vector<double> counted = {negInf,        negInf,        std::log(5.0),
                                   std::log(6.0), std::log(2.0), std::log(3.0)};
    for (size_t i = 0; i < counted.size(); ++i)
      EXPECT_DOUBLE_EQ(lse[i], counted[i]) << "row " << i;
  }
}

TEST(ReferenceVariantsTest, KvLengthsWindow) {
  // A window of one key to the left, from each batch's own offset.
  LengthsProblem p({0, 6, 3});
  p.problem.windowLeft = 1;
  std::vector<double> out = p.run();
  std::vector<double> expected = {0.0, 0.0, 3.5, 4.5, 0.5, 1.5};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_DOUBLE_EQ(out[i], expected[i]) << "row " << i;
  // Without causal the offset is 0, and the counts cut the keys alone.
  p.problem.causal = CausalMode::None;
  p.problem.windowLeft = -1;
  out = p.run();
  expected = {0.0, 0.0, 2.5, 2.5, 1.0, 1.0};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_DOUBLE_EQ(out[i], expected[i]) << "row " << i;
}

TEST(ReferenceVariantsTest, KvLengthsValidation) {
  LengthsProblem p({1, 2, 3});
  std::string error;
  HostTensor wrongType = makeZeroTensor({3}, ElementType::I64);
  p.problem.kvLengths = &wrongType;
  EXPECT_FALSE(validateProblem(p.problem, error));
  EXPECT_EQ(error, "kv_lengths has element type i64, expected i32");
  HostTensor wrongCount = makeZeroTensor({2}, ElementType::I32);
  p.problem.kvLengths = &wrongCount;
  EXPECT_FALSE(validateProblem(p.problem, error));
  EXPECT_EQ(error, "kv_lengths has shape 2xi32, expected 3xi32 (one length "
                   "per batch of the query 3x1x2x1xf32)");
  HostTensor wrongRank = makeZeroTensor({3, 1}, ElementType::I32);
  p.problem.kvLengths = &wrongRank;
  EXPECT_FALSE(validateProblem(p.problem, error));
  EXPECT_EQ(error, "kv_lengths has shape 3x1xi32, expected rank 1 (B)");
}

} // namespace

//===- ReferenceVarlenTest.cpp - The reference's packed sequences ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Packed variable-length sequences (cu_seqlens) in the float64 reference:
// each sequence equals the attention of its own rows and keys as a problem
// of its own (causal alignments and windows per sequence), rows of no
// sequence are zero with a log-sum-exp of -inf; and the offsets' checks.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <numeric>

using namespace attn::runtime;

namespace {

HostTensor makeOffsets(std::vector<double> values) {
  HostTensor tensor =
      makeZeroTensor({int64_t(values.size())}, ElementType::I32);
  for (size_t i = 0; i < values.size(); ++i)
    tensor.set(int64_t(i), values[i]);
  return tensor;
}

/// Rows [begin, end) of every head of a 1 x H x T x D tensor.
HostTensor sliceRows(const HostTensor &t, int64_t begin, int64_t end) {
  int64_t h = t.shape[1], total = t.shape[2], d = t.shape[3];
  HostTensor out = makeZeroTensor({1, h, end - begin, d}, t.type);
  for (int64_t head = 0; head < h; ++head)
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < d; ++c)
        out.set((head * (end - begin) + r - begin) * d + c,
                t.get((head * total + r) * d + c));
  return out;
}

std::vector<int64_t> allRows(const AttentionProblem &problem) {
  std::vector<int64_t> rows(getNumRows(problem));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

TEST(ReferenceVarlenTest, EachSequenceAlone) {
  const int64_t hq = 4, hkv = 2, tq = 40, tk = 50, d = 8;
  HostTensor q = makeRandomTensor({1, hq, tq, d}, ElementType::F32, 1);
  HostTensor k = makeRandomTensor({1, hkv, tk, d}, ElementType::F32, 2);
  HostTensor v = makeRandomTensor({1, hkv, tk, d}, ElementType::F32, 3);
  // Rows 0..1 and 36..39 belong to no sequence; sequence 1 is empty,
  // sequence 2 has no keys.
  std::vector<double> cq = {2, 12, 12, 20, 36}, ck = {0, 15, 20, 20, 50};
  HostTensor cuQ = makeOffsets(cq), cuK = makeOffsets(ck);
  for (CausalMode causal :
       {CausalMode::None, CausalMode::TopLeft, CausalMode::BottomRight}) {
    AttentionProblem packed{&q, &k, &v};
    packed.scale = 0.3;
    packed.causal = causal;
    packed.windowLeft = 6;
    packed.cuSeqlensQ = &cuQ;
    packed.cuSeqlensK = &cuK;
    std::string error;
    ASSERT_TRUE(validateProblem(packed, error)) << error;
    std::vector<double> out, lse;
    referenceRows(packed, allRows(packed), out, &lse);
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i : {0, 1, 36, 39, 12, 19}) {
        EXPECT_TRUE(std::isinf(lse[h * tq + i]) && lse[h * tq + i] < 0) << i;
        for (int64_t c = 0; c < d; ++c)
          EXPECT_EQ(out[(h * tq + i) * d + c], 0.0);
      }
    for (size_t s = 0; s + 1 < cq.size(); ++s) {
      int64_t q0 = int64_t(cq[s]), q1 = int64_t(cq[s + 1]);
      int64_t k0 = int64_t(ck[s]), k1 = int64_t(ck[s + 1]);
      if (q1 == q0 || k1 == k0)
        continue;
      HostTensor qs = sliceRows(q, q0, q1), ks = sliceRows(k, k0, k1),
                 vs = sliceRows(v, k0, k1);
      AttentionProblem alone{&qs, &ks, &vs};
      alone.scale = packed.scale;
      alone.causal = causal;
      alone.windowLeft = packed.windowLeft;
      std::vector<double> aloneOut, aloneLse;
      referenceRows(alone, allRows(alone), aloneOut, &aloneLse);
      for (int64_t h = 0; h < hq; ++h)
        for (int64_t i = 0; i < q1 - q0; ++i) {
          int64_t packedRow = h * tq + q0 + i, row = h * (q1 - q0) + i;
          EXPECT_EQ(lse[packedRow], aloneLse[row]);
          for (int64_t c = 0; c < d; ++c)
            EXPECT_EQ(out[packedRow * d + c], aloneOut[row * d + c]);
        }
    }
  }
}

TEST(ReferenceVarlenTest, Validation) {
  HostTensor q = makeRandomTensor({1, 2, 10, 4}, ElementType::F16, 1);
  HostTensor k = makeRandomTensor({1, 2, 12, 4}, ElementType::F16, 2);
  HostTensor good = makeOffsets({0, 4, 10}), goodK = makeOffsets({0, 5, 12});
  AttentionProblem problem{&q, &k, &k};
  problem.cuSeqlensQ = &good;
  problem.cuSeqlensK = &goodK;
  std::string error;
  EXPECT_TRUE(validateProblem(problem, error)) << error;
  struct Case {
    std::vector<double> q, k;
    const char *message;
  } cases[] = {
      {{0, 6, 4, 10},
       {0, 1, 2, 12},
       "cu_seqlens_q[2] = 4 is below 6 (cu_seqlens_q[1]): the offsets must "
       "not decrease"},
      {{0, 4, 10},
       {0, 5, 13},
       "cu_seqlens_k[2] = 13 is past the packed "
       "length 12"},
      {{-2, 4, 10}, {0, 5, 12}, "cu_seqlens_q[0] = -2 is below 0"},
      {{0, 4, 10},
       {0, 5, 6, 12},
       "cu_seqlens_q has shape 3xi32 and cu_seqlens_k 4xi32, expected one "
       "length (N + 1)"},
      {{0},
       {0},
       "cu_seqlens_q has shape 1xi32, expected N + 1 >= 2 offsets "
       "(N >= 1 sequences)"},
  };
  for (const Case &c : cases) {
    HostTensor cuQ = makeOffsets(c.q), cuK = makeOffsets(c.k);
    problem.cuSeqlensQ = &cuQ;
    problem.cuSeqlensK = &cuK;
    EXPECT_FALSE(validateProblem(problem, error));
    EXPECT_EQ(error, c.message);
  }
  problem.cuSeqlensK = nullptr;
  EXPECT_FALSE(validateProblem(problem, error));
  EXPECT_EQ(error, "cu_seqlens_q and cu_seqlens_k go together, got only "
                   "cu_seqlens_q");
  HostTensor q2 = makeRandomTensor({2, 2, 10, 4}, ElementType::F16, 1);
  HostTensor k2 = makeRandomTensor({2, 2, 12, 4}, ElementType::F16, 2);
  AttentionProblem batched{&q2, &k2, &k2};
  batched.cuSeqlensQ = &good;
  batched.cuSeqlensK = &goodK;
  EXPECT_FALSE(validateProblem(batched, error));
  EXPECT_EQ(error, "query has shape 2x2x10x4xf16, expected batch 1 with "
                   "cu_seqlens (the sequences are packed along Tq and Tk)");
}

TEST(ReferenceVarlenTest, RandomSeqlens) {
  for (int64_t count : {2, 3, 4, 9}) {
    HostTensor offsets = makeRandomSeqlens(count, 100, uint64_t(count));
    std::string error;
    EXPECT_TRUE(validateSeqlens(offsets, "cu", 100, error)) << error;
    EXPECT_EQ(offsets.getInteger(0), 0);
    EXPECT_EQ(offsets.getInteger(count - 1), 100);
    if (count >= 4) {
      bool empty = false;
      for (int64_t s = 0; s + 1 < count; ++s)
        empty |= offsets.getInteger(s) == offsets.getInteger(s + 1);
      EXPECT_TRUE(empty);
    }
  }
}

} // namespace

//===- ReferencePagedTest.cpp - The reference's paged KV cache ------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A paged KV cache (block_table) in the float64 reference: the attention
// over a pool of pages equals the attention over the contiguous keys its
// table gathers (with kv_lengths, causal alignments, a window), entries
// past a batch's keys are never read, and the checks of the table.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace attn::runtime;

namespace {

HostTensor makeTable(int64_t batch, int64_t pages,
                     const std::vector<double> &ids) {
  HostTensor table = makeZeroTensor({batch, pages}, ElementType::I32);
  for (size_t i = 0; i < ids.size(); ++i)
    table.set(int64_t(i), ids[i]);
  return table;
}

/// B x H x P * page x D: the keys the table gives each batch, in order.
HostTensor gather(const HostTensor &pool, const HostTensor &table) {
  int64_t h = pool.shape[1], page = pool.shape[2], d = pool.shape[3];
  int64_t batch = table.shape[0], pages = table.shape[1];
  HostTensor out = makeZeroTensor({batch, h, pages * page, d}, pool.type);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t head = 0; head < h; ++head)
      for (int64_t j = 0; j < pages * page; ++j) {
        int64_t id = table.getInteger(b * pages + j / page);
        for (int64_t c = 0; c < d; ++c)
          out.set(((b * h + head) * pages * page + j) * d + c,
                  pool.get(((id * h + head) * page + j % page) * d + c));
      }
  return out;
}

std::vector<int64_t> allRows(const AttentionProblem &problem) {
  std::vector<int64_t> rows(getNumRows(problem));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

TEST(ReferencePagedTest, EqualsTheGatheredKeys) {
  const int64_t b = 3, hq = 4, hkv = 2, tq = 9, page = 8, pages = 3, d = 8;
  HostTensor q = makeRandomTensor({b, hq, tq, d}, ElementType::F32, 1);
  HostTensor k = makeRandomTensor({11, hkv, page, d}, ElementType::F32, 2);
  HostTensor v = makeRandomTensor({11, hkv, page, d}, ElementType::F32, 3);
  // Batch 1 shares page 7 with batch 0 (a common prefix); batch 2 has 10
  // keys, so its last entry (out of the pool) is never read.
  HostTensor table = makeTable(b, pages, {7, 2, 9, 7, 0, 4, 5, 10, 99});
  HostTensor lengths = makeZeroTensor({b}, ElementType::I32);
  lengths.set(0, 24);
  lengths.set(1, 17);
  lengths.set(2, 10);
  HostTensor full = makeTable(b, pages, {7, 2, 9, 7, 0, 4, 5, 10, 0});
  HostTensor gk = gather(k, full), gv = gather(v, full);
  for (CausalMode causal :
       {CausalMode::None, CausalMode::TopLeft, CausalMode::BottomRight}) {
    AttentionProblem paged{&q, &k, &v};
    paged.scale = 0.4;
    paged.causal = causal;
    paged.windowLeft = 12;
    paged.kvLengths = &lengths;
    paged.blockTable = &table;
    AttentionProblem contiguous = paged;
    contiguous.key = &gk;
    contiguous.value = &gv;
    contiguous.blockTable = nullptr;
    std::string error;
    ASSERT_TRUE(validateProblem(paged, error)) << error;
    ASSERT_TRUE(validateProblem(contiguous, error)) << error;
    std::vector<double> out, lse, want, wantLse;
    referenceRows(paged, allRows(paged), out, &lse);
    referenceRows(contiguous, allRows(contiguous), want, &wantLse);
    EXPECT_EQ(out, want);
    EXPECT_EQ(lse, wantLse);
  }
}

TEST(ReferencePagedTest, Errors) {
  HostTensor q = makeZeroTensor({2, 2, 1, 8}, ElementType::F32);
  HostTensor k = makeZeroTensor({4, 1, 16, 8}, ElementType::F32);
  HostTensor table = makeTable(2, 2, {0, 1, 2, 4});
  AttentionProblem problem{&q, &k, &k};
  problem.blockTable = &table;
  std::string error;
  EXPECT_FALSE(validateProblem(problem, error));
  EXPECT_EQ(error, "block_table[1, 1] = 4 is not a page of the pool (0..3, "
                   "key 4x1x16x8xf32)");
  // Batch 1 holding 16 keys uses one page only.
  HostTensor lengths = makeZeroTensor({2}, ElementType::I32);
  lengths.set(0, 32);
  lengths.set(1, 16);
  problem.kvLengths = &lengths;
  EXPECT_TRUE(validateProblem(problem, error)) << error;
  HostTensor rows = makeTable(3, 2, {0, 1, 2, 3, 0, 1});
  problem.blockTable = &rows;
  EXPECT_FALSE(validateProblem(problem, error));
  EXPECT_EQ(error, "block_table has shape 3x2xi32, expected 2xP (one row of "
                   "pages per batch of the query 2x2x1x8xf32)");
  HostTensor wide = makeZeroTensor({2, 2}, ElementType::F32);
  problem.blockTable = &wide;
  EXPECT_FALSE(validateProblem(problem, error));
  EXPECT_EQ(error, "block_table has element type f32, expected i32");
}

} // namespace

//===- HostTensorTest.cpp - Tests of HostTensor and conversions -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace attn::runtime;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

const float kInf = std::numeric_limits<float>::infinity();

TEST(HalfTest, KnownBitPatterns) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.5f), 0xc100);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400);     // Smallest normal.
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);     // Smallest subnormal.
  EXPECT_EQ(floatToHalf(0x3p-24f), 0x0003);     // Subnormal.
  EXPECT_EQ(floatToHalf(0x1.ff8p-15f), 0x03ff); // Largest subnormal.
  EXPECT_EQ(floatToHalf(kInf), 0x7c00);
  EXPECT_EQ(floatToHalf(-kInf), 0xfc00);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);   // Overflow.
  EXPECT_EQ(floatToHalf(1e-10f), 0x0000); // Underflow.
  EXPECT_EQ(floatToHalf(-1e-10f), 0x8000);

  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc100), -2.5f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x8001), -0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03ff), 0x1.ff8p-15f);
  EXPECT_EQ(halfToFloat(0x7c00), kInf);
  EXPECT_EQ(halfToFloat(0xfc00), -kInf);
  EXPECT_EQ(bitsOf(halfToFloat(0x8000)), 0x80000000u);
}

TEST(HalfTest, NaN) {
  uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  // A signalling NaN whose payload lives only in the low bits stays NaN.
  EXPECT_NE(floatToHalf(floatOf(0x7f800001u)) & 0x03ff, 0);
  EXPECT_EQ(floatToHalf(floatOf(0xffc00000u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

TEST(HalfTest, RoundToNearestEven) {
  // Between 1 and 1 + 2^-10: the tie goes to the even mantissa (1.0).
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  // Between 1 + 2^-10 (odd) and 1 + 2^-9: the tie goes up.
  EXPECT_EQ(floatToHalf(1.0f + 0x3p-11f), 0x3c02);
  // Just above and below a tie.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f - 0x1p-20f), 0x3c00);
  // 65520 is the tie between 65504 (odd) and infinity: rounds to infinity.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  // Subnormal ties: 2^-25 -> 0 (even), 3 * 2^-25 -> 2 * 2^-24 (even).
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(floatToHalf(0x3p-25f), 0x0002);
  EXPECT_EQ(floatToHalf(0x5p-25f), 0x0002);
  // Rounding up from the largest subnormal reaches the smallest normal.
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 -> 2.0.
  EXPECT_EQ(floatToHalf(2.0f - 0x1p-12f), 0x4000);
}

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t half = static_cast<uint16_t>(bits);
    float value = halfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(value))));
      continue;
    }
    ASSERT_EQ(floatToHalf(value), half) << "bits 0x" << std::hex << bits;
  }
}

TEST(BF16Test, KnownBitPatterns) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16(-2.5f), 0xc020);
  EXPECT_EQ(floatToBF16(kInf), 0x7f80);
  EXPECT_EQ(floatToBF16(-kInf), 0xff80);
  EXPECT_EQ(floatToBF16(floatOf(0x00010000u)), 0x0001); // Subnormal.
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc020), -2.5f);
  EXPECT_EQ(bf16ToFloat(0x7f80), kInf);
}

TEST(BF16Test, RoundToNearestEvenAndNaN) {
  // Ties: 0x3f80'8000 is halfway between 0x3f80 (even) and 0x3f81.
  EXPECT_EQ(floatToBF16(floatOf(0x3f808000u)), 0x3f80);
  EXPECT_EQ(floatToBF16(floatOf(0x3f818000u)), 0x3f82);
  EXPECT_EQ(floatToBF16(floatOf(0x3f808001u)), 0x3f81);
  EXPECT_EQ(floatToBF16(floatOf(0x3f807fffu)), 0x3f80);
  // NaNs whose payload is only in the low 16 bits must not become Inf.
  uint16_t nan = floatToBF16(floatOf(0x7f800001u));
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(floatOf(0xffffffffu)))));
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = bf16ToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) {
      ASSERT_EQ(floatToBF16(value), bits);
    }
  }
}

TEST(ElementTypeTest, NamesAndSizes) {
  EXPECT_STREQ(getTypeName(ElementType::F32), "f32");
  EXPECT_STREQ(getTypeName(ElementType::F16), "f16");
  EXPECT_STREQ(getTypeName(ElementType::BF16), "bf16");
  EXPECT_STREQ(getTypeName(ElementType::I1), "i1");
  EXPECT_EQ(getElementBytes(ElementType::F32), 4u);
  EXPECT_EQ(getElementBytes(ElementType::F16), 2u);
  EXPECT_EQ(getElementBytes(ElementType::BF16), 2u);
  EXPECT_EQ(getElementBytes(ElementType::I1), 1u);
}

// Found by attn-fuzz-npy: a .npy file may hold such a shape, and the
// product of its other dimensions overflows int64 (UBSan).
TEST(HostTensorTest, AZeroDimensionMakesAnEmptyTensor) {
  HostTensor empty;
  empty.shape = {999999999999999, 999999999999999, 0};
  EXPECT_EQ(empty.getNumElements(), 0);
  EXPECT_EQ(empty.getNumBytes(), 0u);
}

TEST(HostTensorTest, GetSetRoundsToTheElementType) {
  HostTensor f16 = makeZeroTensor({2, 3}, ElementType::F16);
  EXPECT_EQ(f16.data.size(), 12u);
  EXPECT_EQ(f16.getNumElements(), 6);
  f16.set(5, 1.0 + 0x1p-12);
  EXPECT_EQ(f16.get(5), 1.0);
  f16.set(4, -2.5);
  EXPECT_EQ(f16.data[8], 0x00);
  EXPECT_EQ(f16.data[9], 0xc1);

  HostTensor bf16 = makeZeroTensor({4}, ElementType::BF16);
  bf16.set(1, 1.0 + 0x1p-9);
  EXPECT_EQ(bf16.get(1), 1.0);
  bf16.set(2, 3.0);
  EXPECT_EQ(bf16.get(2), 3.0);

  HostTensor f32 = makeZeroTensor({1}, ElementType::F32);
  f32.set(0, 0.1);
  EXPECT_EQ(f32.get(0), static_cast<double>(0.1f));

  HostTensor i1 = makeZeroTensor({3}, ElementType::I1);
  i1.set(0, 2.0);
  i1.set(2, 0.0);
  EXPECT_EQ(i1.data[0], 1);
  EXPECT_EQ(i1.get(0), 1.0);
  EXPECT_EQ(i1.get(2), 0.0);
}

TEST(HostTensorTest, ShapeString) {
  HostTensor t = makeZeroTensor({2, 3, 4}, ElementType::BF16);
  EXPECT_EQ(t.getShapeString(), "2x3x4xbf16");
  EXPECT_EQ(formatShape({7}, ElementType::I1), "7xi1");
}

TEST(TensorSpecTest, Good) {
  std::vector<int64_t> shape;
  ElementType type = ElementType::F32;
  std::string error;
  ASSERT_TRUE(parseTensorSpec("2x32x1024x128xbf16", shape, type, error));
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 32, 1024, 128}));
  EXPECT_EQ(type, ElementType::BF16);
  ASSERT_TRUE(parseTensorSpec("7xi1", shape, type, error));
  EXPECT_EQ(shape, (std::vector<int64_t>{7}));
  EXPECT_EQ(type, ElementType::I1);
  ASSERT_TRUE(parseTensorSpec("1x1xf16", shape, type, error));
  EXPECT_EQ(type, ElementType::F16);
  ASSERT_TRUE(parseTensorSpec("3x4xf32", shape, type, error));
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(type, ElementType::F32);
}

TEST(TensorSpecTest, Bad) {
  std::vector<int64_t> shape = {9};
  ElementType type = ElementType::F32;
  std::string error;
  EXPECT_FALSE(parseTensorSpec("2x?xf32", shape, type, error));
  EXPECT_EQ(error, "invalid tensor spec '2x?xf32': dimension '?' is not a "
                   "positive integer");
  EXPECT_FALSE(parseTensorSpec("2x0xf32", shape, type, error));
  EXPECT_NE(error.find("dimension '0' is not a positive integer"),
            std::string::npos);
  EXPECT_FALSE(parseTensorSpec("2x-3xf32", shape, type, error));
  EXPECT_NE(error.find("'-3'"), std::string::npos);
  EXPECT_FALSE(parseTensorSpec("2xxf32", shape, type, error));
  EXPECT_NE(error.find("dimension ''"), std::string::npos);
  EXPECT_FALSE(parseTensorSpec("2x3xf64", shape, type, error));
  EXPECT_NE(error.find("unknown element type 'f64'"), std::string::npos);
  EXPECT_FALSE(parseTensorSpec("2x3x", shape, type, error));
  EXPECT_NE(error.find("unknown element type ''"), std::string::npos);
  EXPECT_FALSE(parseTensorSpec("f32", shape, type, error));
  EXPECT_NE(error.find("e.g. 2x32x1024x128xbf16"), std::string::npos);
  EXPECT_FALSE(parseTensorSpec("xf32", shape, type, error));
  EXPECT_FALSE(parseTensorSpec("", shape, type, error));
  EXPECT_FALSE(parseTensorSpec("2 x3xf32", shape, type, error));
  EXPECT_FALSE(parseTensorSpec("99999999999999999999xf32", shape, type, error));
  EXPECT_FALSE(parseTensorSpec("16777216x16777216x2xf32", shape, type, error));
  EXPECT_NE(error.find("2^48"), std::string::npos);
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_EQ(shape, (std::vector<int64_t>{9})); // Unchanged on failure.
}

TEST(RandomTest, DeterministicAndInRange) {
  HostTensor a = makeRandomTensor({4, 64}, ElementType::F32, 42);
  HostTensor b = makeRandomTensor({4, 64}, ElementType::F32, 42);
  HostTensor c = makeRandomTensor({4, 64}, ElementType::F32, 43);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  double minValue = 1.0, maxValue = -1.0;
  for (int64_t i = 0; i < a.getNumElements(); ++i) {
    minValue = std::min(minValue, a.get(i));
    maxValue = std::max(maxValue, a.get(i));
  }
  EXPECT_GE(minValue, -1.0);
  EXPECT_LT(maxValue, 1.0);
  EXPECT_LT(minValue, -0.5); // Spread over the range.
  EXPECT_GT(maxValue, 0.5);
}

TEST(RandomTest, KnownFirstValues) {
  // Pins the generator: the same values on every platform and compiler.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ull);
  HostTensor t = makeRandomTensor({2}, ElementType::F32, 0);
  EXPECT_EQ(t.get(0), static_cast<float>(
                          2.0 * (0xe220a8397b1dcdafull >> 11) * 0x1p-53 - 1.0));
}

TEST(RandomTest, RoundedTypesAndBool) {
  HostTensor bf16 = makeRandomTensor({1000}, ElementType::BF16, 7);
  HostTensor f16 = makeRandomTensor({1000}, ElementType::F16, 7);
  for (int64_t i = 0; i < 1000; ++i) {
    double value = bf16.get(i);
    EXPECT_EQ(value, bf16ToFloat(floatToBF16(static_cast<float>(value))));
    EXPECT_TRUE(value >= -1.0 && value <= 1.0);
    EXPECT_TRUE(f16.get(i) >= -1.0 && f16.get(i) <= 1.0);
  }
  HostTensor mask = makeRandomTensor({10000}, ElementType::I1, 3);
  int64_t ones = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    ASSERT_LE(mask.data[i], 1);
    ones += mask.data[i];
  }
  EXPECT_GT(ones, 7200);
  EXPECT_LT(ones, 7800);
}

TEST(RandomTest, NeverAllZero) {
  for (uint64_t seed = 0; seed < 64; ++seed) {
    HostTensor t = makeRandomTensor({1}, ElementType::I1, seed);
    EXPECT_EQ(t.get(0), 1.0) << "seed " << seed;
    HostTensor f = makeRandomTensor({1}, ElementType::BF16, seed);
    EXPECT_NE(f.get(0), 0.0) << "seed " << seed;
  }
}

} // namespace

namespace {

TEST(HostTensorTest, RandomLengths) {
  // In 0..capacity, the same for a seed; from 2 batches on one is the
  // capacity, from 3 on another 0.
  for (int64_t batch : {1, 2, 3, 8, 100}) {
    for (uint64_t seed : {0u, 1u, 7u}) {
      HostTensor lengths = makeRandomLengths(batch, 1000, seed);
      ASSERT_EQ(lengths.type, ElementType::I32);
      ASSERT_EQ(lengths.shape, std::vector<int64_t>{batch});
      bool full = false, empty = false;
      for (int64_t b = 0; b < batch; ++b) {
        int64_t n = lengths.getInteger(b);
        EXPECT_GE(n, 0);
        EXPECT_LE(n, 1000);
        full |= n == 1000;
        empty |= n == 0;
      }
      EXPECT_TRUE(full || batch < 2) << batch;
      EXPECT_TRUE(empty || batch < 3) << batch;
      EXPECT_EQ(lengths.data, makeRandomLengths(batch, 1000, seed).data);
    }
  }
  // A cache of capacity 0: every length is 0.
  HostTensor none = makeRandomLengths(4, 0, 3);
  for (int64_t b = 0; b < 4; ++b)
    EXPECT_EQ(none.getInteger(b), 0);
}

} // namespace

//===- HostTensor.h - Host-side tensors for the runner ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A dense, row-major host tensor of f32/f16/bf16/i1/i32/i64 elements, the
// conversions between float and the 16-bit float formats, the parser of
// `SHAPExTYPE` tensor specs and a platform-independent random generator.
//
// This library is used by `attn-run` on every target, including a CUDA-only
// build without LLVM or MLIR: it depends on the C++17 standard library only
// and is compatible with -fno-exceptions (errors are returned, never thrown).
//
// Element data is stored in host byte order; the runner and the .npy reader
// and writer assume a little-endian host.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOSTTENSOR_H
#define ATTN_RUNTIME_HOSTTENSOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {
namespace runtime {

/// The element types of the tensors `attn-run` reads and writes. I1 is stored
/// as one byte per element (0 or 1), like numpy's bool. I32 and I64 are the
/// integer tensors a score_mod or mask_mod reads (document ids, ...).
enum class ElementType { F32, F16, BF16, I1, I32, I64 };

/// Returns "f32", "f16", "bf16", "i1", "i32" or "i64".
const char *getTypeName(ElementType type);

/// Returns the number of bytes one element occupies in memory (4, 2, 2, 1,
/// 4, 8).
size_t getElementBytes(ElementType type);

/// Returns true for F32, F16 and BF16.
bool isFloatType(ElementType type);

/// IEEE binary16 <-> binary32. floatToHalf rounds to nearest, ties to even;
/// overflow gives infinity, subnormals are exact or correctly rounded, NaN
/// stays NaN (quiet, sign and top payload bits kept).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

/// bfloat16 <-> binary32. floatToBF16 rounds to nearest, ties to even; NaN
/// stays NaN (quiet).
float bf16ToFloat(uint16_t bits);
uint16_t floatToBF16(float value);

/// A dense row-major (C order) tensor. `data` holds getNumElements() *
/// getElementBytes(type) bytes.
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Product of the dimensions (1 for a rank-0 shape).
  int64_t getNumElements() const;

  /// Number of bytes the shape and type require.
  size_t getNumBytes() const;

  /// Reads element `linearIndex` as a double (i1: 0 or 1). The value is the
  /// stored one, i.e. after rounding to the element type (i64 values past
  /// 2^53 are rounded to a double; getInteger reads them exactly).
  double get(int64_t linearIndex) const;

  /// Writes element `linearIndex`, rounding to the element type (through f32
  /// for f16/bf16). For i1, any non-zero value (NaN included) stores true.
  void set(int64_t linearIndex, double value);

  /// Reads element `linearIndex` of an I1, I32 or I64 tensor exactly.
  int64_t getInteger(int64_t linearIndex) const;

  /// Returns e.g. "2x3x4xbf16".
  std::string getShapeString() const;
};

/// Formats a shape and type as "2x3x4xbf16" (just the type for rank 0).
std::string formatShape(const std::vector<int64_t> &shape, ElementType type);

/// Parses a type name ("f32", "f16", "bf16", "i1", "i32", "i64"). Returns
/// false if unknown.
bool parseElementType(std::string_view name, ElementType &type);

/// Parses a tensor spec such as `2x32x1024x128xbf16`: one or more positive
/// integer dimensions and an element type, separated by 'x'. On failure
/// returns false and sets `error` to a one-line message.
bool parseTensorSpec(std::string_view spec, std::vector<int64_t> &shape,
                     ElementType &type, std::string &error);

/// Returns a zero-filled tensor of the given shape and type.
HostTensor makeZeroTensor(std::vector<int64_t> shape, ElementType type);

/// Returns a tensor filled with deterministic pseudo-random data that is the
/// same on every platform and compiler (splitmix64, no <random>
/// distributions). Float elements are uniform in [-1, 1), rounded to the
/// element type, and never all zero; i1 elements are true with probability
/// 0.75 and never all false; i32 and i64 elements are uniform in [0, 4) (few
/// distinct values, such as document ids), and never all zero.
HostTensor makeRandomTensor(std::vector<int64_t> shape, ElementType type,
                            uint64_t seed);

/// The splitmix64 generator used by makeRandomTensor and selectCheckRows.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double nextUnit();
  /// Uniform in [0, bound) for bound >= 1 (unbiased).
  uint64_t nextBelow(uint64_t bound);

private:
  uint64_t state;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_HOSTTENSOR_H

//===- HostTensor.h - Host-side tensors for the runner ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A dense, row-major host tensor of f32/f16/bf16/i1/i32/i64 elements, the
// 16-bit float conversions, `SHAPExTYPE` tensor specs, a platform-independent
// random generator and the memory check of attn-run's inputs. Used by attn-run
// on every target, the runner-only build included; errors are returned, never
// thrown. Element data is in host byte order (the .npy files assume a
// little-endian host).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_HOSTTENSOR_H
#define ATTN_RUNTIME_HOSTTENSOR_H

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace attn {
namespace runtime {

/// The parts one after another, as `std::ostream <<` writes them: messages
/// of strings and integers without a std::to_string for each.
template <typename... Parts>
std::string concat(const Parts &...parts) {
  std::ostringstream stream;
  (stream << ... << parts);
  return stream.str();
}

/// Sets `error` to concat(parts...) and returns false: how a check of the
/// runtime fails.
template <typename... Parts>
bool failWith(std::string &error, const Parts &...parts) {
  error = concat(parts...);
  return false;
}

/// printf into a std::string.
std::string formatString(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// "0x1f0".
inline std::string formatHex(uint64_t value) {
  return formatString("0x%" PRIx64, value);
}

/// The element types of the tensors `attn-run` reads and writes. I1 is stored
/// as one byte per element (0 or 1), like numpy's bool. I32 and I64 are the
/// integer tensors a score_mod or mask_mod reads (document ids, ...).
enum class ElementType { F32, F16, BF16, I1, I32, I64 };
constexpr int kNumElementTypes = 6;

/// "f32", "f16", "bf16", "i1", "i32" or "i64"; 4, 2, 2, 1, 4 or 8 bytes.
const char *getTypeName(ElementType type);
size_t getElementBytes(ElementType type);
bool isFloatType(ElementType type);

/// IEEE binary16 <-> binary32 (the FP16 library). floatToHalf rounds to
/// nearest, ties to even; overflow gives infinity, NaN a quiet NaN.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

/// bfloat16 <-> binary32. floatToBF16 rounds to nearest, ties to even; NaN
/// stays NaN (quiet).
float bf16ToFloat(uint16_t bits);
uint16_t floatToBF16(float value);

/// A dense row-major (C order) tensor.
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t getNumElements() const;
  size_t getNumBytes() const;
  /// The stored value of element `linearIndex` (i1: 0 or 1).
  double get(int64_t linearIndex) const;
  /// Rounds to the element type (through f32 for f16/bf16); i1 stores true
  /// for anything but 0.
  void set(int64_t linearIndex, double value);
  /// Element `linearIndex` of an I1, I32 or I64 tensor, exactly.
  int64_t getInteger(int64_t linearIndex) const;
  /// E.g. "2x3x4xbf16".
  std::string getShapeString() const;
};

/// Formats a shape and type as "2x3x4xbf16" (a negative dimension as "?", just
/// the type for rank 0).
std::string formatShape(const std::vector<int64_t> &shape, ElementType type);

/// False for an unknown type name.
bool parseElementType(std::string_view name, ElementType &type);

/// Parses `2x32x1024x128xbf16`: positive dimensions and an element type.
bool parseTensorSpec(std::string_view spec, std::vector<int64_t> &shape,
                     ElementType &type, std::string &error);

HostTensor makeZeroTensor(std::vector<int64_t> shape, ElementType type);

/// Pseudo-random data, the same on every platform (splitmix64): floats
/// uniform in [-1, 1), i1 true with probability 0.75, i32/i64 uniform in
/// [0, 4) (few distinct values, as document ids); never all zero.
HostTensor makeRandomTensor(std::vector<int64_t> shape, ElementType type,
                            uint64_t seed);

/// Random per-batch key counts for a kv_lengths operand: an i32 tensor of
/// `batch` lengths in [0, capacity], the same on every platform. With 2 or
/// more batches one of them is `capacity` (a full cache), with 3 or more
/// another is 0 (no key); the rest are uniform.
HostTensor makeRandomLengths(int64_t batch, int64_t capacity, uint64_t seed);

/// A random block table of a paged KV cache: an i32 tensor of shape
/// [batch, pages] whose entries are distinct pages of a pool of `numPages`
/// (a random permutation's first batch * pages, wrapping around when the
/// pool is smaller), the same on every platform.
HostTensor makeRandomBlockTable(int64_t batch, int64_t pages, int64_t numPages,
                                uint64_t seed);

/// Random offsets of packed sequences for a cu_seqlens operand: an i32
/// tensor of `count` (N + 1) rising offsets from 0 to `total`, the same on
/// every platform: random lengths that sum to `total`; from 3 sequences on,
/// one of them is empty (where `total` allows).
HostTensor makeRandomSeqlens(int64_t count, int64_t total, uint64_t seed);

/// Fails with "<what> needs N GB, more than the M GB ..." when `bytes`
/// exceed what this process may allocate: the host's physical memory, its
/// address space limit (RLIMIT_AS, `ulimit -v`) less the address space in
/// use, or its cgroup's memory limit (memory.max), whichever is smallest.
/// Allocating past them would abort the process.
bool checkFitsInMemory(double bytes, const std::string &what,
                       std::string &error);

/// The splitmix64 generator of makeRandomTensor and selectCheckRows.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1) (53 bits); uniform in [0, bound), unbiased.
  double nextUnit();
  uint64_t nextBelow(uint64_t bound);

private:
  uint64_t state;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_HOSTTENSOR_H

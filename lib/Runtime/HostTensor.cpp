//===- HostTensor.cpp - Host-side tensors for the runner ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include <cassert>
#include <cmath>
#include <cstring>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

const char *attn::runtime::getTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I1:
    return "i1";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "?";
}

size_t attn::runtime::getElementBytes(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I1:
    return 1;
  case ElementType::I64:
    return 8;
  }
  return 0;
}

bool attn::runtime::isFloatType(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F16 ||
         type == ElementType::BF16;
}

bool attn::runtime::parseElementType(std::string_view name, ElementType &type) {
  if (name == "f32")
    type = ElementType::F32;
  else if (name == "f16")
    type = ElementType::F16;
  else if (name == "bf16")
    type = ElementType::BF16;
  else if (name == "i1")
    type = ElementType::I1;
  else if (name == "i32")
    type = ElementType::I32;
  else if (name == "i64")
    type = ElementType::I64;
  else
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// 16-bit float conversions
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float attn::runtime::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // Inf or NaN; the payload moves to the top bits.
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) // Normal: rebias 15 -> 127.
    return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0)
    return bitsToFloat(sign);
  // Subnormal half: mantissa * 2^-24, exactly representable as a float.
  float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

uint16_t attn::runtime::floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;

  if (magnitude > 0x7f800000u) // NaN: quiet, keep the top payload bits.
    return sign | 0x7e00u | static_cast<uint16_t>((magnitude >> 13) & 0x3ffu);
  // 65520 = 65504 + half an ulp; the tie rounds to the even neighbour, which
  // is infinity because 65504 has an odd mantissa.
  if (magnitude >= 0x477ff000u)
    return sign | 0x7c00u;

  if (magnitude >= 0x38800000u) { // >= 2^-14: a normal half.
    uint32_t mantissa = magnitude & 0x7fffffu;
    uint32_t exponent = (magnitude >> 23) - 112; // Rebias 127 -> 15.
    uint32_t half = (exponent << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fffu;
    // A carry out of the mantissa correctly increments the exponent.
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }

  // Below 2^-25 everything rounds to zero; 2^-25 itself is a tie and rounds to
  // the even neighbour, zero.
  if (magnitude <= 0x33000000u)
    return sign;
  // Subnormal half, in units of 2^-24: the float is m * 2^(e - 150) with the
  // implicit bit in m, so the result is m >> (126 - e), correctly rounded.
  uint32_t exponent = magnitude >> 23;
  uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent; // 14..24.
  uint32_t half = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  // Rounding up from the largest subnormal gives the smallest normal.
  if (rest > halfway || (rest == halfway && (half & 1u)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

float attn::runtime::bf16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t attn::runtime::floatToBF16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: truncate and force quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest even; overflow past the largest bf16 gives infinity.
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

int64_t HostTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

size_t HostTensor::getNumBytes() const {
  return static_cast<size_t>(getNumElements()) * getElementBytes(type);
}

double HostTensor::get(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  const uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  switch (type) {
  case ElementType::F32: {
    float value;
    std::memcpy(&value, ptr, sizeof(value));
    return value;
  }
  case ElementType::F16:
  case ElementType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, ptr, sizeof(bits));
    return type == ElementType::F16 ? halfToFloat(bits) : bf16ToFloat(bits);
  }
  case ElementType::I1:
  case ElementType::I32:
  case ElementType::I64:
    return static_cast<double>(getInteger(linearIndex));
  }
  return 0.0;
}

int64_t HostTensor::getInteger(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  const uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  if (type == ElementType::I32) {
    int32_t value;
    std::memcpy(&value, ptr, sizeof(value));
    return value;
  }
  if (type == ElementType::I64) {
    int64_t value;
    std::memcpy(&value, ptr, sizeof(value));
    return value;
  }
  return *ptr ? 1 : 0;
}

void HostTensor::set(int64_t linearIndex, double value) {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  switch (type) {
  case ElementType::F32: {
    float narrowed = static_cast<float>(value);
    std::memcpy(ptr, &narrowed, sizeof(narrowed));
    return;
  }
  case ElementType::F16:
  case ElementType::BF16: {
    float narrowed = static_cast<float>(value);
    uint16_t bits = type == ElementType::F16 ? floatToHalf(narrowed)
                                             : floatToBF16(narrowed);
    std::memcpy(ptr, &bits, sizeof(bits));
    return;
  }
  case ElementType::I1:
    *ptr = value != 0.0 ? 1 : 0;
    return;
  case ElementType::I32: {
    auto narrowed = static_cast<int32_t>(value);
    std::memcpy(ptr, &narrowed, sizeof(narrowed));
    return;
  }
  case ElementType::I64: {
    auto narrowed = static_cast<int64_t>(value);
    std::memcpy(ptr, &narrowed, sizeof(narrowed));
    return;
  }
  }
}

std::string HostTensor::getShapeString() const {
  return formatShape(shape, type);
}

std::string attn::runtime::formatShape(const std::vector<int64_t> &shape,
                                       ElementType type) {
  std::string result;
  for (int64_t dim : shape) {
    result += std::to_string(dim);
    result += 'x';
  }
  result += getTypeName(type);
  return result;
}

//===----------------------------------------------------------------------===//
// Tensor specs
//===----------------------------------------------------------------------===//

/// The largest element count a spec may ask for (2^48), far beyond any memory
/// but small enough that byte counts never overflow int64_t.
static constexpr int64_t kMaxSpecElements = int64_t(1) << 48;

bool attn::runtime::parseTensorSpec(std::string_view spec,
                                    std::vector<int64_t> &shape,
                                    ElementType &type, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = "invalid tensor spec '" + std::string(spec) + "': " + message;
    return false;
  };
  size_t lastX = spec.rfind('x');
  if (lastX == std::string_view::npos)
    return fail("expected dimensions and an element type separated by 'x', "
                "e.g. 2x32x1024x128xbf16");
  std::string_view typeName = spec.substr(lastX + 1);
  if (!parseElementType(typeName, type))
    return fail("unknown element type '" + std::string(typeName) +
                "' (expected f32, f16, bf16 or i1)");

  std::vector<int64_t> dims;
  int64_t numElements = 1;
  std::string_view rest = spec.substr(0, lastX);
  while (true) {
    size_t next = rest.find('x');
    std::string_view token = rest.substr(0, next);
    bool valid = !token.empty();
    for (char c : token)
      valid = valid && c >= '0' && c <= '9';
    if (!valid)
      return fail("dimension '" + std::string(token) +
                  "' is not a positive integer");
    if (token.size() > 15)
      return fail("dimension '" + std::string(token) + "' is too large");
    int64_t dim = 0;
    for (char c : token)
      dim = dim * 10 + (c - '0');
    if (dim == 0)
      return fail("dimension '" + std::string(token) +
                  "' is not a positive integer");
    if (dim > kMaxSpecElements / numElements)
      return fail("the tensor has more than 2^48 elements");
    numElements *= dim;
    dims.push_back(dim);
    if (next == std::string_view::npos)
      break;
    rest = rest.substr(next + 1);
  }
  shape = std::move(dims);
  return true;
}

//===----------------------------------------------------------------------===//
// Random data
//===----------------------------------------------------------------------===//

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::nextUnit() {
  return static_cast<double>(next() >> 11) * 0x1p-53;
}

uint64_t SplitMix64::nextBelow(uint64_t bound) {
  assert(bound >= 1 && "empty range");
  // Reject the low values that would bias the remainder.
  uint64_t threshold = (0 - bound) % bound;
  while (true) {
    uint64_t value = next();
    if (value >= threshold)
      return value % bound;
  }
}

HostTensor attn::runtime::makeZeroTensor(std::vector<int64_t> shape,
                                         ElementType type) {
  HostTensor tensor;
  tensor.type = type;
  tensor.shape = std::move(shape);
  tensor.data.assign(tensor.getNumBytes(), 0);
  return tensor;
}

HostTensor attn::runtime::makeRandomTensor(std::vector<int64_t> shape,
                                           ElementType type, uint64_t seed) {
  HostTensor tensor = makeZeroTensor(std::move(shape), type);
  SplitMix64 rng(seed);
  int64_t numElements = tensor.getNumElements();
  bool anyNonZero = false;
  for (int64_t i = 0; i < numElements; ++i) {
    double unit = rng.nextUnit();
    double value = 2.0 * unit - 1.0;
    if (type == ElementType::I1)
      value = unit < 0.75 ? 1.0 : 0.0;
    else if (!isFloatType(type))
      value = std::floor(4.0 * unit);
    tensor.set(i, value);
    anyNonZero = anyNonZero || tensor.get(i) != 0.0;
  }
  if (!anyNonZero && numElements > 0)
    tensor.set(0, isFloatType(type) ? 0.5 : 1.0);
  return tensor;
}

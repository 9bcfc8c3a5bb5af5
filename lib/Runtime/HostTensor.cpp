//===- HostTensor.cpp - Host-side tensors for the runner ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include <fp16.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace attn::runtime;

std::string attn::runtime::formatString(const char *format, ...) {
  va_list args, copy;
  va_start(args, format);
  va_copy(copy, args);
  std::string text(std::max(0, std::vsnprintf(nullptr, 0, format, args)), ' ');
  std::vsnprintf(text.data(), text.size() + 1, format, copy);
  va_end(copy);
  va_end(args);
  return text;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

// Indexed by ElementType.
static const char *const kTypeNames[] = {"f32", "f16", "bf16",
                                         "i1",  "i32", "i64"};
static const size_t kTypeBytes[] = {4, 2, 2, 1, 4, 8};

const char *attn::runtime::getTypeName(ElementType type) {
  return kTypeNames[static_cast<int>(type)];
}

size_t attn::runtime::getElementBytes(ElementType type) {
  return kTypeBytes[static_cast<int>(type)];
}

bool attn::runtime::isFloatType(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F16 ||
         type == ElementType::BF16;
}

bool attn::runtime::parseElementType(std::string_view name, ElementType &type) {
  for (int i = 0; i < kNumElementTypes; ++i)
    if (name == kTypeNames[i]) {
      type = ElementType(i);
      return true;
    }
  return false;
}

//===----------------------------------------------------------------------===//
// 16-bit float conversions
//===----------------------------------------------------------------------===//

float attn::runtime::halfToFloat(uint16_t bits) {
  return fp16_ieee_to_fp32_value(bits);
}

uint16_t attn::runtime::floatToHalf(float value) {
  return fp16_ieee_from_fp32_value(value);
}

// No packaged library converts bfloat16 without pulling in a tensor library
// (Eigen): it is the top half of a float, rounded.
float attn::runtime::bf16ToFloat(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

uint16_t attn::runtime::floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: truncate and force quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest even; overflow past the largest bf16 gives infinity.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

int64_t HostTensor::getNumElements() const {
  // A zero dimension empties the tensor whatever the others are, and their
  // product may not fit in int64 (a .npy file of shape (2^62, 4, 0)).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return 0;
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

size_t HostTensor::getNumBytes() const {
  return static_cast<size_t>(getNumElements()) * getElementBytes(type);
}

template <typename T>
static T load(const uint8_t *ptr) {
  T value;
  std::memcpy(&value, ptr, sizeof(T));
  return value;
}

template <typename T>
static void store(uint8_t *ptr, T value) {
  std::memcpy(ptr, &value, sizeof(T));
}

double HostTensor::get(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  const uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  switch (type) {
  case ElementType::F32:
    return load<float>(ptr);
  case ElementType::F16:
    return halfToFloat(load<uint16_t>(ptr));
  case ElementType::BF16:
    return bf16ToFloat(load<uint16_t>(ptr));
  case ElementType::I1:
  case ElementType::I32:
  case ElementType::I64:
    break;
  }
  return static_cast<double>(getInteger(linearIndex));
}

int64_t HostTensor::getInteger(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  const uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  if (type == ElementType::I32)
    return load<int32_t>(ptr);
  if (type == ElementType::I64)
    return load<int64_t>(ptr);
  return *ptr ? 1 : 0;
}

void HostTensor::set(int64_t linearIndex, double value) {
  assert(linearIndex >= 0 && linearIndex < getNumElements() &&
         "element index out of range");
  uint8_t *ptr = data.data() + linearIndex * getElementBytes(type);
  switch (type) {
  case ElementType::F32:
    return store(ptr, static_cast<float>(value));
  case ElementType::F16:
    return store(ptr, floatToHalf(static_cast<float>(value)));
  case ElementType::BF16:
    return store(ptr, floatToBF16(static_cast<float>(value)));
  case ElementType::I1:
    return store<uint8_t>(ptr, value != 0.0 ? 1 : 0);
  case ElementType::I32:
    return store(ptr, static_cast<int32_t>(value));
  case ElementType::I64:
    return store(ptr, static_cast<int64_t>(value));
  }
}

std::string HostTensor::getShapeString() const {
  return formatShape(shape, type);
}

std::string attn::runtime::formatShape(const std::vector<int64_t> &shape,
                                       ElementType type) {
  std::string result;
  for (int64_t dim : shape)
    result += (dim < 0 ? std::string("?") : std::to_string(dim)) + "x";
  return result + getTypeName(type);
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
  auto fail = [&](const auto &...parts) {
    return failWith(error, "invalid tensor spec '", spec, "': ", parts...);
  };
  size_t lastX = spec.rfind('x');
  if (lastX == std::string_view::npos)
    return fail("expected dimensions and an element type separated by 'x', "
                "e.g. 2x32x1024x128xbf16");
  std::string_view typeName = spec.substr(lastX + 1);
  if (!parseElementType(typeName, type))
    return fail("unknown element type '", typeName,
                "' (expected f32, f16, bf16 or i1)");

  std::vector<int64_t> dims;
  int64_t numElements = 1;
  std::string_view rest = spec.substr(0, lastX);
  while (true) {
    size_t next = rest.find('x');
    std::string_view token = rest.substr(0, next);
    int64_t dim = 0;
    if (token.empty() || token.find_first_not_of("0123456789") != token.npos)
      return fail("dimension '", token, "' is not a positive integer");
    if (token.size() > 15)
      return fail("dimension '", token, "' is too large");
    std::from_chars(token.data(), token.data() + token.size(), dim);
    if (dim == 0)
      return fail("dimension '", token, "' is not a positive integer");
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
// Memory limits
//===----------------------------------------------------------------------===//

/// The first number in file `path` (-1 when there is none, e.g. "max").
static double readNumber(const std::string &path) {
  double value = -1.0;
  if (std::FILE *file = std::fopen(path.c_str(), "r")) {
    if (std::fscanf(file, "%lf", &value) != 1)
      value = -1.0;
    std::fclose(file);
  }
  return value;
}

/// The cgroup v2 directory of this process ("/sys/fs/cgroup" when unknown).
static std::string getCgroupDirectory() {
  std::string directory = "/sys/fs/cgroup";
  if (std::FILE *file = std::fopen("/proc/self/cgroup", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), file))
      if (std::strncmp(line, "0::", 3) == 0 && line[3] == '/')
        directory += std::string(line + 3, std::strcspn(line + 3, "\n"));
    std::fclose(file);
  }
  return directory;
}

bool attn::runtime::checkFitsInMemory(double bytes, const std::string &what,
                                      std::string &error) {
  double pageSize = double(sysconf(_SC_PAGESIZE));
  double limit = double(sysconf(_SC_PHYS_PAGES)) * pageSize;
  const char *kind = "of memory of this host";
  auto lower = [&](double candidate, const char *candidateKind) {
    if (candidate >= 0.0 && (limit <= 0.0 || candidate < limit)) {
      limit = candidate;
      kind = candidateKind;
    }
  };
  struct rlimit addressSpace;
  if (getrlimit(RLIMIT_AS, &addressSpace) == 0 &&
      addressSpace.rlim_cur != RLIM_INFINITY) {
    double used = std::max(readNumber("/proc/self/statm"), 0.0) * pageSize;
    lower(std::max(double(addressSpace.rlim_cur) - used, 0.0),
          "of address space this process may still map (ulimit -v)");
  }
  double cgroup = readNumber(getCgroupDirectory() + "/memory.max");
  if (cgroup < 0.0)
    cgroup = readNumber("/sys/fs/cgroup/memory.max");
  lower(cgroup, "of memory its cgroup may use (memory.max)");
  if (limit <= 0.0 || bytes <= limit)
    return true;
  return failWith(error, what,
                  formatString(" needs %.3g GB, more than the %.3g GB %s",
                               bytes * 1e-9, limit * 1e-9, kind));
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

HostTensor attn::runtime::makeRandomBlockTable(int64_t batch, int64_t pages,
                                               int64_t numPages,
                                               uint64_t seed) {
  HostTensor tensor = makeZeroTensor({batch, pages}, ElementType::I32);
  if (numPages < 1)
    return tensor;
  SplitMix64 rng(seed);
  // Fisher-Yates over the pool.
  std::vector<int64_t> order(numPages);
  for (int64_t i = 0; i < numPages; ++i)
    order[i] = i;
  for (int64_t i = numPages - 1; i > 0; --i)
    std::swap(order[i], order[int64_t(rng.nextBelow(uint64_t(i) + 1))]);
  for (int64_t i = 0; i < batch * pages; ++i)
    tensor.set(i, double(order[i % numPages]));
  return tensor;
}

HostTensor attn::runtime::makeRandomSeqlens(int64_t count, int64_t total,
                                            uint64_t seed) {
  HostTensor tensor = makeZeroTensor({count}, ElementType::I32);
  if (count < 2)
    return tensor;
  SplitMix64 rng(seed);
  total = std::max<int64_t>(total, 0);
  // N - 1 cut points in [0, total], sorted; offsets 0, cuts..., total.
  std::vector<int64_t> cuts;
  for (int64_t s = 0; s + 2 < count; ++s)
    cuts.push_back(int64_t(rng.nextBelow(uint64_t(total) + 1)));
  if (count >= 4) {
    // An empty sequence: one cut repeated.
    int64_t at = int64_t(rng.nextBelow(uint64_t(cuts.size() - 1)));
    cuts[at + 1] = cuts[at];
  }
  std::sort(cuts.begin(), cuts.end());
  tensor.set(0, 0.0);
  for (size_t s = 0; s < cuts.size(); ++s)
    tensor.set(int64_t(s) + 1, double(cuts[s]));
  tensor.set(count - 1, double(total));
  return tensor;
}

HostTensor attn::runtime::makeRandomLengths(int64_t batch, int64_t capacity,
                                            uint64_t seed) {
  HostTensor tensor = makeZeroTensor({batch}, ElementType::I32);
  SplitMix64 rng(seed);
  uint64_t values = uint64_t(std::max<int64_t>(capacity, 0)) + 1;
  for (int64_t b = 0; b < batch; ++b)
    tensor.set(b, double(rng.nextBelow(values)));
  if (batch >= 2) {
    // A full cache and, from 3 batches on, an empty one, at random places.
    int64_t full = int64_t(rng.nextBelow(uint64_t(batch)));
    tensor.set(full, double(capacity));
    if (batch >= 3) {
      int64_t empty = int64_t(rng.nextBelow(uint64_t(batch - 1)));
      tensor.set(empty >= full ? empty + 1 : empty, 0.0);
    }
  }
  return tensor;
}

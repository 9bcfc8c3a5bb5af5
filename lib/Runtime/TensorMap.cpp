//===- TensorMap.cpp - TMA descriptors of manifest operands ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The encoding of tensor_map params (getTensorMapEncoding, encodeTensorMap),
// the cache of their device copies, and ManifestKernel::getTensorMap, which
// ManifestKernel::prepare (CudaLaunch.cpp) calls for each tensor_map param.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/TensorMap.h"

#include "attn/Runtime/CudaLaunch.h"
#include "attn/Runtime/Facts.h"

#include <cstring>
#include <utility>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// The encoding
//===----------------------------------------------------------------------===//

template <typename T>
static std::string formatList(const T *values, unsigned count) {
  std::string text = "[";
  for (unsigned i = 0; i < count; ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string TensorMapEncoding::describe() const {
  static const char *const kSwizzles[] = {"NONE", "32B", "64B", "128B"};
  static const char *const kPromotions[] = {"NONE", "64B", "128B", "256B"};
  unsigned dims = rank <= kMaxRank ? rank : kMaxRank;
  return std::string(dataType == CU_TENSOR_MAP_DATA_TYPE_FLOAT32   ? "FLOAT32"
                     : dataType == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? "FLOAT16"
                     : dataType == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                         ? "BFLOAT16"
                         : "data type " + std::to_string(int(dataType))) +
         ", rank " + std::to_string(rank) + ", address " +
         formatHex(globalAddress) + ", dims " + formatList(globalDim, dims) +
         ", strides " + formatList(globalStrides, dims ? dims - 1 : 0) +
         " bytes, box " + formatList(boxDim, dims) + ", element strides " +
         formatList(elementStrides, dims) + ", interleave " +
         (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE
              ? "NONE"
              : std::to_string(int(interleave))) +
         ", swizzle " +
         (int(swizzle) < 4 ? kSwizzles[swizzle]
                           : std::to_string(int(swizzle))) +
         ", L2 promotion " +
         (int(l2Promotion) < 4 ? kPromotions[l2Promotion]
                               : std::to_string(int(l2Promotion))) +
         ", OOB fill " +
         (oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
              ? "NONE"
              : "NAN_REQUEST_ZERO_FMA");
}

/// "400 bytes" for a stride of `elements` elements of `elementBytes` bytes
/// (without int64 overflow).
static std::string formatStrideBytes(int64_t elements, int64_t elementBytes) {
  if (elements > INT64_MAX / elementBytes ||
      elements < INT64_MIN / elementBytes)
    return "more than 2^62 bytes";
  return std::to_string(elements * elementBytes) + " bytes";
}

bool attn::runtime::getTensorMapEncoding(const KernelParam &param,
                                         const TensorArg &arg,
                                         ElementType elementType,
                                         TensorMapEncoding &out,
                                         std::string &error) {
  auto fail = [&](const auto &...parts) {
    return failWith(error, "tensor map of '", param.operand, "': ", parts...);
  };
  if (param.kind != KernelParam::Kind::TensorMap)
    return fail("the param is not of kind tensor_map");
  if (!isFloatType(elementType))
    return fail("element type '", getTypeName(elementType),
                "' has no tensor map data type (expected f32, f16 or bf16)");
  // By ElementType: f32, f16, bf16.
  static const CUtensorMapDataType kDataTypes[] = {
      CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16};
  TensorMapEncoding encoding;
  encoding.dataType = kDataTypes[static_cast<int>(elementType)];
  const int64_t elementBytes =
      static_cast<int64_t>(getElementBytes(elementType));

  size_t rank = arg.sizes.size();
  if (rank < 1 || rank > TensorMapEncoding::kMaxRank)
    return fail("rank ", rank, " (a tensor map has 1 .. 5 dimensions)");
  if (arg.strides.size() != rank)
    return fail("the operand has ", rank, " sizes and ", arg.strides.size(),
                " strides");
  if (param.box.size() != rank)
    return fail("the box has ", param.box.size(),
                " entries but the operand has rank ", rank);
  // 0, 32, 64 and 128 bytes (verifyManifest): NONE, 32B, 64B, 128B.
  encoding.swizzle =
      CUtensorMapSwizzle(param.swizzle ? 1 + param.swizzle / 64 : 0);

  const int64_t kMaxSize = int64_t(1) << 32;
  for (size_t i = 0; i < rank; ++i)
    if (arg.sizes[i] < 1 || arg.sizes[i] > kMaxSize)
      return fail("size[", i, "] = ", arg.sizes[i],
                  " is out of range (1 .. 2^32)");
  if (arg.strides[rank - 1] != 1)
    return fail("stride[", rank - 1, "] = ", arg.strides[rank - 1],
                " elements; the last dimension must be contiguous (stride 1)");
  const int64_t kStrideLimit = int64_t(1) << 40;
  for (size_t i = 0; i + 1 < rank; ++i) {
    int64_t stride = arg.strides[i];
    std::string what = concat("stride[", i, "] = ", stride, " elements (",
                              formatStrideBytes(stride, elementBytes), ")");
    if (stride < 0)
      return fail(what, " is negative");
    if (stride >= kStrideLimit / elementBytes)
      return fail(what, " is not below 2^40 bytes");
    if (stride * elementBytes % 16 != 0)
      return fail(what, " is not a multiple of 16 bytes");
  }
  if (arg.offset < 0)
    return fail("offset ", arg.offset, " is negative");
  uint64_t address =
      arg.devicePtr + static_cast<uint64_t>(arg.offset) * elementBytes;
  if (address % 16 != 0)
    return fail("the first element is at ", formatHex(address), " (pointer ",
                formatHex(arg.devicePtr), " + offset ", arg.offset,
                " elements), which is not 16-byte aligned");

  encoding.rank = static_cast<cuuint32_t>(rank);
  encoding.globalAddress = address;
  for (size_t i = 0; i < rank; ++i) {
    encoding.globalDim[i] = static_cast<cuuint64_t>(arg.sizes[rank - 1 - i]);
    encoding.boxDim[i] = static_cast<cuuint32_t>(param.box[rank - 1 - i]);
    encoding.elementStrides[i] = 1;
  }
  for (size_t i = 0; i + 1 < rank; ++i)
    encoding.globalStrides[i] =
        static_cast<cuuint64_t>(arg.strides[rank - 2 - i] * elementBytes);
  out = encoding;
  return true;
}

bool attn::runtime::encodeTensorMap(const CudaDriverApi &api,
                                    const TensorMapEncoding &encoding,
                                    CUtensorMap &out, std::string &error) {
  if (!api.tensorMapEncodeTiled)
    return failWith(
        error,
        "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or newer "
        "is needed)");
  CUresult result = api.tensorMapEncodeTiled(
      &out, encoding.dataType, encoding.rank,
      reinterpret_cast<void *>(static_cast<uintptr_t>(encoding.globalAddress)),
      encoding.globalDim, encoding.globalStrides, encoding.boxDim,
      encoding.elementStrides, encoding.interleave, encoding.swizzle,
      encoding.l2Promotion, encoding.oobFill);
  if (result != CUDA_SUCCESS)
    return failWith(error,
                    formatCudaError(api, result, "cuTensorMapEncodeTiled"),
                    " (", encoding.describe(), ")");
  return true;
}

//===----------------------------------------------------------------------===//
// The device copies
//===----------------------------------------------------------------------===//

TensorMapCache::TensorMapCache(size_t capacity)
    : capacity(capacity ? capacity : getFacts().tensorMapCacheCapacity) {}

bool TensorMapCache::get(const TensorMapBytes &bytes,
                         const Synchronize &synchronize, const Upload &upload,
                         Entry &out, std::string &error) {
  auto it = entries.find(bytes);
  if (it != entries.end()) {
    out = it->second;
    return true;
  }
  if (entries.size() >= capacity) {
    // Launches that read the cached maps may still run: wait for them, then
    // free the maps that no prepared LaunchConfig holds.
    if (!synchronize(error))
      return false;
    for (auto entry = entries.begin(); entry != entries.end();) {
      if (entry->second.owner.use_count() <= 1)
        entry = entries.erase(entry);
      else
        ++entry;
    }
  }
  Entry entry;
  if (!upload(bytes, entry, error))
    return false;
  out = entries.emplace(bytes, std::move(entry)).first->second;
  return true;
}

bool ManifestKernel::getTensorMap(
    const KernelParam &param, const TensorArg &arg, uint64_t &devicePtr,
    std::vector<std::shared_ptr<const void>> &keep, std::string &error) const {
  TensorMapEncoding encoding;
  if (!getTensorMapEncoding(param, arg, manifest.elementType, encoding, error))
    return false;
  std::string prefix = "tensor map of '" + param.operand + "': ";
  CUtensorMap map;
  if (!encodeTensorMap(device->getApi(), encoding, map, error))
    return failWith(error, prefix + error);
  TensorMapBytes bytes;
  static_assert(sizeof(bytes) == sizeof(map.opaque), "a CUtensorMap has 128 "
                                                     "bytes");
  std::memcpy(bytes.data(), map.opaque, sizeof(bytes));

  const CudaDevice &owner = *device;
  auto synchronize = [&owner](std::string &message) {
    return owner.synchronize(message);
  };
  auto upload = [&owner](const TensorMapBytes &data,
                         TensorMapCache::Entry &entry, std::string &message) {
    // cuMemAlloc aligns to 256 bytes; TMA needs the map 64-byte aligned.
    auto buffer = std::make_shared<DeviceBuffer>();
    if (!owner.allocate(sizeof(data), *buffer, message) ||
        !buffer->copyFromHost(data.data(), sizeof(data), message))
      return false;
    // A pageable copy may still be in flight when cuMemcpyHtoD returns; a
    // kernel on a non-blocking stream must not read the map before it lands.
    if (!owner.synchronize(message))
      return false;
    if (buffer->get() % 64 != 0)
      return failWith(message, "the device copy at ", formatHex(buffer->get()),
                      " is not 64-byte aligned");
    entry.devicePtr = buffer->get();
    entry.owner = std::move(buffer);
    return true;
  };
  TensorMapCache::Entry entry;
  if (!tensorMapCache.get(bytes, synchronize, upload, entry, error))
    return failWith(error, prefix + error);
  keep.push_back(entry.owner);
  devicePtr = entry.devicePtr;
  return true;
}

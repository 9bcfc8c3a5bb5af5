//===- TensorMap.h - TMA descriptors of manifest operands -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A version 3 `tensor_map` param (docs/ManifestKernels.md) passes a pointer to a
// 64-byte aligned CUtensorMap in device memory, the convention of upstream
// MLIR's `nvgpu.tma.create.descriptor`. At each launch ManifestKernel::
// prepare computes the arguments of cuTensorMapEncodeTiled from the param and
// the operand (getTensorMapEncoding), encodes the map (encodeTensorMap) and
// looks its 128 bytes up in a TensorMapCache, which copies a map to device
// memory once: launches on the same tensors copy nothing.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TENSORMAP_H
#define ATTN_RUNTIME_TENSORMAP_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Manifest.h"

#include <array>
#include <functional>
#include <map>

namespace attn {
namespace runtime {

/// The arguments of cuTensorMapEncodeTiled, arrays innermost dimension
/// first (the reverse of a manifest's shapes and of TensorArg); `rank`
/// entries are used (`rank - 1` of globalStrides, in bytes).
struct TensorMapEncoding {
  static constexpr unsigned kMaxRank = 5;

  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 0;
  /// The operand's first element (16-byte aligned).
  uint64_t globalAddress = 0;
  cuuint64_t globalDim[kMaxRank] = {};
  cuuint64_t globalStrides[kMaxRank - 1] = {};
  cuuint32_t boxDim[kMaxRank] = {};
  cuuint32_t elementStrides[kMaxRank] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  /// Elements out of bounds read as zero.
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  /// Every argument on one line, e.g. "FLOAT32, rank 4, address 0x10200,
  /// dims [128, 100, 3, 2], strides [1536, 512, 153600] bytes, box [32, 64,
  /// 1, 1], element strides [1, 1, 1, 1], interleave NONE, swizzle 128B, L2
  /// promotion 128B, OOB fill NONE".
  std::string describe() const;
};

/// The encoding of a (verified) tensor_map param for the operand `arg`: the
/// TensorArg its memref param passes. Fails, with one line that starts with
/// "tensor map of 'OPERAND': ", unless the element type is f32, f16 or bf16,
/// the rank is the box's and 1 .. 5, every size is 1 .. 2^32, the last
/// stride is 1, every other stride a multiple of 16 bytes below 2^40 bytes,
/// and the first element 16-byte aligned. Needs no driver.
bool getTensorMapEncoding(const KernelParam &param, const TensorArg &arg,
                          ElementType elementType, TensorMapEncoding &out,
                          std::string &error);

/// cuTensorMapEncodeTiled; its error is followed by encoding.describe().
bool encodeTensorMap(const CudaDriverApi &api,
                     const TensorMapEncoding &encoding, CUtensorMap &out,
                     std::string &error);

/// The 128 bytes of an encoded CUtensorMap.
using TensorMapBytes = std::array<uint64_t, CU_TENSOR_MAP_NUM_QWORDS>;

/// Device copies of encoded tensor maps, keyed by their bytes. A miss when
/// the cache holds `capacity` maps first synchronizes (launches may still
/// read them), then frees every map nothing else holds: a LaunchConfig holds
/// the maps its params point to. Not thread-safe.
class TensorMapCache {
public:
  /// A device copy (64-byte aligned) and what keeps it alive.
  struct Entry {
    uint64_t devicePtr = 0;
    std::shared_ptr<const void> owner;
  };
  using Upload = std::function<bool(const TensorMapBytes &bytes, Entry &out,
                                    std::string &error)>;
  using Synchronize = std::function<bool(std::string &error)>;

  /// 0: the facts' capacity (Facts.h).
  explicit TensorMapCache(size_t capacity = 0);

  /// The cached copy of `bytes`, or a new one from `upload`.
  bool get(const TensorMapBytes &bytes, const Synchronize &synchronize,
           const Upload &upload, Entry &out, std::string &error);

  size_t size() const { return entries.size(); }
  size_t getCapacity() const { return capacity; }

private:
  size_t capacity;
  std::map<TensorMapBytes, Entry> entries;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_TENSORMAP_H

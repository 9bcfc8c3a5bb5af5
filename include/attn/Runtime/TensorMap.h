//===- TensorMap.h - TMA descriptors of manifest operands -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The `tensor_map` param of a version 3 manifest (docs/Manifest.md): a
// kernel that loads tiles of an operand with Hopper's TMA
// (`cp.async.bulk.tensor`) takes a pointer to a CUtensorMap in device
// memory, 64-byte aligned, the convention of upstream MLIR's
// `nvgpu.tma.create.descriptor`. At each launch the runtime
//
//   1. computes the arguments of cuTensorMapEncodeTiled from the param (box,
//      swizzle), the operand's TensorArg and the element type
//      (getTensorMapEncoding, pure: no driver);
//   2. encodes the 128-byte map with the driver (encodeTensorMap);
//   3. looks the bytes up in the kernel's TensorMapCache, which copies a map
//      it has not seen to device memory once, so that launches on the same
//      tensors (the benchmark's input copies included) copy nothing.
//
// ManifestKernel::prepare (CudaLaunch.h) does all three for every tensor_map
// param of the main kernel and of the prologue kernels.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_TENSORMAP_H
#define ATTN_RUNTIME_TENSORMAP_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Manifest.h"

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace attn {
namespace runtime {

/// The arguments of cuTensorMapEncodeTiled for one tensor_map param and one
/// operand. The arrays are innermost dimension first, as the driver takes
/// them (the reverse of a manifest's shapes and of TensorArg); only the first
/// `rank` entries are used (`rank - 1` of globalStrides).
struct TensorMapEncoding {
  /// The largest rank of a tiled tensor map.
  static constexpr unsigned kMaxRank = 5;

  /// FLOAT32, FLOAT16 or BFLOAT16, by the manifest's element_type.
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cuuint32_t rank = 0;
  /// The operand's first element: the aligned pointer + offset * element
  /// bytes (16-byte aligned).
  uint64_t globalAddress = 0;
  /// globalDim[i] = sizes[rank - 1 - i].
  cuuint64_t globalDim[kMaxRank] = {};
  /// In bytes: globalStrides[i] = strides[rank - 2 - i] * element bytes
  /// (the innermost stride, 1 element, is implied).
  cuuint64_t globalStrides[kMaxRank - 1] = {};
  /// boxDim[i] = box[rank - 1 - i].
  cuuint32_t boxDim[kMaxRank] = {};
  /// All 1.
  cuuint32_t elementStrides[kMaxRank] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  /// NONE: elements out of bounds read as zero.
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  /// One line with every argument, e.g. "FLOAT32, rank 4, address
  /// 0x10200, dims [128, 100, 3, 2], strides [1536, 512, 153600] bytes, box
  /// [32, 64, 1, 1], element strides [1, 1, 1, 1], interleave NONE, swizzle
  /// 128B, L2 promotion 128B, OOB fill NONE" (arrays innermost first).
  std::string describe() const;
};

/// The encoding of tensor_map param `param` for the operand `arg` (the
/// TensorArg its memref param passes: pointer, offset, sizes and strides in
/// elements, outermost first) of element type `elementType`. Fails, with one
/// line that starts with "tensor map of 'OPERAND': ", unless the element type
/// is f32, f16 or bf16, the rank is 1 .. 5 and the box has one entry
/// (1 .. 256) per dimension, the swizzle is 0, 32, 64 or 128, every size is
/// 1 .. 2^32, the last stride is 1, every other stride is a multiple of 16
/// bytes below 2^40 bytes, and the first element (pointer + offset) is
/// 16-byte aligned, e.g. "tensor map of 'key': stride[1] = 100 elements (400
/// bytes) is not a multiple of 16 bytes". Pure: needs no driver or device.
bool getTensorMapEncoding(const KernelParam &param, const TensorArg &arg,
                          ElementType elementType, TensorMapEncoding &out,
                          std::string &error);

/// Encodes `encoding` into `out` with the driver's cuTensorMapEncodeTiled.
/// Fails with "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or
/// newer is needed)" when `api.tensorMapEncodeTiled` is null, and with the
/// driver's error followed by encoding.describe() in parentheses when it
/// refuses the arguments.
bool encodeTensorMap(const CudaDriverApi &api,
                     const TensorMapEncoding &encoding, CUtensorMap &out,
                     std::string &error);

/// The 128 bytes of an encoded CUtensorMap.
using TensorMapBytes = std::array<uint64_t, CU_TENSOR_MAP_NUM_QWORDS>;

/// Device copies of encoded tensor maps, keyed by their 128 bytes: a launch
/// on tensors seen before finds its maps and copies nothing. Bounded: a miss
/// when the cache holds `capacity` maps first synchronizes (the launches
/// that read them may still run), then frees every map that nothing else
/// holds. A LaunchConfig holds the maps its params point to, so those stay
/// valid (and cached) for as long as it lives. Not thread-safe.
class TensorMapCache {
public:
  /// A device copy: its address (64-byte aligned) and what keeps it alive.
  struct Entry {
    uint64_t devicePtr = 0;
    std::shared_ptr<const void> owner;
  };
  /// Copies a map to (new) device memory.
  using Upload = std::function<bool(const TensorMapBytes &bytes, Entry &out,
                                    std::string &error)>;
  /// Waits for every launch that may read a cached map.
  using Synchronize = std::function<bool(std::string &error)>;

  /// The default capacity is the facts' (Facts.h).
  explicit TensorMapCache(size_t capacity = 0);

  /// The device copy of `bytes`: the cached one, or a new one from `upload`
  /// (after `synchronize` and the freeing of the unheld entries when the
  /// cache is full).
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

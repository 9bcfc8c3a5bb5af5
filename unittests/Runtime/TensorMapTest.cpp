//===- TensorMapTest.cpp - Tests of tensor map encoding -------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Where cuda.h was found: the arguments of cuTensorMapEncodeTiled for a
// tensor_map param (getTensorMapEncoding) and their errors, the call itself
// through a fake driver entry point (encodeTensorMap), the cache of device
// copies (TensorMapCache), and, on a GPU of compute capability 9.0 or newer
// (skipped otherwise), a kernel that reads back the map it was passed.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#ifdef ATTN_HAS_CUDA_DRIVER
#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/CudaLaunch.h"
#include "attn/Runtime/Facts.h"
#include "attn/Runtime/TensorMap.h"
#endif

#include "ManifestTestHelpers.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace attn::runtime;
using namespace attn::runtime::unittest;

namespace {

#ifdef ATTN_HAS_CUDA_DRIVER

//===----------------------------------------------------------------------===//
// getTensorMapEncoding
//===----------------------------------------------------------------------===//

/// The key of (B, H, T, D) = (2, 3, 100, 128) in f32, stored as a (B, T, H,
/// D) tensor and viewed as (B, H, T, D) by permuting its strides, starting
/// 64 elements (256 bytes) into its buffer.
TensorArg makePermutedKey() {
  TensorArg arg;
  arg.devicePtr = 0x7f0000100000;
  arg.offset = 64;
  arg.sizes = {2, 3, 100, 128};
  arg.strides = {100 * 3 * 128, 128, 3 * 128, 1};
  return arg;
}

std::string encodingError(const KernelParam &param, const TensorArg &arg,
                          ElementType type = ElementType::F32) {
  TensorMapEncoding encoding;
  std::string error;
  EXPECT_FALSE(getTensorMapEncoding(param, arg, type, encoding, error));
  return error;
}

TEST(TensorMapTest, EncodesAPermutedOperand) {
  KernelParam param = KernelParam::tensorMap("key", {1, 1, 64, 32}, 128);
  TensorMapEncoding encoding;
  std::string error;
  ASSERT_TRUE(getTensorMapEncoding(param, makePermutedKey(), ElementType::F32,
                                   encoding, error))
      << error;
  EXPECT_EQ(encoding.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(encoding.rank, 4u);
  // The aligned pointer + 64 elements of 4 bytes.
  EXPECT_EQ(encoding.globalAddress, 0x7f0000100100u);
  // Innermost first: D, T, H, B.
  const cuuint64_t dims[4] = {128, 100, 3, 2};
  // In bytes, without the innermost one: T (3 * 128 elements), H (128), B.
  const cuuint64_t strides[3] = {3 * 128 * 4, 128 * 4, 100 * 3 * 128 * 4};
  const cuuint32_t box[4] = {32, 64, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(encoding.globalDim[i], dims[i]) << i;
    EXPECT_EQ(encoding.boxDim[i], box[i]) << i;
    EXPECT_EQ(encoding.elementStrides[i], 1u) << i;
  }
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(encoding.globalStrides[i], strides[i]) << i;
  EXPECT_EQ(encoding.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(encoding.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(encoding.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(encoding.describe(),
            "FLOAT32, rank 4, address 0x7f0000100100, dims [128, 100, 3, 2], "
            "strides [1536, 512, 153600] bytes, box [32, 64, 1, 1], element "
            "strides [1, 1, 1, 1], interleave NONE, swizzle 128B, L2 "
            "promotion 128B, OOB fill NONE");

  // 2-byte types, other swizzles, a dense operand.
  TensorArg dense = makeContiguousTensorArg(0x10000, {2, 8, 300, 64});
  param = KernelParam::tensorMap("value", {1, 2, 16, 32}, 64);
  ASSERT_TRUE(
      getTensorMapEncoding(param, dense, ElementType::BF16, encoding, error))
      << error;
  EXPECT_EQ(encoding.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(encoding.globalAddress, 0x10000u);
  EXPECT_EQ(encoding.globalStrides[0], 64u * 2);
  EXPECT_EQ(encoding.globalStrides[1], 300u * 64 * 2);
  EXPECT_EQ(encoding.globalStrides[2], 8u * 300 * 64 * 2);
  EXPECT_EQ(encoding.boxDim[2], 2u);
  EXPECT_EQ(encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  param.swizzle = 32;
  ASSERT_TRUE(
      getTensorMapEncoding(param, dense, ElementType::F16, encoding, error))
      << error;
  EXPECT_EQ(encoding.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_32B);
  param.swizzle = 0;
  ASSERT_TRUE(
      getTensorMapEncoding(param, dense, ElementType::F16, encoding, error))
      << error;
  EXPECT_EQ(encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  // A stride 0 (a broadcast) is a multiple of 16 bytes.
  dense.strides[0] = 0;
  EXPECT_TRUE(
      getTensorMapEncoding(param, dense, ElementType::F16, encoding, error))
      << error;
  EXPECT_EQ(encoding.globalStrides[2], 0u);
}

TEST(TensorMapTest, EncodingErrors) {
  KernelParam param = KernelParam::tensorMap("key", {1, 1, 64, 32}, 128);
  TensorArg arg = makePermutedKey();
  arg.strides[1] = 101;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': stride[1] = 101 elements (404 bytes) is not "
            "a multiple of 16 bytes");
  // 100 bf16 elements: 200 bytes.
  arg.strides[1] = 100;
  EXPECT_EQ(encodingError(param, arg, ElementType::BF16),
            "tensor map of 'key': stride[1] = 100 elements (200 bytes) is not "
            "a multiple of 16 bytes");
  arg = makePermutedKey();
  arg.strides[3] = 2;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': stride[3] = 2 elements; the last dimension "
            "must be contiguous (stride 1)");
  arg = makePermutedKey();
  arg.strides[0] = int64_t(1) << 38; // 2^40 bytes
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': stride[0] = 274877906944 elements "
            "(1099511627776 bytes) is not below 2^40 bytes");
  arg.strides[0] = (int64_t(1) << 38) - 4;
  TensorMapEncoding encoding;
  std::string error;
  EXPECT_TRUE(
      getTensorMapEncoding(param, arg, ElementType::F32, encoding, error))
      << error;
  arg.strides[0] = INT64_MAX;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': stride[0] = 9223372036854775807 elements "
            "(more than 2^62 bytes) is not below 2^40 bytes");
  arg.strides[0] = -38400;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': stride[0] = -38400 elements (-153600 bytes) "
            "is negative");
  arg = makePermutedKey();
  arg.offset = 3;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': the first element is at 0x7f000010000c "
            "(pointer 0x7f0000100000 + offset 3 elements), which is not "
            "16-byte aligned");
  arg.offset = -4;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': offset -4 is negative");
  arg = makePermutedKey();
  arg.devicePtr += 8;
  arg.offset = 0;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': the first element is at 0x7f0000100008 "
            "(pointer 0x7f0000100008 + offset 0 elements), which is not "
            "16-byte aligned");
  arg = makePermutedKey();
  arg.sizes[2] = 0;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': size[2] = 0 is out of range (1 .. 2^32)");
  arg.sizes[2] = (int64_t(1) << 32) + 1;
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': size[2] = 4294967297 is out of range "
            "(1 .. 2^32)");
  arg = makePermutedKey();
  EXPECT_EQ(encodingError(param, arg, ElementType::I1),
            "tensor map of 'key': element type 'i1' has no tensor map data "
            "type (expected f32, f16 or bf16)");
  // The param against the operand.
  EXPECT_EQ(
      encodingError(KernelParam::tensorMap("key", {1, 64, 32}, 128), arg),
      "tensor map of 'key': the box has 3 entries but the operand has rank 4");
  TensorArg six = makeContiguousTensorArg(0x10000, {1, 1, 1, 1, 1, 4});
  EXPECT_EQ(
      encodingError(KernelParam::tensorMap("key", {1, 1, 1, 1, 1, 4}, 0), six),
      "tensor map of 'key': rank 6 (a tensor map has 1 .. 5 dimensions)");
  arg.strides.pop_back();
  EXPECT_EQ(encodingError(param, arg),
            "tensor map of 'key': the operand has 4 sizes and 3 strides");
  EXPECT_EQ(encodingError(KernelParam::memref("key", 4), makePermutedKey()),
            "tensor map of 'key': the param is not of kind tensor_map");
}

//===----------------------------------------------------------------------===//
// encodeTensorMap, through a fake cuTensorMapEncodeTiled
//===----------------------------------------------------------------------===//

/// What the fake entry point was called with, and what it returns.
struct FakeEncodeCall {
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  cuuint32_t rank = 0;
  void *address = nullptr;
  std::vector<cuuint64_t> dims, strides;
  std::vector<cuuint32_t> box, elementStrides;
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oobFill =
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  CUresult result = CUDA_SUCCESS;
};
FakeEncodeCall fakeCall;

CUresult CUDAAPI fakeEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dataType, cuuint32_t rank,
    void *address, const cuuint64_t *dims, const cuuint64_t *strides,
    const cuuint32_t *box, const cuuint32_t *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  fakeCall.dataType = dataType;
  fakeCall.rank = rank;
  fakeCall.address = address;
  fakeCall.dims.assign(dims, dims + rank);
  fakeCall.strides.assign(strides, strides + rank - 1);
  fakeCall.box.assign(box, box + rank);
  fakeCall.elementStrides.assign(elementStrides, elementStrides + rank);
  fakeCall.interleave = interleave;
  fakeCall.swizzle = swizzle;
  fakeCall.l2Promotion = l2Promotion;
  fakeCall.oobFill = oobFill;
  for (int i = 0; i < CU_TENSOR_MAP_NUM_QWORDS; ++i)
    map->opaque[i] = 1000 + i;
  return fakeCall.result;
}

TEST(TensorMapTest, EncodesThroughTheDriver) {
  TensorMapEncoding encoding;
  std::string error;
  ASSERT_TRUE(getTensorMapEncoding(
      KernelParam::tensorMap("key", {1, 1, 64, 32}, 128), makePermutedKey(),
      ElementType::F32, encoding, error))
      << error;
  CudaDriverApi api;
  CUtensorMap map;
  // A driver without the entry point.
  EXPECT_FALSE(encodeTensorMap(api, encoding, map, error));
  EXPECT_EQ(error, "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 "
                   "or newer is needed)");

  api.tensorMapEncodeTiled = &fakeEncodeTiled;
  fakeCall = FakeEncodeCall();
  ASSERT_TRUE(encodeTensorMap(api, encoding, map, error)) << error;
  EXPECT_EQ(map.opaque[0], 1000u);
  EXPECT_EQ(map.opaque[15], 1015u);
  EXPECT_EQ(fakeCall.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(fakeCall.rank, 4u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(fakeCall.address), 0x7f0000100100u);
  EXPECT_EQ(fakeCall.dims, (std::vector<cuuint64_t>{128, 100, 3, 2}));
  EXPECT_EQ(fakeCall.strides, (std::vector<cuuint64_t>{1536, 512, 153600}));
  EXPECT_EQ(fakeCall.box, (std::vector<cuuint32_t>{32, 64, 1, 1}));
  EXPECT_EQ(fakeCall.elementStrides, (std::vector<cuuint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(fakeCall.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(fakeCall.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(fakeCall.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(fakeCall.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  // A refusal names the call and every argument.
  fakeCall.result = CUDA_ERROR_INVALID_VALUE;
  EXPECT_FALSE(encodeTensorMap(api, encoding, map, error));
  EXPECT_EQ(error, "cuTensorMapEncodeTiled failed: CUDA error 1 (" +
                       encoding.describe() + ")");
}

/// The cuda.h values the Python package passes are facts.json's: they must
/// be cuda.h's.
TEST(FactsTest, CudaValuesAreCudaH) {
  const std::pair<const char *, int64_t> values[] = {
      {"CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES",
       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
      {"CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES",
       CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
      {"CU_FUNC_ATTRIBUTE_NUM_REGS", CU_FUNC_ATTRIBUTE_NUM_REGS},
      {"CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
      {"CU_DEVICE_ATTRIBUTE_CLOCK_RATE", CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {"CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
       CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE",
       CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {"CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH",
       CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
      {"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR",
       CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {"CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR",
       CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR",
       CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
      {"CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
      {"CU_TENSOR_MAP_INTERLEAVE_NONE", CU_TENSOR_MAP_INTERLEAVE_NONE},
      {"CU_TENSOR_MAP_SWIZZLE_NONE", CU_TENSOR_MAP_SWIZZLE_NONE},
      {"CU_TENSOR_MAP_SWIZZLE_32B", CU_TENSOR_MAP_SWIZZLE_32B},
      {"CU_TENSOR_MAP_SWIZZLE_64B", CU_TENSOR_MAP_SWIZZLE_64B},
      {"CU_TENSOR_MAP_SWIZZLE_128B", CU_TENSOR_MAP_SWIZZLE_128B},
      {"CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
       CU_TENSOR_MAP_L2_PROMOTION_L2_128B},
      {"CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE},
  };
  const std::map<std::string, int64_t> &facts = getFacts().cuda;
  EXPECT_EQ(facts.size(), std::size(values));
  for (const auto &[name, value] : values) {
    auto it = facts.find(name);
    ASSERT_NE(it, facts.end()) << name;
    EXPECT_EQ(it->second, value) << name;
  }
  EXPECT_EQ(TensorMapCache().getCapacity(), getFacts().tensorMapCacheCapacity);
}

//===----------------------------------------------------------------------===//
// TensorMapCache
//===----------------------------------------------------------------------===//

TEST(TensorMapCacheTest, CopiesEachMapOnceAndStaysBounded) {
  TensorMapCache cache(3);
  EXPECT_EQ(cache.getCapacity(), 3u);
  EXPECT_EQ(TensorMapCache().getCapacity(), 256u);
  int uploads = 0, synchronizations = 0;
  TensorMapCache::Upload upload = [&](const TensorMapBytes &bytes,
                                      TensorMapCache::Entry &entry,
                                      std::string &) {
    ++uploads;
    entry.devicePtr = 0x1000 * (bytes[0] + 1);
    entry.owner = std::make_shared<int>(static_cast<int>(bytes[0]));
    return true;
  };
  TensorMapCache::Synchronize synchronize = [&](std::string &) {
    ++synchronizations;
    return true;
  };
  auto map = [](uint64_t first) {
    TensorMapBytes bytes{};
    bytes[0] = first;
    bytes[15] = 7;
    return bytes;
  };
  auto get = [&](uint64_t first) {
    TensorMapCache::Entry entry;
    std::string error;
    EXPECT_TRUE(cache.get(map(first), synchronize, upload, entry, error))
        << error;
    return entry;
  };
  EXPECT_EQ(get(0).devicePtr, 0x1000u);
  EXPECT_EQ(get(1).devicePtr, 0x2000u);
  EXPECT_EQ(uploads, 2);
  // A map seen before is not copied again.
  EXPECT_EQ(get(0).devicePtr, 0x1000u);
  EXPECT_EQ(uploads, 2);
  EXPECT_EQ(cache.size(), 2u);
  // Full at 3; a prepared launch holds map 1.
  TensorMapCache::Entry held = get(1);
  get(2);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(synchronizations, 0);
  // The next miss waits for the launches, then frees what nothing holds.
  EXPECT_EQ(get(3).devicePtr, 0x4000u);
  EXPECT_EQ(synchronizations, 1);
  EXPECT_EQ(cache.size(), 2u); // 1 (held) and 3
  EXPECT_EQ(uploads, 4);
  EXPECT_EQ(get(1).devicePtr, 0x2000u);
  EXPECT_EQ(uploads, 4);
  get(0);
  EXPECT_EQ(uploads, 5);
  EXPECT_EQ(cache.size(), 3u);

  // Errors: a failed synchronization or upload caches nothing.
  held = TensorMapCache::Entry();
  TensorMapCache::Synchronize failing = [](std::string &error) {
    error = "cuCtxSynchronize failed";
    return false;
  };
  TensorMapCache::Entry entry;
  std::string error;
  EXPECT_FALSE(cache.get(map(9), failing, upload, entry, error));
  EXPECT_EQ(error, "cuCtxSynchronize failed");
  cache = TensorMapCache(3);
  EXPECT_EQ(cache.size(), 0u);
  TensorMapCache::Upload refused =
      [](const TensorMapBytes &, TensorMapCache::Entry &, std::string &error) {
        error = "out of memory";
        return false;
      };
  EXPECT_FALSE(cache.get(map(9), synchronize, refused, entry, error));
  EXPECT_EQ(error, "out of memory");
  EXPECT_EQ(cache.size(), 0u);
}

//===----------------------------------------------------------------------===//
// A kernel that reads its tensor map back (skipped without an sm_90 GPU)
//===----------------------------------------------------------------------===//

/// read_tmap takes query, key, value, output (11 params each) and a tensor
/// map of key; thread i < 16 copies 8-byte word i of the map to word i of the
/// output, thread 16 writes the map's address to word 16.
const char *const kReadTensorMapPtx = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry read_tmap(
PARAMS
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [read_tmap_param_34];
  ld.param.u64 %rd2, [read_tmap_param_44];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd5, %r1;
  shl.b64 %rd6, %rd5, 3;
  add.s64 %rd7, %rd3, %rd6;
  setp.gt.u32 %p1, %r1, 15;
  @%p1 bra ADDRESS;
  add.s64 %rd8, %rd4, %rd6;
  ld.global.u64 %rd9, [%rd8];
  st.global.u64 [%rd7], %rd9;
  ret;
ADDRESS:
  setp.ne.u32 %p1, %r1, 16;
  @%p1 bra DONE;
  st.global.u64 [%rd7], %rd2;
DONE:
  ret;
}
)";

std::string getReadTensorMapPtx() {
  std::string params;
  for (unsigned i = 0; i < 45; ++i)
    params += std::string(i ? ",\n" : "") + "  .param .u64 read_tmap_param_" +
              std::to_string(i);
  std::string ptx = kReadTensorMapPtx;
  return ptx.replace(ptx.find("PARAMS"), 6, params);
}

TEST(CudaTensorMapTest, TheKernelReadsTheEncodedMap) {
  CudaDevice device;
  std::string error;
  if (!CudaDevice::open(0, device, error))
    GTEST_SKIP() << error;
  if (device.getComputeCapabilityMajor() < 9)
    GTEST_SKIP() << "tensor maps need compute capability 9.0";
  if (!device.getApi().tensorMapEncodeTiled)
    GTEST_SKIP() << "the driver has no cuTensorMapEncodeTiled";

  Manifest manifest;
  manifest.kernel = "read_tmap";
  manifest.ptx = "read_tmap.ptx";
  manifest.chip = "sm_80";
  manifest.elementType = ElementType::F32;
  manifest.query.shape = manifest.output.shape = {1, 1, 16, 16};
  manifest.key.shape = manifest.value.shape = {1, 1, -1, 16};
  manifest.block[0] = 32;
  for (const char *operand : {"query", "key", "value", "output"})
    manifest.params.push_back(KernelParam::memref(operand, 4));
  manifest.params.push_back(KernelParam::tensorMap("key", {1, 1, 8, 16}, 64));
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  EXPECT_EQ(manifest.getNumParamSlots(), 45u);
  ManifestKernel kernel;
  ASSERT_TRUE(ManifestKernel::load(device, manifest, getReadTensorMapPtx(),
                                   kernel, error))
      << error;

  DeviceBuffer inputs, output;
  ASSERT_TRUE(device.allocate(64 * 16 * 4, inputs, error)) << error;
  ASSERT_TRUE(device.allocate(16 * 16 * 4, output, error)) << error;
  auto run = [&](int64_t tk, int64_t keyOffset, uint64_t words[17]) {
    TensorArg key = makeContiguousTensorArg(inputs.get(), {1, 1, tk, 16});
    key.offset = keyOffset;
    std::map<std::string, TensorArg> operands = {
        {"query", makeContiguousTensorArg(inputs.get(), {1, 1, 16, 16})},
        {"key", key},
        {"value", makeContiguousTensorArg(inputs.get(), {1, 1, tk, 16})},
        {"output", makeContiguousTensorArg(output.get(), {1, 1, 16, 16})}};
    ASSERT_TRUE(kernel.launch(operands, makeSizes(1, 1, 1, 16, tk, 16, 16),
                              nullptr, error))
        << error;
    ASSERT_TRUE(device.synchronize(error)) << error;
    ASSERT_TRUE(output.copyToHost(words, 17 * 8, error)) << error;
    // The kernel got the map the host encodes for the same key.
    TensorMapEncoding encoding;
    ASSERT_TRUE(getTensorMapEncoding(manifest.params[4], key, ElementType::F32,
                                     encoding, error))
        << error;
    CUtensorMap map;
    ASSERT_TRUE(encodeTensorMap(device.getApi(), encoding, map, error))
        << error;
    EXPECT_EQ(std::memcmp(words, map.opaque, 128), 0);
    EXPECT_EQ(words[16] % 64, 0u);
  };
  uint64_t first[17], again[17], other[17];
  run(32, 0, first);
  EXPECT_EQ(kernel.getNumCachedTensorMaps(), 1u);
  // The same tensors: the same device copy.
  run(32, 0, again);
  EXPECT_EQ(kernel.getNumCachedTensorMaps(), 1u);
  EXPECT_EQ(again[16], first[16]);
  // Another start or size: another map.
  run(32, 64, other);
  EXPECT_EQ(kernel.getNumCachedTensorMaps(), 2u);
  EXPECT_NE(other[16], first[16]);
  run(48, 0, other);
  EXPECT_EQ(kernel.getNumCachedTensorMaps(), 3u);
}

#endif // ATTN_HAS_CUDA_DRIVER

} // namespace

//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A thin, checked layer over the CUDA driver API: the device, device memory,
// modules, launches and events. libcuda.so.1 is opened with dlopen (never
// linked), so binaries start on machines without a GPU, where
// CudaDevice::open fails with "no CUDA driver found (...)"; only cuda.h is
// needed to build. A failed call returns false with "<call> failed:
// CUDA_ERROR_<NAME>: <description>". A CudaDevice retains the primary
// context (the CUDA runtime's and PyTorch's) and makes it current on the
// thread that opens it (makeCurrent() on others); buffers, modules and events
// free themselves in their context with their last copy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

namespace attn {
namespace runtime {

/// The driver entry points resolved with dlsym: member and cuda.h function.
#define ATTN_CUDA_DRIVER_ENTRY_POINTS(X)                                       \
  X(init, cuInit)                                                              \
  X(driverGetVersion, cuDriverGetVersion)                                      \
  X(getErrorString, cuGetErrorString)                                          \
  X(getErrorName, cuGetErrorName)                                              \
  X(deviceGetCount, cuDeviceGetCount)                                          \
  X(deviceGet, cuDeviceGet)                                                    \
  X(deviceGetAttribute, cuDeviceGetAttribute)                                  \
  X(deviceGetName, cuDeviceGetName)                                            \
  X(deviceTotalMem, cuDeviceTotalMem_v2)                                       \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)                          \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)                     \
  X(ctxSetCurrent, cuCtxSetCurrent)                                            \
  X(ctxSynchronize, cuCtxSynchronize)                                          \
  X(moduleLoadDataEx, cuModuleLoadDataEx)                                      \
  X(moduleUnload, cuModuleUnload)                                              \
  X(moduleGetFunction, cuModuleGetFunction)                                    \
  X(funcSetAttribute, cuFuncSetAttribute)                                      \
  X(funcGetAttribute, cuFuncGetAttribute)                                      \
  X(launchKernel, cuLaunchKernel)                                              \
  X(occupancyMaxActiveBlocksPerMultiprocessor,                                 \
    cuOccupancyMaxActiveBlocksPerMultiprocessor)                               \
  X(memAlloc, cuMemAlloc_v2)                                                   \
  X(memFree, cuMemFree_v2)                                                     \
  X(memGetInfo, cuMemGetInfo_v2)                                               \
  X(memcpyHtoD, cuMemcpyHtoD_v2)                                               \
  X(memcpyDtoH, cuMemcpyDtoH_v2)                                               \
  X(memcpyDtoD, cuMemcpyDtoD_v2)                                               \
  X(memsetD8, cuMemsetD8_v2)                                                   \
  X(eventCreate, cuEventCreate)                                                \
  X(eventRecord, cuEventRecord)                                                \
  X(eventSynchronize, cuEventSynchronize)                                      \
  X(eventElapsedTime, cuEventElapsedTime_v2)                                   \
  X(eventDestroy, cuEventDestroy_v2)

/// The entry points, all non-null in a table loadCudaDriver returns
/// (cuEventElapsedTime_v2, from CUDA 12.8, falls back to cuEventElapsedTime).
struct CudaDriverApi {
#define ATTN_CUDA_DECLARE_ENTRY_POINT(member, symbol)                          \
  decltype(&::symbol) member = nullptr;
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_DECLARE_ENTRY_POINT)
#undef ATTN_CUDA_DECLARE_ENTRY_POINT
  /// Null before CUDA 12: only tensor maps need it (TensorMap.h).
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  /// cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
  int driverVersion = 0;
};

/// Opens libcuda.so.1, resolves the entry points and calls cuInit(0), once
/// per process; errors: "no CUDA driver found (...)", "no CUDA device
/// present", "libcuda.so.1 has no symbol cuXxx (...)" or a cuInit failure.
const CudaDriverApi *loadCudaDriver(std::string &error);

/// "<call> failed: CUDA_ERROR_NAME: description".
std::string formatCudaError(const CudaDriverApi &api, CUresult result,
                            const std::string &call);

/// Device memory, freed with the last copy of the buffer.
class DeviceBuffer {
public:
  /// The device address (0 when empty).
  CUdeviceptr get() const { return owner ? pointer : 0; }
  uint64_t getSize() const { return owner ? size : 0; }

  /// Copies to or from byte `offset` of the buffer; fill: cuMemsetD8.
  bool copyFromHost(const void *source, uint64_t bytes, std::string &error,
                    uint64_t offset = 0);
  bool copyToHost(void *destination, uint64_t bytes, std::string &error,
                  uint64_t offset = 0) const;
  bool copyFromDevice(CUdeviceptr source, uint64_t bytes, std::string &error,
                      uint64_t offset = 0);
  bool fill(uint8_t value, std::string &error);

private:
  friend class CudaDevice;
  bool check(const char *call, uint64_t offset, uint64_t bytes,
             std::string &error) const;

  const CudaDriverApi *api = nullptr;
  CUcontext context = nullptr;
  CUdeviceptr pointer = 0;
  uint64_t size = 0;
  std::shared_ptr<void> owner;
};

/// cuFuncGetAttribute: registers, local (stack, spills) and static shared
/// bytes, the largest block.
struct KernelResources {
  int numRegisters = 0, localBytes = 0, staticSharedBytes = 0,
      maxThreadsPerBlock = 0;
};

/// A kernel of a loaded module: valid while its module lives.
class CudaKernel {
public:
  CUfunction getFunction() const { return function; }
  const std::string &getName() const { return name; }

  bool getResources(KernelResources &out, std::string &error) const;
  /// Raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to `bytes`.
  bool setMaxDynamicSharedMemory(int bytes, std::string &error) const;
  /// cuLaunchKernel; `args` is the kernelParams array (ParamPack).
  bool launch(const unsigned grid[3], const unsigned block[3],
              unsigned sharedMemoryBytes, CUstream stream, void **args,
              std::string &error) const;

private:
  friend class CudaModule;
  const CudaDriverApi *api = nullptr;
  CUfunction function = nullptr;
  std::string name;
};

/// A loaded module, unloaded with the last copy of it.
class CudaModule {
public:
  bool isLoaded() const { return owner != nullptr; }
  /// cuModuleGetFunction.
  bool getFunction(const std::string &name, CudaKernel &out,
                   std::string &error) const;

private:
  friend class CudaDevice;
  const CudaDriverApi *api = nullptr;
  std::shared_ptr<CUmod_st> owner;
};

/// A CUDA event, destroyed with the last copy of it.
class CudaEvent {
public:
  bool record(CUstream stream, std::string &error) const;
  bool synchronize(std::string &error) const;
  /// Milliseconds from `start` to `end` (both recorded and completed).
  static bool elapsedMs(const CudaEvent &start, const CudaEvent &end,
                        float &milliseconds, std::string &error);

private:
  friend class CudaDevice;
  const CudaDriverApi *api = nullptr;
  std::shared_ptr<CUevent_st> owner;
};

/// One CUDA device with its primary context retained (released with the last
/// copy of the device).
class CudaDevice {
public:
  /// Opens device `ordinal` (under CUDA_VISIBLE_DEVICES) and makes its
  /// primary context current; errors: loadCudaDriver's, "CUDA device 3 not
  /// present (2 devices)".
  static bool open(int ordinal, CudaDevice &out, std::string &error);

  bool isOpen() const { return context != nullptr; }
  const CudaDriverApi &getApi() const { return *api; }

  /// E.g. "NVIDIA H200" and "sm_90".
  const std::string &getName() const { return name; }
  std::string getArchName() const;
  int getComputeCapabilityMajor() const { return ccMajor; }
  int getComputeCapabilityMinor() const { return ccMinor; }
  int getMultiprocessorCount() const { return multiprocessorCount; }
  int64_t getL2CacheBytes() const { return l2CacheBytes; }
  int getClockKHz() const { return clockKHz; }
  int getMaxSharedMemoryPerBlockOptin() const { return maxSharedPerBlockOptin; }
  uint64_t getTotalMemoryBytes() const { return totalMemoryBytes; }
  /// Estimated peak DRAM bandwidth: 2 (double data rate) * memory clock *
  /// bus width / 8, bytes per second (about 4.9e12 on an H200).
  double getMemoryBandwidthBytesPerSecond() const;

  /// One line, e.g. "NVIDIA H200 (sm_90, 132 SMs, 60.0 MiB L2, 140.4 GiB,
  /// 4.92 TB/s est., driver 13.0)".
  std::string describe() const;

  bool getAttribute(CUdevice_attribute attribute, int &value,
                    std::string &error) const;
  bool makeCurrent(std::string &error) const;
  bool synchronize(std::string &error) const;
  bool getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes,
                     std::string &error) const;
  /// Allocates `bytes` (> 0) of device memory.
  bool allocate(uint64_t bytes, DeviceBuffer &out, std::string &error) const;
  /// PTX or a cubin; the error holds the JIT error log.
  bool loadModule(const std::string &image, CudaModule &out,
                  std::string &error) const;
  bool createEvent(CudaEvent &out, std::string &error) const;

private:
  const CudaDriverApi *api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::shared_ptr<void> contextOwner;
  std::string name;
  int ccMajor = 0, ccMinor = 0, multiprocessorCount = 0;
  int64_t l2CacheBytes = 0;
  int memoryClockKHz = 0, memoryBusWidthBits = 0, clockKHz = 0;
  int maxSharedPerBlockOptin = 0;
  uint64_t totalMemoryBytes = 0;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDADRIVER_H

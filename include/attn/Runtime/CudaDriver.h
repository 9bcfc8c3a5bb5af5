//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A thin, checked layer over the CUDA driver API for launching compiled
// kernels: the device and its properties, device memory, modules loaded from
// PTX (or cubin), kernel launches and CUDA events for timing.
//
// The driver library is not linked: `libcuda.so.1` is opened with dlopen the
// first time a device is opened, its entry points resolved with dlsym (the
// `_v2` symbols where cuda.h maps a name to one). A binary built with this
// library starts on a machine without a GPU or driver, where
// CudaDevice::open fails with "no CUDA driver found (libcuda.so.1 could not
// be loaded)". Only the header cuda.h is needed to build.
//
// Every driver call is checked; a failure returns false and sets `error` to
// "<call> failed: CUDA_ERROR_<NAME>: <cuGetErrorString text>", with the JIT
// error log where the driver gives one.
//
// Contexts: a CudaDevice retains the device's primary context (the one the
// CUDA runtime and PyTorch use) and makes it current on the thread that
// opens it; call makeCurrent() on any other thread. Buffers, modules and
// events set their context current to free themselves.
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

/// The driver entry points resolved with dlsym: member, cuda.h function,
/// symbol.
#define ATTN_CUDA_DRIVER_ENTRY_POINTS(X)                                       \
  X(init, cuInit, "cuInit")                                                    \
  X(driverGetVersion, cuDriverGetVersion, "cuDriverGetVersion")                \
  X(getErrorString, cuGetErrorString, "cuGetErrorString")                      \
  X(getErrorName, cuGetErrorName, "cuGetErrorName")                            \
  X(deviceGetCount, cuDeviceGetCount, "cuDeviceGetCount")                      \
  X(deviceGet, cuDeviceGet, "cuDeviceGet")                                     \
  X(deviceGetAttribute, cuDeviceGetAttribute, "cuDeviceGetAttribute")          \
  X(deviceGetName, cuDeviceGetName, "cuDeviceGetName")                         \
  X(deviceTotalMem, cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2")                \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain,                          \
    "cuDevicePrimaryCtxRetain")                                                \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2,                     \
    "cuDevicePrimaryCtxRelease_v2")                                            \
  X(ctxSetCurrent, cuCtxSetCurrent, "cuCtxSetCurrent")                         \
  X(ctxSynchronize, cuCtxSynchronize, "cuCtxSynchronize")                      \
  X(moduleLoadDataEx, cuModuleLoadDataEx, "cuModuleLoadDataEx")                \
  X(moduleUnload, cuModuleUnload, "cuModuleUnload")                            \
  X(moduleGetFunction, cuModuleGetFunction, "cuModuleGetFunction")             \
  X(funcSetAttribute, cuFuncSetAttribute, "cuFuncSetAttribute")                \
  X(funcGetAttribute, cuFuncGetAttribute, "cuFuncGetAttribute")                \
  X(launchKernel, cuLaunchKernel, "cuLaunchKernel")                            \
  X(occupancyMaxActiveBlocksPerMultiprocessor,                                 \
    cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    "cuOccupancyMaxActiveBlocksPerMultiprocessor")                             \
  X(memAlloc, cuMemAlloc_v2, "cuMemAlloc_v2")                                  \
  X(memFree, cuMemFree_v2, "cuMemFree_v2")                                     \
  X(memGetInfo, cuMemGetInfo_v2, "cuMemGetInfo_v2")                            \
  X(memcpyHtoD, cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2")                            \
  X(memcpyDtoH, cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2")                            \
  X(memcpyDtoD, cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2")                            \
  X(memsetD8, cuMemsetD8_v2, "cuMemsetD8_v2")                                  \
  X(eventCreate, cuEventCreate, "cuEventCreate")                               \
  X(eventRecord, cuEventRecord, "cuEventRecord")                               \
  X(eventSynchronize, cuEventSynchronize, "cuEventSynchronize")                \
  X(eventElapsedTime, cuEventElapsedTime_v2, "cuEventElapsedTime_v2")          \
  X(eventDestroy, cuEventDestroy_v2, "cuEventDestroy_v2")

/// The table of driver entry points: every member of the list above is
/// non-null in a table loadCudaDriver returns (cuEventElapsedTime_v2, from
/// CUDA 12.8, falls back to cuEventElapsedTime).
struct CudaDriverApi {
#define ATTN_CUDA_DECLARE_ENTRY_POINT(member, symbol, name)                    \
  decltype(&::symbol) member = nullptr;
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_DECLARE_ENTRY_POINT)
#undef ATTN_CUDA_DECLARE_ENTRY_POINT
  /// Optional (CUDA 12 and newer): only kernels that take a tensor map need
  /// it (TensorMap.h); their launches fail without it.
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  /// cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
  int driverVersion = 0;
};

/// Opens libcuda.so.1, resolves the entry points and calls cuInit(0), once
/// per process (thread-safe); later calls return the same table or error:
/// "no CUDA driver found (libcuda.so.1 could not be loaded)", "no CUDA
/// driver found (libcuda.so.1 is the CUDA toolkit's stub library)", "no CUDA
/// device present", "libcuda.so.1 has no symbol cuXxx (...)" or a cuInit
/// failure.
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
  bool empty() const { return !owner; }
  /// Frees the memory now (unless a copy holds it).
  void reset() { owner.reset(); }

  /// Copies `bytes` between the host and byte `offset` of the buffer, or
  /// from device address `source`; fill sets every byte (cuMemsetD8).
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

/// The resources a compiled kernel uses (cuFuncGetAttribute).
struct KernelResources {
  int numRegisters = 0;
  /// Local memory (stack, spills) per thread.
  int localBytes = 0;
  /// Static shared memory (.shared variables of the PTX).
  int staticSharedBytes = 0;
  /// The largest block this kernel can be launched with.
  int maxThreadsPerBlock = 0;
};

/// A kernel of a loaded module: valid while its module lives.
class CudaKernel {
public:
  bool isValid() const { return function != nullptr; }
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
  /// Opens device `ordinal` (as numbered under CUDA_VISIBLE_DEVICES), reads
  /// its properties, retains its primary context and makes it current on
  /// this thread. Errors: see loadCudaDriver; also "CUDA device 3 not
  /// present (2 devices)".
  static bool open(int ordinal, CudaDevice &out, std::string &error);

  bool isOpen() const { return context != nullptr; }
  const CudaDriverApi &getApi() const { return *api; }
  CUdevice getDevice() const { return device; }

  /// E.g. "NVIDIA H200" and "sm_90".
  const std::string &getName() const { return name; }
  std::string getArchName() const;
  int getComputeCapabilityMajor() const { return ccMajor; }
  int getComputeCapabilityMinor() const { return ccMinor; }
  int getMultiprocessorCount() const { return multiprocessorCount; }
  int64_t getL2CacheBytes() const { return l2CacheBytes; }
  /// SM clock in kHz.
  int getClockKHz() const { return clockKHz; }
  /// Shared memory per block with the opt-in (bytes).
  int getMaxSharedMemoryPerBlockOptin() const { return maxSharedPerBlockOptin; }
  uint64_t getTotalMemoryBytes() const { return totalMemoryBytes; }
  /// Estimated peak DRAM bandwidth: 2 (double data rate) * memory clock *
  /// bus width / 8, bytes per second (about 4.9e12 on an H200).
  double getMemoryBandwidthBytesPerSecond() const;

  /// One line, e.g. "NVIDIA H200 (sm_90, 132 SMs, 60.0 MiB L2, 140.4 GiB,
  /// 4.92 TB/s est., driver 13.0)".
  std::string describe() const;

  /// cuDeviceGetAttribute.
  bool getAttribute(CUdevice_attribute attribute, int &value,
                    std::string &error) const;
  /// Makes the primary context current on the calling thread.
  bool makeCurrent(std::string &error) const;
  /// cuCtxSynchronize.
  bool synchronize(std::string &error) const;
  /// cuMemGetInfo.
  bool getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes,
                     std::string &error) const;
  /// Allocates `bytes` (> 0) of device memory.
  bool allocate(uint64_t bytes, DeviceBuffer &out, std::string &error) const;
  /// Loads PTX text (or a cubin) with cuModuleLoadDataEx; the error holds the
  /// JIT error log.
  bool loadModule(const std::string &image, CudaModule &out,
                  std::string &error) const;
  /// Creates an event (with timing).
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

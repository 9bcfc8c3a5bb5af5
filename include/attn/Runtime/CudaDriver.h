//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A thin, checked layer over the CUDA driver API for launching compiled
// kernels: the device and its properties, device memory, modules loaded from
// PTX (or cubin) and kernel launches, plus CUDA events for timing.
//
// The driver library is not linked: `libcuda.so.1` is opened with dlopen the
// first time a device is opened, and its entry points are resolved with dlsym
// (the `_v2` symbols where cuda.h maps a name to one). A binary built with
// this library therefore starts on a machine without a GPU or driver, where
// CudaDevice::open fails with "no CUDA driver found (libcuda.so.1 could not
// be loaded)". Only the header cuda.h is needed to build.
//
// Every driver call is checked; a failure returns false and sets `error` to
// "<call> failed: CUDA_ERROR_<NAME>: <cuGetErrorString text>", with details
// such as the JIT error log where the driver gives them. No exceptions.
//
// Contexts: a CudaDevice retains the device's primary context (the one the
// CUDA runtime and PyTorch use too) and makes it current on the thread that
// opens it. Call makeCurrent() on any other thread before using the device
// there. Buffers, modules and events must be destroyed before their device.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include "attn/Runtime/Roofline.h"

#include <cuda.h>

#include <cstdint>
#include <string>

namespace attn {
namespace runtime {

/// The driver entry points, as function pointers resolved with dlsym. The
/// member names drop the `cu` prefix and the version suffix; the comment on
/// each macro entry names the symbol.
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
  X(streamSynchronize, cuStreamSynchronize, "cuStreamSynchronize")             \
  X(eventCreate, cuEventCreate, "cuEventCreate")                               \
  X(eventRecord, cuEventRecord, "cuEventRecord")                               \
  X(eventSynchronize, cuEventSynchronize, "cuEventSynchronize")                \
  X(eventElapsedTime, cuEventElapsedTime_v2, "cuEventElapsedTime_v2")          \
  X(eventDestroy, cuEventDestroy_v2, "cuEventDestroy_v2")

/// The table of driver entry points. Every member of the list above is
/// non-null in a table returned by loadCudaDriver; the optional ones below it
/// may be null. (cuEventElapsedTime_v2 appeared in CUDA 12.8;
/// on older drivers the same-signature cuEventElapsedTime is used.)
struct CudaDriverApi {
#define ATTN_CUDA_DECLARE_ENTRY_POINT(member, symbol, name)                    \
  decltype(&::symbol) member = nullptr;
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_DECLARE_ENTRY_POINT)
#undef ATTN_CUDA_DECLARE_ENTRY_POINT

  /// Optional: cuTensorMapEncodeTiled (CUDA 12.0 and newer), null when the
  /// driver lacks it. Only the launches of kernels that take a tensor map
  /// (TensorMap.h) need it; they fail without it.
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;

  /// cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
  int driverVersion = 0;
};

/// Opens libcuda.so.1, resolves the entry points and calls cuInit(0), once
/// per process (thread-safe); later calls return the same table or the same
/// error. Errors: "no CUDA driver found (libcuda.so.1 could not be loaded)",
/// "no CUDA driver found (libcuda.so.1 is the CUDA toolkit's stub library)",
/// "no CUDA device present", "libcuda.so.1 has no symbol cuXxx (...)" or a
/// cuInit failure.
const CudaDriverApi *loadCudaDriver(std::string &error);

/// "<call> failed: CUDA_ERROR_NAME: description".
std::string formatCudaError(const CudaDriverApi &api, CUresult result,
                            const std::string &call);

class DeviceBuffer;
class CudaModule;
class CudaKernel;
class CudaEvent;

/// Options of CudaDevice::loadModule (cuModuleLoadDataEx JIT options).
struct ModuleLoadOptions {
  /// CU_JIT_LOG_VERBOSE: the info log then holds ptxas's resource report
  /// ("Used N registers, ...").
  bool verbose = false;
  /// CU_JIT_OPTIMIZATION_LEVEL 0..4; negative leaves the driver's default
  /// (4).
  int optimizationLevel = -1;
  /// Size of each of the error and info log buffers.
  unsigned logBytes = 1 << 16;
};

/// One CUDA device with its primary context retained.
class CudaDevice {
public:
  /// Opens device `ordinal` (as numbered under CUDA_VISIBLE_DEVICES), reads
  /// its properties, retains its primary context and makes it current on
  /// this thread. On failure returns false with a one-line `error` (see
  /// loadCudaDriver; also "CUDA device 3 not present (2 devices)").
  static bool open(int ordinal, CudaDevice &out, std::string &error);

  CudaDevice() = default;
  ~CudaDevice();
  CudaDevice(CudaDevice &&other) noexcept;
  CudaDevice &operator=(CudaDevice &&other) noexcept;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  bool isOpen() const { return api != nullptr; }
  const CudaDriverApi &getApi() const { return *api; }
  int getOrdinal() const { return ordinal; }
  CUdevice getDevice() const { return device; }
  CUcontext getContext() const { return context; }

  /// E.g. "NVIDIA H200".
  const std::string &getName() const { return name; }
  int getComputeCapabilityMajor() const { return ccMajor; }
  int getComputeCapabilityMinor() const { return ccMinor; }
  /// E.g. "sm_90".
  std::string getArchName() const;
  int getMultiprocessorCount() const { return multiprocessorCount; }
  int64_t getL2CacheBytes() const { return l2CacheBytes; }
  /// Peak memory clock in kHz and global memory bus width in bits.
  int getMemoryClockKHz() const { return memoryClockKHz; }
  int getMemoryBusWidthBits() const { return memoryBusWidthBits; }
  /// SM clock in kHz.
  int getClockKHz() const { return clockKHz; }
  /// Shared memory per block: default and opt-in maximum (bytes).
  int getMaxSharedMemoryPerBlock() const { return maxSharedPerBlock; }
  int getMaxSharedMemoryPerBlockOptin() const { return maxSharedPerBlockOptin; }
  uint64_t getTotalMemoryBytes() const { return totalMemoryBytes; }
  int getDriverVersion() const { return api ? api->driverVersion : 0; }

  /// Estimated peak DRAM bandwidth: 2 (double data rate) * memory clock *
  /// bus width / 8, in bytes per second (about 4.9e12 on an H200).
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

  /// Loads a module from PTX text (or a cubin/fatbin image) with
  /// cuModuleLoadDataEx. PTX must be NUL-terminated, which std::string
  /// guarantees. On failure the error holds the JIT error log.
  bool loadModule(const std::string &image, CudaModule &out, std::string &error,
                  const ModuleLoadOptions &options = ModuleLoadOptions()) const;

  /// Creates an event (CU_EVENT_DEFAULT: with timing).
  bool createEvent(CudaEvent &out, std::string &error) const;

private:
  void release();

  const CudaDriverApi *api = nullptr;
  int ordinal = -1;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int multiprocessorCount = 0;
  int64_t l2CacheBytes = 0;
  int memoryClockKHz = 0, memoryBusWidthBits = 0, clockKHz = 0;
  int maxSharedPerBlock = 0, maxSharedPerBlockOptin = 0;
  uint64_t totalMemoryBytes = 0;
};

/// Device memory, freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// The device address (0 when empty).
  CUdeviceptr get() const { return pointer; }
  uint64_t getSize() const { return size; }
  bool empty() const { return pointer == 0; }

  /// Frees the memory now.
  void reset();

  /// Copies `bytes` from the host into the buffer at byte `offset`.
  bool copyFromHost(const void *source, uint64_t bytes, std::string &error,
                    uint64_t offset = 0);
  /// Copies `bytes` at byte `offset` of the buffer to the host.
  bool copyToHost(void *destination, uint64_t bytes, std::string &error,
                  uint64_t offset = 0) const;
  /// Copies `bytes` from device address `source` into the buffer at byte
  /// `offset`.
  bool copyFromDevice(CUdeviceptr source, uint64_t bytes, std::string &error,
                      uint64_t offset = 0);
  /// Sets every byte to `value` (cuMemsetD8).
  bool fill(uint8_t value, std::string &error);

private:
  friend class CudaDevice;
  bool checkRange(const char *what, uint64_t offset, uint64_t bytes,
                  std::string &error) const;

  const CudaDriverApi *api = nullptr;
  CUcontext context = nullptr;
  CUdeviceptr pointer = 0;
  uint64_t size = 0;
};

/// The resources a compiled kernel uses (cuFuncGetAttribute).
struct KernelResources {
  int numRegisters = 0;
  /// Local memory (stack, spills) per thread.
  int localBytes = 0;
  /// Static shared memory (.shared variables of the PTX).
  int staticSharedBytes = 0;
  int constBytes = 0;
  /// The largest block this kernel can be launched with.
  int maxThreadsPerBlock = 0;
  /// PTX and binary versions, e.g. 90 for 9.0.
  int ptxVersion = 0;
  int binaryVersion = 0;

  /// E.g. "168 registers, 0 bytes local, 0 bytes static shared, max 384
  /// threads per block".
  std::string describe() const;
};

/// A kernel of a loaded module. A non-owning handle: valid while its module
/// lives.
class CudaKernel {
public:
  CudaKernel() = default;

  bool isValid() const { return function != nullptr; }
  CUfunction getFunction() const { return function; }
  const std::string &getName() const { return name; }

  bool getResources(KernelResources &out, std::string &error) const;
  /// cuFuncGetAttribute / cuFuncSetAttribute.
  bool getAttribute(CUfunction_attribute attribute, int &value,
                    std::string &error) const;
  bool setAttribute(CUfunction_attribute attribute, int value,
                    std::string &error) const;
  /// Raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to `bytes`.
  bool setMaxDynamicSharedMemory(int bytes, std::string &error) const;

  /// cuLaunchKernel. `args` is the kernelParams array (see ParamPack).
  bool launch(const unsigned grid[3], const unsigned block[3],
              unsigned sharedMemoryBytes, CUstream stream, void **args,
              std::string &error) const;

private:
  friend class CudaModule;
  const CudaDriverApi *api = nullptr;
  CUfunction function = nullptr;
  std::string name;
};

/// A loaded module, unloaded on destruction.
class CudaModule {
public:
  CudaModule() = default;
  ~CudaModule() { reset(); }
  CudaModule(CudaModule &&other) noexcept;
  CudaModule &operator=(CudaModule &&other) noexcept;
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  bool isLoaded() const { return module != nullptr; }
  CUmodule get() const { return module; }
  void reset();

  /// The JIT info log of the load (ptxas's report with verbose loading).
  const std::string &getInfoLog() const { return infoLog; }

  /// cuModuleGetFunction. The error lists nothing more than the name: the
  /// caller knows the PTX.
  bool getFunction(const std::string &name, CudaKernel &out,
                   std::string &error) const;

private:
  friend class CudaDevice;
  const CudaDriverApi *api = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::string infoLog;
};

/// A CUDA event, destroyed on destruction.
class CudaEvent {
public:
  CudaEvent() = default;
  ~CudaEvent() { reset(); }
  CudaEvent(CudaEvent &&other) noexcept;
  CudaEvent &operator=(CudaEvent &&other) noexcept;
  CudaEvent(const CudaEvent &) = delete;
  CudaEvent &operator=(const CudaEvent &) = delete;

  CUevent get() const { return event; }
  void reset();

  bool record(CUstream stream, std::string &error) const;
  bool synchronize(std::string &error) const;
  /// Milliseconds from `start` to `end` (both recorded and completed).
  static bool elapsedMs(const CudaEvent &start, const CudaEvent &end,
                        float &milliseconds, std::string &error);

private:
  friend class CudaDevice;
  const CudaDriverApi *api = nullptr;
  CUcontext context = nullptr;
  CUevent event = nullptr;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDADRIVER_H

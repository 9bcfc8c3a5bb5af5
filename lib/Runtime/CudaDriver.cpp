//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"

#include "attn/Runtime/HostTensor.h"

#include <type_traits>
#include <vector>

#include <dlfcn.h>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Loading the driver
//===----------------------------------------------------------------------===//

namespace {
/// The result of the one load attempt of the process.
struct DriverState {
  CudaDriverApi api;
  std::string error;
};
} // namespace

static DriverState loadDriverOnce() {
  DriverState state;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace; the
  // handle is never closed (the driver lives as long as the process).
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    state.error = "no CUDA driver found (libcuda.so.1 could not be loaded)";
    return state;
  }
  CudaDriverApi &api = state.api;
  auto resolve = [&](auto &member, const char *symbol) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(
        dlsym(handle, symbol));
    return member != nullptr;
  };
  resolve(api.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  // Drivers before 12.8 have only the first cuEventElapsedTime, with the
  // same signature.
  std::string fallback = "cuEventElapsedTime";
#define ATTN_CUDA_RESOLVE_ENTRY_POINT(member, symbol)                          \
  if (!resolve(api.member, #symbol) &&                                         \
      !(fallback + "_v2" == #symbol &&                                         \
        resolve(api.member, fallback.c_str()))) {                              \
    state.error = std::string("libcuda.so.1 has no symbol ") + #symbol +       \
                  " (the CUDA driver is too old)";                             \
    return state;                                                              \
  }
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_RESOLVE_ENTRY_POINT)
#undef ATTN_CUDA_RESOLVE_ENTRY_POINT

  CUresult result = api.init(0);
  if (result == CUDA_SUCCESS)
    result = api.driverGetVersion(&api.driverVersion);
  if (result == CUDA_ERROR_STUB_LIBRARY)
    state.error = "no CUDA driver found (libcuda.so.1 is the CUDA toolkit's "
                  "stub library)";
  else if (result == CUDA_ERROR_NO_DEVICE)
    state.error = "no CUDA device present";
  else if (result != CUDA_SUCCESS)
    state.error = formatCudaError(api, result, "cuInit");
  return state;
}

const CudaDriverApi *attn::runtime::loadCudaDriver(std::string &error) {
  static const DriverState state = loadDriverOnce();
  if (!state.error.empty())
    error = state.error;
  return state.error.empty() ? &state.api : nullptr;
}

std::string attn::runtime::formatCudaError(const CudaDriverApi &api,
                                           CUresult result,
                                           const std::string &call) {
  const char *name = nullptr, *description = nullptr;
  if (api.getErrorName)
    api.getErrorName(result, &name);
  if (api.getErrorString)
    api.getErrorString(result, &description);
  return call + " failed: " +
         (name ? name : "CUDA error " + std::to_string(int(result))) +
         (description ? std::string(": ") + description : "");
}

/// Checks `result`; on failure sets `error` and returns false.
static bool check(const CudaDriverApi &api, CUresult result,
                  const std::string &call, std::string &error) {
  if (result != CUDA_SUCCESS)
    error = formatCudaError(api, result, call);
  return result == CUDA_SUCCESS;
}

static std::string formatBytes(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (1ull << 30))
    text += formatString(", %.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

//===----------------------------------------------------------------------===//
// CudaDevice
//===----------------------------------------------------------------------===//

bool CudaDevice::open(int ordinal, CudaDevice &out, std::string &error) {
  const CudaDriverApi *api = loadCudaDriver(error);
  int count = 0;
  if (!api ||
      !check(*api, api->deviceGetCount(&count), "cuDeviceGetCount", error))
    return false;
  if (count == 0 || ordinal < 0 || ordinal >= count)
    return failWith(error, count == 0
                               ? "no CUDA device present"
                               : "CUDA device " + std::to_string(ordinal) +
                                     " not present (" + std::to_string(count) +
                                     (count == 1 ? " device)" : " devices)"));
  CudaDevice device;
  device.api = api;
  char name[256] = {0};
  size_t totalBytes = 0;
  if (!check(*api, api->deviceGet(&device.device, ordinal), "cuDeviceGet",
             error) ||
      !check(*api, api->deviceGetName(name, sizeof(name) - 1, device.device),
             "cuDeviceGetName", error) ||
      !check(*api, api->deviceTotalMem(&totalBytes, device.device),
             "cuDeviceTotalMem_v2", error))
    return false;
  device.name = name;
  device.totalMemoryBytes = totalBytes;
  int l2Bytes = 0;
  std::pair<CUdevice_attribute, int *> attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &device.ccMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &device.ccMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &device.multiprocessorCount},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2Bytes},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &device.memoryClockKHz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &device.memoryBusWidthBits},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &device.clockKHz},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &device.maxSharedPerBlockOptin},
  };
  for (auto [attribute, value] : attributes)
    if (!device.getAttribute(attribute, *value, error))
      return false;
  device.l2CacheBytes = l2Bytes;
  if (!check(*api, api->devicePrimaryCtxRetain(&device.context, device.device),
             "cuDevicePrimaryCtxRetain", error))
    return false;
  CUdevice handle = device.device;
  device.contextOwner.reset(device.context, [api, handle](void *) {
    api->devicePrimaryCtxRelease(handle);
  });
  if (!device.makeCurrent(error))
    return false;
  out = std::move(device);
  return true;
}

bool CudaDevice::getAttribute(CUdevice_attribute attribute, int &value,
                              std::string &error) const {
  return check(*api, api->deviceGetAttribute(&value, attribute, device),
               "cuDeviceGetAttribute(" + std::to_string(int(attribute)) + ")",
               error);
}

std::string CudaDevice::getArchName() const {
  return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
}

double CudaDevice::getMemoryBandwidthBytesPerSecond() const {
  return 2.0 * memoryClockKHz * 1000.0 * memoryBusWidthBits / 8.0;
}

std::string CudaDevice::describe() const {
  int version = api ? api->driverVersion : 0;
  return formatString("%s (%s, %d SMs, %.1f MiB L2, %.1f GiB, %.2f TB/s est., "
                      "driver %d.%d)",
                      name.c_str(), getArchName().c_str(), multiprocessorCount,
                      l2CacheBytes / (1024.0 * 1024.0),
                      totalMemoryBytes / (1024.0 * 1024.0 * 1024.0),
                      getMemoryBandwidthBytesPerSecond() / 1e12, version / 1000,
                      version % 1000 / 10);
}

bool CudaDevice::makeCurrent(std::string &error) const {
  if (!context)
    error = "the CUDA device is not open";
  return context &&
         check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error);
}

bool CudaDevice::synchronize(std::string &error) const {
  return makeCurrent(error) &&
         check(*api, api->ctxSynchronize(), "cuCtxSynchronize", error);
}

bool CudaDevice::getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes,
                               std::string &error) const {
  size_t freeValue = 0, totalValue = 0;
  if (!makeCurrent(error) ||
      !check(*api, api->memGetInfo(&freeValue, &totalValue), "cuMemGetInfo_v2",
             error))
    return false;
  freeBytes = freeValue;
  totalBytes = totalValue;
  return true;
}

bool CudaDevice::allocate(uint64_t bytes, DeviceBuffer &out,
                          std::string &error) const {
  CUdeviceptr pointer = 0;
  if (!makeCurrent(error))
    return false;
  if (bytes == 0)
    return failWith(error, "cannot allocate 0 bytes of device memory");
  if (!check(*api, api->memAlloc(&pointer, bytes),
             "cuMemAlloc_v2(" + formatBytes(bytes) + ")", error))
    return false;
  out.api = api;
  out.context = context;
  out.pointer = pointer;
  out.size = bytes;
  // Freeing needs the context current; errors (after the context went) are
  // ignored, as in any destructor.
  out.owner.reset(reinterpret_cast<void *>(pointer),
                  [api = api, context = context, pointer](void *) {
                    api->ctxSetCurrent(context);
                    api->memFree(pointer);
                  });
  return true;
}

/// The ".version X.Y" of PTX text, or "".
static std::string getPtxVersion(const std::string &image) {
  size_t pos = image.find(".version");
  if (pos == std::string::npos)
    return "";
  pos = image.find_first_not_of(" \t", pos + 8);
  size_t end = image.find_first_not_of("0123456789.", pos);
  return pos == std::string::npos ? "" : image.substr(pos, end - pos);
}

bool CudaDevice::loadModule(const std::string &image, CudaModule &out,
                            std::string &error) const {
  if (!makeCurrent(error))
    return false;
  std::vector<char> log(1 << 16, '\0');
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size() - 1)};
  CUmodule module = nullptr;
  CUresult result =
      api->moduleLoadDataEx(&module, image.c_str(), 2, keys, values);
  if (result != CUDA_SUCCESS) {
    error = formatCudaError(*api, result, "cuModuleLoadDataEx");
    std::string version = getPtxVersion(image);
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && !version.empty())
      error += " (the PTX is ISA version " + version + "; driver " +
               std::to_string(api->driverVersion / 1000) + "." +
               std::to_string(api->driverVersion % 1000 / 10) +
               " is too old for it)";
    std::string text(log.data());
    if (size_t end = text.find_last_not_of(" \t\r\n"); end != std::string::npos)
      error += "\nJIT error log:\n" + text.substr(0, end + 1);
    return false;
  }
  out.api = api;
  out.owner.reset(module, [api = api, context = context](CUmodule loaded) {
    api->ctxSetCurrent(context);
    api->moduleUnload(loaded);
  });
  return true;
}

bool CudaDevice::createEvent(CudaEvent &out, std::string &error) const {
  CUevent event = nullptr;
  if (!makeCurrent(error) ||
      !check(*api, api->eventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate",
             error))
    return false;
  out.api = api;
  out.owner.reset(event, [api = api, context = context](CUevent created) {
    api->ctxSetCurrent(context);
    api->eventDestroy(created);
  });
  return true;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer, CudaModule, CudaKernel, CudaEvent
//===----------------------------------------------------------------------===//

bool DeviceBuffer::check(const char *call, uint64_t offset, uint64_t bytes,
                         std::string &error) const {
  if (!owner)
    error = std::string(call) + ": the device buffer is empty";
  else if (offset > size || bytes > size - offset)
    error = concat(call, ": ", bytes, " bytes at offset ", offset,
                   " exceed the buffer's ", size, " bytes");
  else
    return ::check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error);
  return false;
}

bool DeviceBuffer::copyFromHost(const void *source, uint64_t bytes,
                                std::string &error, uint64_t offset) {
  return check("cuMemcpyHtoD_v2", offset, bytes, error) &&
         (bytes == 0 ||
          ::check(*api, api->memcpyHtoD(pointer + offset, source, bytes),
                  "cuMemcpyHtoD_v2(" + formatBytes(bytes) + ")", error));
}

bool DeviceBuffer::copyToHost(void *destination, uint64_t bytes,
                              std::string &error, uint64_t offset) const {
  return check("cuMemcpyDtoH_v2", offset, bytes, error) &&
         (bytes == 0 ||
          ::check(*api, api->memcpyDtoH(destination, pointer + offset, bytes),
                  "cuMemcpyDtoH_v2(" + formatBytes(bytes) + ")", error));
}

bool DeviceBuffer::copyFromDevice(CUdeviceptr source, uint64_t bytes,
                                  std::string &error, uint64_t offset) {
  return check("cuMemcpyDtoD_v2", offset, bytes, error) &&
         (bytes == 0 ||
          ::check(*api, api->memcpyDtoD(pointer + offset, source, bytes),
                  "cuMemcpyDtoD_v2(" + formatBytes(bytes) + ")", error));
}

bool DeviceBuffer::fill(uint8_t value, std::string &error) {
  return check("cuMemsetD8_v2", 0, size, error) &&
         ::check(*api, api->memsetD8(pointer, value, size),
                 "cuMemsetD8_v2(" + formatBytes(size) + ")", error);
}

bool CudaModule::getFunction(const std::string &name, CudaKernel &out,
                             std::string &error) const {
  if (!owner)
    return failWith(error, "cuModuleGetFunction: the module is not loaded");
  CUfunction function = nullptr;
  if (!check(*api, api->moduleGetFunction(&function, owner.get(), name.c_str()),
             "cuModuleGetFunction(\"" + name + "\")", error))
    return false;
  out.api = api;
  out.function = function;
  out.name = name;
  return true;
}

bool CudaKernel::getResources(KernelResources &out, std::string &error) const {
  std::pair<CUfunction_attribute, int *> attributes[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &out.numRegisters},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &out.localBytes},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &out.staticSharedBytes},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out.maxThreadsPerBlock}};
  for (auto [attribute, value] : attributes)
    if (!check(*api, api->funcGetAttribute(value, attribute, function),
               "cuFuncGetAttribute(" + std::to_string(int(attribute)) +
                   ") of " + name,
               error))
      return false;
  return true;
}

bool CudaKernel::setMaxDynamicSharedMemory(int bytes,
                                           std::string &error) const {
  return check(
      *api,
      api->funcSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
      "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) = " +
          std::to_string(bytes) + " of " + name,
      error);
}

bool CudaKernel::launch(const unsigned grid[3], const unsigned block[3],
                        unsigned sharedMemoryBytes, CUstream stream,
                        void **args, std::string &error) const {
  if (!function)
    return failWith(error, "cuLaunchKernel: no kernel");
  CUresult result =
      api->launchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                        block[2], sharedMemoryBytes, stream, args, nullptr);
  if (result == CUDA_SUCCESS)
    return true;
  return check(*api, result,
               formatString("cuLaunchKernel(%s, grid %ux%ux%u, block "
                            "%ux%ux%u, %u bytes dynamic shared memory)",
                            name.c_str(), grid[0], grid[1], grid[2], block[0],
                            block[1], block[2], sharedMemoryBytes),
               error);
}

bool CudaEvent::record(CUstream stream, std::string &error) const {
  return check(*api, api->eventRecord(owner.get(), stream), "cuEventRecord",
               error);
}

bool CudaEvent::synchronize(std::string &error) const {
  return check(*api, api->eventSynchronize(owner.get()), "cuEventSynchronize",
               error);
}

bool CudaEvent::elapsedMs(const CudaEvent &start, const CudaEvent &end,
                          float &milliseconds, std::string &error) {
  return check(*start.api,
               start.api->eventElapsedTime(&milliseconds, start.owner.get(),
                                           end.owner.get()),
               "cuEventElapsedTime", error);
}

//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"

#include <cstdio>
#include <cstring>
#include <utility>
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
  bool loaded = false;
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
#define ATTN_CUDA_RESOLVE_ENTRY_POINT(member, symbol, symbolName)              \
  api.member =                                                                 \
      reinterpret_cast<decltype(api.member)>(dlsym(handle, symbolName));
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_RESOLVE_ENTRY_POINT)
#undef ATTN_CUDA_RESOLVE_ENTRY_POINT
  // Drivers before 12.8 have only the first version of cuEventElapsedTime,
  // with the same signature.
  if (!api.eventElapsedTime)
    api.eventElapsedTime = reinterpret_cast<decltype(api.eventElapsedTime)>(
        dlsym(handle, "cuEventElapsedTime"));
  // Optional entry points: a launch that needs one fails without it.
  api.tensorMapEncodeTiled =
      reinterpret_cast<decltype(api.tensorMapEncodeTiled)>(
          dlsym(handle, "cuTensorMapEncodeTiled"));
#define ATTN_CUDA_CHECK_ENTRY_POINT(member, symbol, symbolName)                \
  if (!api.member) {                                                           \
    state.error = std::string("libcuda.so.1 has no symbol ") + symbolName +    \
                  " (the CUDA driver is too old)";                             \
    return state;                                                              \
  }
  ATTN_CUDA_DRIVER_ENTRY_POINTS(ATTN_CUDA_CHECK_ENTRY_POINT)
#undef ATTN_CUDA_CHECK_ENTRY_POINT

  CUresult result = api.init(0);
  if (result == CUDA_ERROR_STUB_LIBRARY) {
    state.error =
        "no CUDA driver found (libcuda.so.1 is the CUDA toolkit's stub "
        "library)";
    return state;
  }
  if (result == CUDA_ERROR_NO_DEVICE) {
    state.error = "no CUDA device present";
    return state;
  }
  if (result != CUDA_SUCCESS) {
    state.error = formatCudaError(api, result, "cuInit");
    return state;
  }
  result = api.driverGetVersion(&api.driverVersion);
  if (result != CUDA_SUCCESS) {
    state.error = formatCudaError(api, result, "cuDriverGetVersion");
    return state;
  }
  state.loaded = true;
  return state;
}

const CudaDriverApi *attn::runtime::loadCudaDriver(std::string &error) {
  static const DriverState state = loadDriverOnce();
  if (!state.loaded) {
    error = state.error;
    return nullptr;
  }
  return &state.api;
}

std::string attn::runtime::formatCudaError(const CudaDriverApi &api,
                                           CUresult result,
                                           const std::string &call) {
  const char *name = nullptr;
  const char *description = nullptr;
  if (api.getErrorName)
    api.getErrorName(result, &name);
  if (api.getErrorString)
    api.getErrorString(result, &description);
  std::string text = call + " failed: ";
  text +=
      name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (description)
    text += std::string(": ") + description;
  return text;
}

/// Checks `result`; on failure sets `error` and returns false.
static bool check(const CudaDriverApi &api, CUresult result,
                  const std::string &call, std::string &error) {
  if (result == CUDA_SUCCESS)
    return true;
  error = formatCudaError(api, result, call);
  return false;
}

//===----------------------------------------------------------------------===//
// CudaDevice
//===----------------------------------------------------------------------===//

bool CudaDevice::open(int ordinal, CudaDevice &out, std::string &error) {
  const CudaDriverApi *api = loadCudaDriver(error);
  if (!api)
    return false;
  int count = 0;
  if (!check(*api, api->deviceGetCount(&count), "cuDeviceGetCount", error))
    return false;
  if (count == 0) {
    error = "no CUDA device present";
    return false;
  }
  if (ordinal < 0 || ordinal >= count) {
    error = "CUDA device " + std::to_string(ordinal) + " not present (" +
            std::to_string(count) + (count == 1 ? " device)" : " devices)");
    return false;
  }

  CudaDevice device;
  device.ordinal = ordinal;
  if (!check(*api, api->deviceGet(&device.device, ordinal), "cuDeviceGet",
             error))
    return false;
  char name[256] = {0};
  if (!check(*api, api->deviceGetName(name, sizeof(name) - 1, device.device),
             "cuDeviceGetName", error))
    return false;
  device.name = name;

  struct Attribute {
    CUdevice_attribute attribute;
    const char *label;
    int *value;
  };
  int l2Bytes = 0;
  Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
       &device.ccMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR",
       &device.ccMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT",
       &device.multiprocessorCount},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE", &l2Bytes},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE",
       &device.memoryClockKHz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "GLOBAL_MEMORY_BUS_WIDTH",
       &device.memoryBusWidthBits},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE", &device.clockKHz},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
       "MAX_SHARED_MEMORY_PER_BLOCK", &device.maxSharedPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", &device.maxSharedPerBlockOptin},
  };
  for (const Attribute &attribute : attributes) {
    if (!check(*api,
               api->deviceGetAttribute(attribute.value, attribute.attribute,
                                       device.device),
               std::string("cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_") +
                   attribute.label + ")",
               error))
      return false;
  }
  device.l2CacheBytes = l2Bytes;
  size_t totalBytes = 0;
  if (!check(*api, api->deviceTotalMem(&totalBytes, device.device),
             "cuDeviceTotalMem_v2", error))
    return false;
  device.totalMemoryBytes = totalBytes;

  if (!check(*api, api->devicePrimaryCtxRetain(&device.context, device.device),
             "cuDevicePrimaryCtxRetain", error))
    return false;
  // From here on `device` releases the context if anything fails.
  device.api = api;
  if (!device.makeCurrent(error))
    return false;
  out = std::move(device);
  return true;
}

CudaDevice::~CudaDevice() { release(); }

void CudaDevice::release() {
  if (api && context)
    api->devicePrimaryCtxRelease(device);
  api = nullptr;
  context = nullptr;
}

CudaDevice::CudaDevice(CudaDevice &&other) noexcept {
  *this = std::move(other);
}

CudaDevice &CudaDevice::operator=(CudaDevice &&other) noexcept {
  if (this == &other)
    return *this;
  release();
  api = other.api;
  ordinal = other.ordinal;
  device = other.device;
  context = other.context;
  name = std::move(other.name);
  ccMajor = other.ccMajor;
  ccMinor = other.ccMinor;
  multiprocessorCount = other.multiprocessorCount;
  l2CacheBytes = other.l2CacheBytes;
  memoryClockKHz = other.memoryClockKHz;
  memoryBusWidthBits = other.memoryBusWidthBits;
  clockKHz = other.clockKHz;
  maxSharedPerBlock = other.maxSharedPerBlock;
  maxSharedPerBlockOptin = other.maxSharedPerBlockOptin;
  totalMemoryBytes = other.totalMemoryBytes;
  other.api = nullptr;
  other.context = nullptr;
  return *this;
}

bool CudaDevice::getAttribute(CUdevice_attribute attribute, int &value,
                              std::string &error) const {
  if (!api) {
    error = "the CUDA device is not open";
    return false;
  }
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
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "%s (%s, %d SMs, %.1f MiB L2, %.1f GiB, %.2f TB/s est., "
                "driver %d.%d)",
                name.c_str(), getArchName().c_str(), multiprocessorCount,
                l2CacheBytes / (1024.0 * 1024.0),
                totalMemoryBytes / (1024.0 * 1024.0 * 1024.0),
                getMemoryBandwidthBytesPerSecond() / 1e12,
                getDriverVersion() / 1000, getDriverVersion() % 1000 / 10);
  return buffer;
}

bool CudaDevice::makeCurrent(std::string &error) const {
  if (!api) {
    error = "the CUDA device is not open";
    return false;
  }
  return check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error);
}

bool CudaDevice::synchronize(std::string &error) const {
  if (!makeCurrent(error))
    return false;
  return check(*api, api->ctxSynchronize(), "cuCtxSynchronize", error);
}

bool CudaDevice::getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes,
                               std::string &error) const {
  if (!makeCurrent(error))
    return false;
  size_t freeValue = 0, totalValue = 0;
  if (!check(*api, api->memGetInfo(&freeValue, &totalValue), "cuMemGetInfo_v2",
             error))
    return false;
  freeBytes = freeValue;
  totalBytes = totalValue;
  return true;
}

static std::string formatBytes(uint64_t bytes) {
  char buffer[64];
  if (bytes >= (1ull << 30))
    std::snprintf(buffer, sizeof(buffer), "%llu bytes, %.2f GiB",
                  static_cast<unsigned long long>(bytes),
                  bytes / (1024.0 * 1024.0 * 1024.0));
  else
    std::snprintf(buffer, sizeof(buffer), "%llu bytes",
                  static_cast<unsigned long long>(bytes));
  return buffer;
}

bool CudaDevice::allocate(uint64_t bytes, DeviceBuffer &out,
                          std::string &error) const {
  if (!makeCurrent(error))
    return false;
  if (bytes == 0) {
    error = "cannot allocate 0 bytes of device memory";
    return false;
  }
  CUdeviceptr pointer = 0;
  if (!check(*api, api->memAlloc(&pointer, bytes),
             "cuMemAlloc_v2(" + formatBytes(bytes) + ")", error))
    return false;
  DeviceBuffer buffer;
  buffer.api = api;
  buffer.context = context;
  buffer.pointer = pointer;
  buffer.size = bytes;
  out = std::move(buffer);
  return true;
}

/// The ".version X.Y" of PTX text, or "".
static std::string getPtxVersion(const std::string &image) {
  size_t pos = image.find(".version");
  if (pos == std::string::npos)
    return "";
  pos += 8;
  while (pos < image.size() && (image[pos] == ' ' || image[pos] == '\t'))
    ++pos;
  size_t end = pos;
  while (end < image.size() &&
         ((image[end] >= '0' && image[end] <= '9') || image[end] == '.'))
    ++end;
  return image.substr(pos, end - pos);
}

/// Trims trailing whitespace and NULs of a JIT log.
static std::string trimLog(const std::vector<char> &buffer) {
  std::string text(buffer.data(), strnlen(buffer.data(), buffer.size()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' ||
                           text.back() == '\r' || text.back() == '\t'))
    text.pop_back();
  return text;
}

bool CudaDevice::loadModule(const std::string &image, CudaModule &out,
                            std::string &error,
                            const ModuleLoadOptions &options) const {
  if (!makeCurrent(error))
    return false;
  unsigned logBytes = options.logBytes < 1024 ? 1024 : options.logBytes;
  std::vector<char> errorLog(logBytes, '\0'), infoLog(logBytes, '\0');
  std::vector<CUjit_option> keys;
  std::vector<void *> values;
  auto addOption = [&](CUjit_option key, uintptr_t value) {
    keys.push_back(key);
    values.push_back(reinterpret_cast<void *>(value));
  };
  addOption(CU_JIT_ERROR_LOG_BUFFER,
            reinterpret_cast<uintptr_t>(errorLog.data()));
  addOption(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, logBytes - 1);
  addOption(CU_JIT_INFO_LOG_BUFFER,
            reinterpret_cast<uintptr_t>(infoLog.data()));
  addOption(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, logBytes - 1);
  if (options.verbose)
    addOption(CU_JIT_LOG_VERBOSE, 1);
  if (options.optimizationLevel >= 0)
    addOption(CU_JIT_OPTIMIZATION_LEVEL,
              static_cast<uintptr_t>(options.optimizationLevel > 4
                                         ? 4
                                         : options.optimizationLevel));

  CUmodule module = nullptr;
  CUresult result = api->moduleLoadDataEx(&module, image.c_str(),
                                          static_cast<unsigned>(keys.size()),
                                          keys.data(), values.data());
  if (result != CUDA_SUCCESS) {
    error = formatCudaError(*api, result, "cuModuleLoadDataEx");
    std::string version = getPtxVersion(image);
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && !version.empty())
      error += " (the PTX is ISA version " + version + "; driver " +
               std::to_string(getDriverVersion() / 1000) + "." +
               std::to_string(getDriverVersion() % 1000 / 10) +
               " is too old for it)";
    std::string log = trimLog(errorLog);
    if (!log.empty())
      error += "\nJIT error log:\n" + log;
    return false;
  }
  CudaModule loaded;
  loaded.api = api;
  loaded.context = context;
  loaded.module = module;
  loaded.infoLog = trimLog(infoLog);
  out = std::move(loaded);
  return true;
}

bool CudaDevice::createEvent(CudaEvent &out, std::string &error) const {
  if (!makeCurrent(error))
    return false;
  CUevent event = nullptr;
  if (!check(*api, api->eventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate",
             error))
    return false;
  CudaEvent created;
  created.api = api;
  created.context = context;
  created.event = event;
  out = std::move(created);
  return true;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept {
  *this = std::move(other);
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this == &other)
    return *this;
  reset();
  api = other.api;
  context = other.context;
  pointer = other.pointer;
  size = other.size;
  other.pointer = 0;
  other.size = 0;
  return *this;
}

void DeviceBuffer::reset() {
  if (api && pointer) {
    // Freeing needs the context current; errors (e.g. after the context was
    // destroyed) are ignored, as in any destructor.
    api->ctxSetCurrent(context);
    api->memFree(pointer);
  }
  pointer = 0;
  size = 0;
}

bool DeviceBuffer::checkRange(const char *what, uint64_t offset, uint64_t bytes,
                              std::string &error) const {
  if (!api || !pointer) {
    error = std::string(what) + ": the device buffer is empty";
    return false;
  }
  if (offset > size || bytes > size - offset) {
    error = std::string(what) + ": " + std::to_string(bytes) +
            " bytes at offset " + std::to_string(offset) +
            " exceed the buffer's " + std::to_string(size) + " bytes";
    return false;
  }
  return true;
}

bool DeviceBuffer::copyFromHost(const void *source, uint64_t bytes,
                                std::string &error, uint64_t offset) {
  if (!checkRange("cuMemcpyHtoD_v2", offset, bytes, error))
    return false;
  if (bytes == 0)
    return true;
  return check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error) &&
         check(*api, api->memcpyHtoD(pointer + offset, source, bytes),
               "cuMemcpyHtoD_v2(" + formatBytes(bytes) + ")", error);
}

bool DeviceBuffer::copyToHost(void *destination, uint64_t bytes,
                              std::string &error, uint64_t offset) const {
  if (!checkRange("cuMemcpyDtoH_v2", offset, bytes, error))
    return false;
  if (bytes == 0)
    return true;
  return check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error) &&
         check(*api, api->memcpyDtoH(destination, pointer + offset, bytes),
               "cuMemcpyDtoH_v2(" + formatBytes(bytes) + ")", error);
}

bool DeviceBuffer::copyFromDevice(CUdeviceptr source, uint64_t bytes,
                                  std::string &error, uint64_t offset) {
  if (!checkRange("cuMemcpyDtoD_v2", offset, bytes, error))
    return false;
  if (bytes == 0)
    return true;
  return check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error) &&
         check(*api, api->memcpyDtoD(pointer + offset, source, bytes),
               "cuMemcpyDtoD_v2(" + formatBytes(bytes) + ")", error);
}

bool DeviceBuffer::fill(uint8_t value, std::string &error) {
  if (!checkRange("cuMemsetD8_v2", 0, size, error))
    return false;
  return check(*api, api->ctxSetCurrent(context), "cuCtxSetCurrent", error) &&
         check(*api, api->memsetD8(pointer, value, size),
               "cuMemsetD8_v2(" + formatBytes(size) + ")", error);
}

//===----------------------------------------------------------------------===//
// CudaModule, CudaKernel
//===----------------------------------------------------------------------===//

CudaModule::CudaModule(CudaModule &&other) noexcept {
  *this = std::move(other);
}

CudaModule &CudaModule::operator=(CudaModule &&other) noexcept {
  if (this == &other)
    return *this;
  reset();
  api = other.api;
  context = other.context;
  module = other.module;
  infoLog = std::move(other.infoLog);
  other.module = nullptr;
  return *this;
}

void CudaModule::reset() {
  if (api && module) {
    api->ctxSetCurrent(context);
    api->moduleUnload(module);
  }
  module = nullptr;
}

bool CudaModule::getFunction(const std::string &name, CudaKernel &out,
                             std::string &error) const {
  if (!api || !module) {
    error = "cuModuleGetFunction: the module is not loaded";
    return false;
  }
  CUfunction function = nullptr;
  if (!check(*api, api->moduleGetFunction(&function, module, name.c_str()),
             "cuModuleGetFunction(\"" + name + "\")", error))
    return false;
  CudaKernel kernel;
  kernel.api = api;
  kernel.function = function;
  kernel.name = name;
  out = std::move(kernel);
  return true;
}

std::string KernelResources::describe() const {
  return std::to_string(numRegisters) + " registers, " +
         std::to_string(localBytes) + " bytes local, " +
         std::to_string(staticSharedBytes) + " bytes static shared, max " +
         std::to_string(maxThreadsPerBlock) + " threads per block";
}

static const char *getFunctionAttributeName(CUfunction_attribute attribute) {
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    return "MAX_THREADS_PER_BLOCK";
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    return "SHARED_SIZE_BYTES";
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    return "CONST_SIZE_BYTES";
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    return "LOCAL_SIZE_BYTES";
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    return "NUM_REGS";
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    return "PTX_VERSION";
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    return "BINARY_VERSION";
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    return "MAX_DYNAMIC_SHARED_SIZE_BYTES";
  default:
    return nullptr;
  }
}

static std::string formatFunctionAttribute(const char *call,
                                           CUfunction_attribute attribute) {
  const char *name = getFunctionAttributeName(attribute);
  return std::string(call) + "(" +
         (name ? std::string("CU_FUNC_ATTRIBUTE_") + name
               : std::to_string(static_cast<int>(attribute))) +
         ")";
}

bool CudaKernel::getAttribute(CUfunction_attribute attribute, int &value,
                              std::string &error) const {
  if (!api || !function) {
    error = "cuFuncGetAttribute: no kernel";
    return false;
  }
  return check(*api, api->funcGetAttribute(&value, attribute, function),
               formatFunctionAttribute("cuFuncGetAttribute", attribute) +
                   " of " + name,
               error);
}

bool CudaKernel::setAttribute(CUfunction_attribute attribute, int value,
                              std::string &error) const {
  if (!api || !function) {
    error = "cuFuncSetAttribute: no kernel";
    return false;
  }
  return check(*api, api->funcSetAttribute(function, attribute, value),
               formatFunctionAttribute("cuFuncSetAttribute", attribute) +
                   " = " + std::to_string(value) + " of " + name,
               error);
}

bool CudaKernel::setMaxDynamicSharedMemory(int bytes,
                                           std::string &error) const {
  return setAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes,
                      error);
}

bool CudaKernel::getResources(KernelResources &out, std::string &error) const {
  KernelResources resources;
  return getAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, resources.numRegisters,
                      error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, resources.localBytes,
                      error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                      resources.staticSharedBytes, error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, resources.constBytes,
                      error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                      resources.maxThreadsPerBlock, error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_PTX_VERSION, resources.ptxVersion,
                      error) &&
         getAttribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION, resources.binaryVersion,
                      error) &&
         (out = resources, true);
}

bool CudaKernel::launch(const unsigned grid[3], const unsigned block[3],
                        unsigned sharedMemoryBytes, CUstream stream,
                        void **args, std::string &error) const {
  if (!api || !function) {
    error = "cuLaunchKernel: no kernel";
    return false;
  }
  CUresult result =
      api->launchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                        block[2], sharedMemoryBytes, stream, args, nullptr);
  if (result == CUDA_SUCCESS)
    return true;
  char details[256];
  std::snprintf(details, sizeof(details),
                "cuLaunchKernel(%s, grid %ux%ux%u, block %ux%ux%u, %u bytes "
                "dynamic shared memory)",
                name.c_str(), grid[0], grid[1], grid[2], block[0], block[1],
                block[2], sharedMemoryBytes);
  error = formatCudaError(*api, result, details);
  return false;
}

//===----------------------------------------------------------------------===//
// CudaEvent
//===----------------------------------------------------------------------===//

CudaEvent::CudaEvent(CudaEvent &&other) noexcept { *this = std::move(other); }

CudaEvent &CudaEvent::operator=(CudaEvent &&other) noexcept {
  if (this == &other)
    return *this;
  reset();
  api = other.api;
  context = other.context;
  event = other.event;
  other.event = nullptr;
  return *this;
}

void CudaEvent::reset() {
  if (api && event) {
    api->ctxSetCurrent(context);
    api->eventDestroy(event);
  }
  event = nullptr;
}

bool CudaEvent::record(CUstream stream, std::string &error) const {
  if (!api || !event) {
    error = "cuEventRecord: no event";
    return false;
  }
  return check(*api, api->eventRecord(event, stream), "cuEventRecord", error);
}

bool CudaEvent::synchronize(std::string &error) const {
  if (!api || !event) {
    error = "cuEventSynchronize: no event";
    return false;
  }
  return check(*api, api->eventSynchronize(event), "cuEventSynchronize", error);
}

bool CudaEvent::elapsedMs(const CudaEvent &start, const CudaEvent &end,
                          float &milliseconds, std::string &error) {
  if (!start.api || !start.event || !end.event) {
    error = "cuEventElapsedTime: no event";
    return false;
  }
  return check(
      *start.api,
      start.api->eventElapsedTime(&milliseconds, start.event, end.event),
      "cuEventElapsedTime", error);
}

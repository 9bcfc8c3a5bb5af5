//===- CudaLaunch.cpp - Launching manifest kernels through CUDA -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaLaunch.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Preparing a launch
//===----------------------------------------------------------------------===//

bool attn::runtime::prepareLaunch(
    const Manifest &manifest, const std::map<std::string, TensorArg> &operands,
    const ProblemSizes &sizes, LaunchConfig &out, std::string &error,
    const TensorMapResolver &resolveTensorMap) {
  LaunchConfig config;
  if (!evaluateGrid(manifest, sizes, config.grid, error) ||
      !packParams(manifest, operands, sizes, config.params, error,
                  resolveTensorMap))
    return false;
  for (int i = 0; i < 3; ++i)
    config.block[i] = manifest.block[i];
  config.sharedMemoryBytes = static_cast<unsigned>(manifest.sharedMemoryBytes);
  for (const PrologueKernel &kernel : manifest.prologue) {
    PrologueLaunch launch;
    if (!evaluateGrid(kernel, sizes, launch.grid, error))
      return false;
    if (!packParams(manifest, kernel.params, operands, sizes, launch.params,
                    error, resolveTensorMap)) {
      error = "prologue kernel '" + kernel.kernel + "': " + error;
      return false;
    }
    for (int i = 0; i < 3; ++i)
      launch.block[i] = kernel.block[i];
    launch.sharedMemoryBytes = static_cast<unsigned>(kernel.sharedMemoryBytes);
    config.prologue.push_back(std::move(launch));
  }
  out = std::move(config);
  return true;
}

/// PTX text without its comments (each comment becomes one space; newlines
/// inside block comments are kept).
static std::string stripPtxComments(const std::string &ptx) {
  std::string text;
  text.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size();) {
    if (ptx.compare(i, 2, "//") == 0) {
      size_t end = ptx.find('\n', i);
      i = end == std::string::npos ? ptx.size() : end;
      text += ' ';
    } else if (ptx.compare(i, 2, "/*") == 0) {
      size_t end = ptx.find("*/", i + 2);
      size_t stop = end == std::string::npos ? ptx.size() : end + 2;
      for (size_t j = i; j < stop; ++j)
        if (ptx[j] == '\n')
          text += '\n';
      text += ' ';
      i = stop;
    } else {
      text += ptx[i++];
    }
  }
  return text;
}

static bool isPtxSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool isPtxIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '%' || c == '.';
}

/// The size in bytes of a PTX fundamental type (".u64" -> 8), 0 if `token`
/// is none.
static unsigned getPtxTypeBytes(const std::string &token) {
  if (token.size() < 3 || token[0] != '.')
    return 0;
  char kind = token[1];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f')
    return 0;
  std::string bits = token.substr(2);
  if (bits == "8")
    return kind == 'f' ? 0 : 1;
  if (bits == "16")
    return 2;
  if (bits == "32")
    return 4;
  if (bits == "64")
    return 8;
  return 0;
}

/// The bytes of one parameter declaration, e.g. ".param .u64 .ptr .global
/// .align 16 f_param_0" or ".param .align 8 .b8 f_param_1[16]".
static bool getPtxParamBytes(const std::string &declaration, unsigned &bytes) {
  std::vector<std::string> tokens;
  std::string token;
  for (char c : declaration + " ") {
    if (isPtxSpace(c)) {
      if (!token.empty())
        tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  if (tokens.empty() || tokens[0] != ".param")
    return false;
  unsigned typeBytes = 0;
  std::string name;
  for (size_t i = 1; i < tokens.size(); ++i) {
    if (tokens[i] == ".align") {
      ++i; // Skip the alignment value.
      continue;
    }
    if (unsigned size = getPtxTypeBytes(tokens[i])) {
      typeBytes = size;
      continue;
    }
    if (tokens[i][0] != '.')
      name = tokens[i];
  }
  if (!typeBytes || name.empty())
    return false;
  unsigned count = 1;
  size_t bracket = name.find('[');
  if (bracket != std::string::npos) {
    count = static_cast<unsigned>(
        std::strtoul(name.c_str() + bracket + 1, nullptr, 10));
    if (count == 0)
      return false;
  }
  bytes = typeBytes * count;
  return true;
}

bool attn::runtime::getPtxEntryParamBytes(const std::string &ptx,
                                          const std::string &entry,
                                          std::vector<unsigned> &paramBytes,
                                          std::string &error) {
  std::string text = stripPtxComments(ptx);
  std::vector<std::string> entries;
  for (size_t pos = text.find(".entry"); pos != std::string::npos;
       pos = text.find(".entry", pos + 6)) {
    if ((pos > 0 && !isPtxSpace(text[pos - 1])) || pos + 6 >= text.size() ||
        !isPtxSpace(text[pos + 6]))
      continue;
    size_t begin = pos + 6;
    while (begin < text.size() && isPtxSpace(text[begin]))
      ++begin;
    size_t end = begin;
    while (end < text.size() && isPtxIdentifierChar(text[end]))
      ++end;
    std::string name = text.substr(begin, end - begin);
    if (name != entry) {
      entries.push_back(name);
      continue;
    }
    while (end < text.size() && isPtxSpace(text[end]))
      ++end;
    std::vector<unsigned> bytes;
    if (end >= text.size() || text[end] != '(') {
      paramBytes.clear(); // An entry without a parameter list.
      return true;
    }
    size_t close = text.find(')', end);
    if (close == std::string::npos) {
      error = "PTX entry '" + entry + "': unterminated parameter list";
      return false;
    }
    std::string list = text.substr(end + 1, close - end - 1);
    size_t start = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string declaration =
          list.substr(start, comma == std::string::npos ? std::string::npos
                                                        : comma - start);
      bool blank = std::all_of(declaration.begin(), declaration.end(),
                               [](char c) { return isPtxSpace(c); });
      if (!blank || comma != std::string::npos || !bytes.empty()) {
        unsigned size = 0;
        if (!getPtxParamBytes(declaration, size)) {
          error = "PTX entry '" + entry + "': cannot read parameter " +
                  std::to_string(bytes.size()) + " ('" + declaration + "')";
          return false;
        }
        bytes.push_back(size);
      }
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    paramBytes = std::move(bytes);
    return true;
  }
  error = "the PTX has no entry '" + entry + "'";
  if (entries.empty()) {
    error += " (it has no .entry at all)";
  } else {
    error += " (entries: ";
    for (size_t i = 0; i < entries.size(); ++i)
      error += (i ? ", " : "") + entries[i];
    error += ")";
  }
  return false;
}

bool attn::runtime::isChipCompatible(const std::string &chip, int major,
                                     int minor) {
  int chipMajor, chipMinor;
  char suffix;
  if (!parseChipName(chip, chipMajor, chipMinor, suffix))
    return true;
  if (suffix == 'a')
    return major == chipMajor && minor == chipMinor;
  if (suffix == 'f')
    return major == chipMajor && minor >= chipMinor;
  return major > chipMajor || (major == chipMajor && minor >= chipMinor);
}

//===----------------------------------------------------------------------===//
// ManifestKernel
//===----------------------------------------------------------------------===//

static bool looksLikePtx(const std::string &image) {
  // ELF (cubin) and fatbin images start with binary magic numbers.
  return image.find(".entry") != std::string::npos &&
         image.find(".target") != std::string::npos;
}

/// Checks that the PTX entry `entry` takes `expected` parameters of 8 bytes
/// each (`what` names the params list in the message).
static bool checkPtxEntryParams(const std::string &ptx,
                                const std::string &entry, unsigned expected,
                                const std::string &what, std::string &error) {
  std::vector<unsigned> paramBytes;
  if (!getPtxEntryParamBytes(ptx, entry, paramBytes, error))
    return false;
  if (paramBytes.size() != expected) {
    error = "the PTX entry '" + entry + "' takes " +
            std::to_string(paramBytes.size()) + " parameters but the " + what +
            " expand to " + std::to_string(expected);
    return false;
  }
  for (size_t i = 0; i < paramBytes.size(); ++i) {
    if (paramBytes[i] == 8)
      continue;
    error = "parameter " + std::to_string(i) + " of the PTX entry '" + entry +
            "' is " + std::to_string(paramBytes[i]) +
            " bytes, but every manifest parameter is 8 bytes";
    return false;
  }
  return true;
}

/// Gets kernel `name` of `module` and checks that `block` and
/// `dynamicBytes` of shared memory fit it and the device; raises its dynamic
/// shared memory limit when static + dynamic > 48 KiB.
static bool loadEntry(const CudaDevice &device, const CudaModule &module,
                      const std::string &name, const unsigned block[3],
                      int64_t dynamicBytes, CudaKernel &kernel,
                      KernelResources &resources, std::string &error) {
  if (!module.getFunction(name, kernel, error) ||
      !kernel.getResources(resources, error))
    return false;
  int64_t threads = int64_t(block[0]) * block[1] * block[2];
  if (threads > resources.maxThreadsPerBlock) {
    error = "kernel '" + name + "' uses " +
            std::to_string(resources.numRegisters) +
            " registers per thread, so it runs at most " +
            std::to_string(resources.maxThreadsPerBlock) +
            " threads per block, but the manifest's block has " +
            std::to_string(threads);
    return false;
  }
  int64_t totalShared = resources.staticSharedBytes + dynamicBytes;
  if (totalShared > device.getMaxSharedMemoryPerBlockOptin()) {
    error = "kernel '" + name + "' needs " + std::to_string(totalShared) +
            " bytes of shared memory (" +
            std::to_string(resources.staticSharedBytes) + " static + " +
            std::to_string(dynamicBytes) + " dynamic) but " + device.getName() +
            " allows " +
            std::to_string(device.getMaxSharedMemoryPerBlockOptin()) +
            " per block";
    return false;
  }
  if (dynamicBytes > 0 && totalShared > 48 * 1024 &&
      !kernel.setMaxDynamicSharedMemory(static_cast<int>(dynamicBytes), error))
    return false;
  return true;
}

bool ManifestKernel::load(const CudaDevice &device, const Manifest &manifest,
                          const std::string &image, ManifestKernel &out,
                          std::string &error,
                          const ModuleLoadOptions &options) {
  if (!device.isOpen()) {
    error = "the CUDA device is not open";
    return false;
  }
  if (!verifyManifest(manifest, error)) {
    error = "invalid manifest: " + error;
    return false;
  }
  if (!isChipCompatible(manifest.chip, device.getComputeCapabilityMajor(),
                        device.getComputeCapabilityMinor())) {
    error = "kernel '" + manifest.kernel + "' was compiled for " +
            manifest.chip + ", which " + device.getName() + " (" +
            device.getArchName() + ") cannot run";
    return false;
  }
  if (looksLikePtx(image)) {
    if (!checkPtxEntryParams(image, manifest.kernel,
                             manifest.getNumParamSlots(), "manifest's params",
                             error))
      return false;
    for (size_t i = 0; i < manifest.prologue.size(); ++i)
      if (!checkPtxEntryParams(
              image, manifest.prologue[i].kernel,
              manifest.prologue[i].getNumParamSlots(),
              "manifest's prologue[" + std::to_string(i) + "].params", error))
        return false;
  }

  ManifestKernel loaded;
  loaded.device = &device;
  loaded.manifest = manifest;
  if (!device.loadModule(image, loaded.module, error, options)) {
    error = "loading kernel '" + manifest.kernel + "': " + error;
    return false;
  }
  if (!loadEntry(device, loaded.module, manifest.kernel, manifest.block,
                 manifest.sharedMemoryBytes, loaded.kernel, loaded.resources,
                 error))
    return false;
  for (const PrologueKernel &prologue : manifest.prologue) {
    CudaKernel kernel;
    KernelResources resources;
    if (!loadEntry(device, loaded.module, prologue.kernel, prologue.block,
                   prologue.sharedMemoryBytes, kernel, resources, error))
      return false;
    loaded.prologueKernels.push_back(std::move(kernel));
    loaded.prologueResources.push_back(resources);
  }
  out = std::move(loaded);
  return true;
}

bool ManifestKernel::loadFile(const CudaDevice &device,
                              const std::string &manifestPath,
                              ManifestKernel &out, std::string &error,
                              const ModuleLoadOptions &options) {
  Manifest manifest;
  if (!readManifestFile(manifestPath, manifest, error))
    return false;
  std::string ptxPath = manifest.getPtxPath();
  FILE *file = std::fopen(ptxPath.c_str(), "rb");
  if (!file) {
    error = ptxPath + " (the PTX of " + manifestPath +
            "): cannot open: " + std::strerror(errno);
    return false;
  }
  std::string image;
  char buffer[65536];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    image.append(buffer, count);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) {
    error = ptxPath + ": read error";
    return false;
  }
  if (!load(device, manifest, image, out, error, options)) {
    error = manifestPath + ": " + error;
    return false;
  }
  return true;
}

uint64_t ManifestKernel::getWorkspaceCapacity(const std::string &name) const {
  auto it = workspaceBuffers.find(name);
  return it == workspaceBuffers.end() || it->second.empty()
             ? 0
             : it->second.back().getSize();
}

bool ManifestKernel::readWorkspace(const std::string &name,
                                   const ProblemSizes &sizes,
                                   std::vector<uint8_t> &out,
                                   std::string &error) const {
  const WorkspaceSpec *workspace = manifest.getWorkspace(name);
  if (!workspace) {
    error = "the kernel has no workspace '" + name + "'";
    return false;
  }
  std::vector<int64_t> shape;
  int64_t bytes;
  if (!evaluateWorkspace(*workspace, sizes, shape, bytes, error))
    return false;
  auto it = workspaceBuffers.find(name);
  if (it == workspaceBuffers.end() || it->second.empty() ||
      it->second.back().getSize() < static_cast<uint64_t>(bytes)) {
    error = "workspace '" + name +
            "' was not written by a launch of these "
            "sizes";
    return false;
  }
  out.resize(static_cast<size_t>(bytes));
  return it->second.back().copyToHost(out.data(), out.size(), error);
}

bool ManifestKernel::getOwnWorkspace(const WorkspaceSpec &workspace,
                                     const ProblemSizes &sizes, TensorArg &out,
                                     std::string &error) const {
  std::vector<int64_t> shape;
  int64_t bytes;
  if (!evaluateWorkspace(workspace, sizes, shape, bytes, error))
    return false;
  std::vector<DeviceBuffer> &buffers = workspaceBuffers[workspace.name];
  if (buffers.empty() ||
      buffers.back().getSize() < static_cast<uint64_t>(bytes)) {
    // At least double, so that the buffers kept alive add up to less than
    // twice the current one.
    uint64_t capacity = static_cast<uint64_t>(bytes);
    if (!buffers.empty())
      capacity = std::max(capacity, 2 * buffers.back().getSize());
    DeviceBuffer buffer;
    if (!device->allocate(capacity, buffer, error)) {
      error = "workspace '" + workspace.name + "': " + error;
      return false;
    }
    buffers.push_back(std::move(buffer));
  }
  out = makeContiguousTensorArg(buffers.back().get(), std::move(shape));
  return true;
}

bool ManifestKernel::prepare(const std::map<std::string, TensorArg> &operands,
                             const ProblemSizes &sizes, LaunchConfig &out,
                             std::string &error) const {
  bool tensorMaps = manifest.hasTensorMaps();
  if (manifest.workspaces.empty() && !tensorMaps)
    return prepareLaunch(manifest, operands, sizes, out, error);
  if (!isLoaded()) {
    error = "the kernel is not loaded";
    return false;
  }
  std::map<std::string, TensorArg> withWorkspaces = operands;
  for (const WorkspaceSpec &workspace : manifest.workspaces)
    if (!operands.count(workspace.name) &&
        !getOwnWorkspace(workspace, sizes, withWorkspaces[workspace.name],
                         error))
      return false;
  std::vector<std::shared_ptr<const void>> keep;
  TensorMapResolver resolver;
  if (tensorMaps)
    resolver = [&](const KernelParam &param, const TensorArg &arg,
                   uint64_t &devicePtr, std::string &message) {
      return getTensorMap(param, arg, devicePtr, keep, message);
    };
  if (!prepareLaunch(manifest, withWorkspaces, sizes, out, error, resolver))
    return false;
  out.tensorMaps = std::move(keep);
  return true;
}

bool ManifestKernel::launch(LaunchConfig &config, CUstream stream,
                            std::string &error) const {
  if (!isLoaded()) {
    error = "the kernel is not loaded";
    return false;
  }
  if (config.prologue.size() != prologueKernels.size()) {
    error = "the launch has " + std::to_string(config.prologue.size()) +
            " prologue launches but kernel '" + manifest.kernel + "' has " +
            std::to_string(prologueKernels.size()) + " prologue kernels";
    return false;
  }
  for (size_t i = 0; i < prologueKernels.size(); ++i) {
    PrologueLaunch &launch = config.prologue[i];
    if (!prologueKernels[i].launch(launch.grid, launch.block,
                                   launch.sharedMemoryBytes, stream,
                                   launch.params.getArgs(), error))
      return false;
  }
  return kernel.launch(config.grid, config.block, config.sharedMemoryBytes,
                       stream, config.params.getArgs(), error);
}

bool ManifestKernel::launch(const std::map<std::string, TensorArg> &operands,
                            const ProblemSizes &sizes, CUstream stream,
                            std::string &error) const {
  LaunchConfig config;
  return prepare(operands, sizes, config, error) &&
         launch(config, stream, error);
}

//===----------------------------------------------------------------------===//
// Benchmarking
//===----------------------------------------------------------------------===//

unsigned attn::runtime::chooseNumInputCopies(uint64_t bytesPerCopy,
                                             uint64_t l2Bytes,
                                             uint64_t availableBytes,
                                             unsigned maxCopies) {
  if (bytesPerCopy == 0 || maxCopies <= 1)
    return 1;
  uint64_t target = 2 * l2Bytes;
  uint64_t wanted = (target + bytesPerCopy - 1) / bytesPerCopy;
  if (wanted <= 1)
    return 1;
  uint64_t fitting = 1 + availableBytes / bytesPerCopy;
  uint64_t copies = std::min<uint64_t>({wanted, fitting, maxCopies});
  return static_cast<unsigned>(std::max<uint64_t>(copies, 1));
}

void attn::runtime::getTensorByteSpan(const TensorArg &arg,
                                      uint64_t elementBytes, int64_t &firstByte,
                                      int64_t &endByte) {
  int64_t low = arg.offset, high = arg.offset;
  for (size_t i = 0; i < arg.sizes.size(); ++i) {
    if (arg.sizes[i] <= 0) {
      firstByte = endByte = 0;
      return;
    }
    int64_t extent = (arg.sizes[i] - 1) *
                     (i < arg.strides.size() ? arg.strides[i] : int64_t(0));
    if (extent < 0)
      low += extent;
    else
      high += extent;
  }
  firstByte = low * static_cast<int64_t>(elementBytes);
  endByte = (high + 1) * static_cast<int64_t>(elementBytes);
}

double attn::runtime::getMedian(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  if (values.size() % 2)
    return values[middle];
  return 0.5 * (values[middle - 1] + values[middle]);
}

/// The element bytes of an operand of `manifest`.
static uint64_t getOperandElementBytes(const Manifest &manifest,
                                       const std::string &name) {
  if (name == "mask" && manifest.mask)
    return getElementBytes(manifest.mask->elementType);
  return getElementBytes(manifest.elementType);
}

bool attn::runtime::benchmark(const ManifestKernel &kernel,
                              const std::map<std::string, TensorArg> &operands,
                              const ProblemSizes &sizes,
                              const BenchmarkOptions &options,
                              BenchmarkResult &result, std::string &error,
                              CUstream stream) {
  if (!kernel.isLoaded()) {
    error = "benchmark: the kernel is not loaded";
    return false;
  }
  if (options.iterations == 0) {
    error = "benchmark: the number of iterations must be >= 1";
    return false;
  }
  const Manifest &manifest = kernel.getManifest();
  const CudaDevice &device = kernel.getDevice();
  if (!device.makeCurrent(error))
    return false;

  // The first input set: the caller's operands.
  std::vector<LaunchConfig> configs(1);
  if (!kernel.prepare(operands, sizes, configs[0], error))
    return false;

  std::vector<std::string> inputs;
  uint64_t bytesPerCopy = 0;
  for (const char *name : {"query", "key", "value", "mask"}) {
    auto it = operands.find(name);
    if (it == operands.end())
      continue;
    int64_t first, end;
    getTensorByteSpan(it->second, getOperandElementBytes(manifest, name), first,
                      end);
    inputs.push_back(name);
    bytesPerCopy += static_cast<uint64_t>(end - first);
  }

  unsigned numCopies = 1;
  if (options.rotateInputs) {
    uint64_t freeBytes = 0, totalBytes = 0;
    if (!device.getMemoryInfo(freeBytes, totalBytes, error))
      return false;
    uint64_t reserve = options.reserveBytes + totalBytes / 20;
    uint64_t available = freeBytes > reserve ? freeBytes - reserve : 0;
    numCopies = chooseNumInputCopies(
        bytesPerCopy, static_cast<uint64_t>(device.getL2CacheBytes()),
        available, options.maxCopies);
  }

  // The other input sets: copies of the inputs with the same layout.
  std::vector<DeviceBuffer> buffers;
  for (unsigned copy = 1; copy < numCopies; ++copy) {
    std::map<std::string, TensorArg> copied = operands;
    for (const std::string &name : inputs) {
      TensorArg &arg = copied[name];
      uint64_t elementBytes = getOperandElementBytes(manifest, name);
      int64_t first, end;
      getTensorByteSpan(arg, elementBytes, first, end);
      DeviceBuffer buffer;
      if (!device.allocate(static_cast<uint64_t>(end - first), buffer, error) ||
          !buffer.copyFromDevice(arg.devicePtr + first,
                                 static_cast<uint64_t>(end - first), error))
        return false;
      arg.offset -= first / static_cast<int64_t>(elementBytes);
      arg.devicePtr = buffer.get();
      buffers.push_back(std::move(buffer));
    }
    configs.emplace_back();
    if (!kernel.prepare(copied, sizes, configs.back(), error))
      return false;
  }

  // Warm-up: at least `warmupIterations` launches and `warmupMs` of GPU
  // time, so that the timed launches run at the clocks of a sustained
  // workload rather than at the boost clock of an idle GPU.
  unsigned launched = 0;
  auto warmUp = [&](uint64_t count) {
    for (uint64_t i = 0; i < count; ++i, ++launched)
      if (!kernel.launch(configs[launched % numCopies], stream, error))
        return false;
    return true;
  };
  CudaEvent warmStart, warmEnd;
  if (!device.createEvent(warmStart, error) ||
      !device.createEvent(warmEnd, error) || !warmStart.record(stream, error) ||
      !warmUp(std::max(options.warmupIterations, 1u)) ||
      !warmEnd.record(stream, error) || !warmEnd.synchronize(error))
    return false;
  float warmMs = 0.0f;
  if (!CudaEvent::elapsedMs(warmStart, warmEnd, warmMs, error))
    return false;
  if (warmMs < options.warmupMs) {
    double perLaunch = std::max(1e-3, static_cast<double>(warmMs) / launched);
    double more = std::ceil((options.warmupMs - warmMs) / perLaunch);
    if (!warmUp(static_cast<uint64_t>(
            std::min(more, static_cast<double>(options.maxWarmupLaunches)))))
      return false;
  }

  std::vector<CudaEvent> starts(options.iterations), ends(options.iterations);
  for (unsigned i = 0; i < options.iterations; ++i)
    if (!device.createEvent(starts[i], error) ||
        !device.createEvent(ends[i], error))
      return false;
  for (unsigned i = 0; i < options.iterations; ++i) {
    LaunchConfig &config = configs[(launched + i) % numCopies];
    if (!starts[i].record(stream, error) ||
        !kernel.launch(config, stream, error) || !ends[i].record(stream, error))
      return false;
  }
  if (!ends.back().synchronize(error)) {
    error += " (while waiting for the benchmarked launches)";
    return false;
  }

  BenchmarkResult measured;
  measured.numInputCopies = numCopies;
  measured.inputBytesPerCopy = bytesPerCopy;
  for (unsigned i = 0; i < options.iterations; ++i) {
    float milliseconds = 0.0f;
    if (!CudaEvent::elapsedMs(starts[i], ends[i], milliseconds, error))
      return false;
    measured.timesMs.push_back(milliseconds);
  }
  measured.medianMs = getMedian(measured.timesMs);
  measured.minMs =
      *std::min_element(measured.timesMs.begin(), measured.timesMs.end());
  measured.maxMs =
      *std::max_element(measured.timesMs.begin(), measured.timesMs.end());
  double sum = 0.0;
  for (double time : measured.timesMs)
    sum += time;
  measured.meanMs = sum / measured.timesMs.size();
  result = std::move(measured);
  return true;
}

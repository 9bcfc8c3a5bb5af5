//===- CudaLaunch.cpp - Launching manifest kernels through CUDA -----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaLaunch.h"

#include "attn/Runtime/Explain.h"
#include "attn/Runtime/Facts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
  config.prologue.resize(manifest.prologue.size());
  config.epilogue.resize(manifest.epilogue.size());
  // The main kernel first (its errors before a prologue kernel's), then
  // the others; ManifestKernel::launch launches them in launch order.
  std::vector<LaunchStep> steps = manifest.getLaunchOrder();
  std::sort(steps.begin(), steps.end(),
            [](const LaunchStep &lhs, const LaunchStep &rhs) {
              return lhs.kernelIndex < rhs.kernelIndex;
            });
  for (const LaunchStep &step : steps) {
    const KernelLaunch &kernel = *step.kernel;
    LaunchConfig &launch = *config.getLaunch(step);
    if (!evaluateGrid(step, sizes, launch.grid, error))
      return false;
    if (!packParams(manifest, kernel.params, operands, sizes, launch.params,
                    error, resolveTensorMap)) {
      if (step.stage != KernelStage::Main)
        error = step.describe() + ": " + error;
      return false;
    }
    std::copy(kernel.block, kernel.block + 3, launch.block);
    launch.sharedMemoryBytes = unsigned(kernel.sharedMemoryBytes);
  }
  out = std::move(config);
  return true;
}

LaunchConfig *LaunchConfig::getLaunch(const LaunchStep &step) {
  std::vector<LaunchConfig> &list =
      step.stage == KernelStage::Prologue ? prologue : epilogue;
  if (step.stage == KernelStage::Main)
    return this;
  return step.index < list.size() ? &list[step.index] : nullptr;
}

//===----------------------------------------------------------------------===//
// PTX entries
//===----------------------------------------------------------------------===//

/// PTX text without its comments (each becomes one space; newlines inside
/// block comments are kept).
static std::string stripPtxComments(const std::string &ptx) {
  std::string text;
  text.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size();) {
    bool line = ptx.compare(i, 2, "//") == 0;
    if (!line && ptx.compare(i, 2, "/*") != 0) {
      text += ptx[i++];
      continue;
    }
    size_t end = ptx.find(line ? "\n" : "*/", i + 2);
    size_t stop = end == std::string::npos ? ptx.size() : end + (line ? 0 : 2);
    text += std::string(std::count(ptx.begin() + i, ptx.begin() + stop, '\n'),
                        '\n') +
            ' ';
    i = stop;
  }
  return text;
}

static const char *const kSpace = " \t\r\n";

/// The bytes of one parameter declaration, e.g. ".param .u64 .ptr .global
/// .align 16 f_param_0" or ".param .align 8 .b8 f_param_1[16]"; 0 if it is
/// none.
static unsigned getPtxParamBytes(const std::string &declaration) {
  std::vector<std::string> tokens;
  for (size_t pos = declaration.find_first_not_of(kSpace);
       pos != std::string::npos;
       pos = declaration.find_first_not_of(kSpace, pos)) {
    size_t end = declaration.find_first_of(kSpace, pos);
    tokens.push_back(declaration.substr(pos, end - pos));
    pos = end;
  }
  unsigned typeBytes = 0;
  int count = 0; // Of the named parameter: 1, or N of "name[N]".
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string &token = tokens[i];
    int bits = token.size() > 2 ? std::atoi(token.c_str() + 2) : 0;
    size_t bracket = token.find('[');
    if (token == ".align")
      ++i; // Skip the alignment value.
    else if (token[0] != '.')
      count = bracket == std::string::npos
                  ? 1
                  : std::atoi(token.c_str() + bracket + 1);
    else if (std::strchr("usbf", token[1]) &&
             token.substr(2) == std::to_string(bits) &&
             (bits == 16 || bits == 32 || bits == 64 ||
              (bits == 8 && token[1] != 'f')))
      typeBytes = unsigned(bits / 8);
  }
  bool param = !tokens.empty() && tokens[0] == ".param";
  return param && count > 0 ? typeBytes * unsigned(count) : 0;
}

bool attn::runtime::getPtxEntryParamBytes(const std::string &ptx,
                                          const std::string &entry,
                                          std::vector<unsigned> &paramBytes,
                                          std::string &error) {
  std::string text = stripPtxComments(ptx), entries;
  for (size_t pos = text.find(".entry"); pos != std::string::npos;
       pos = text.find(".entry", pos + 6)) {
    if ((pos > 0 && !std::strchr(kSpace, text[pos - 1])) ||
        pos + 6 >= text.size() || !std::strchr(kSpace, text[pos + 6]))
      continue;
    size_t begin = text.find_first_not_of(kSpace, pos + 6);
    if (begin == std::string::npos)
      break;
    size_t end = text.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$%.",
        begin);
    std::string name = text.substr(begin, end - begin);
    if (name != entry) {
      entries += (entries.empty() ? "" : ", ") + name;
      continue;
    }
    paramBytes.clear();
    size_t open = text.find_first_not_of(kSpace, end);
    if (open == std::string::npos || text[open] != '(')
      return true; // An entry without a parameter list.
    size_t close = text.find(')', open);
    if (close == std::string::npos)
      return failWith(error, "PTX entry '", entry,
                      "': unterminated parameter list");
    std::string list = text.substr(open + 1, close - open - 1);
    if (list.find_first_not_of(kSpace) == std::string::npos)
      return true;
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      std::string declaration = list.substr(start, comma - start);
      if (unsigned bytes = getPtxParamBytes(declaration)) {
        paramBytes.push_back(bytes);
      } else {
        error = concat("PTX entry '", entry, "': cannot read parameter ",
                       paramBytes.size(), " ('", declaration, "')");
        return false;
      }
      start = comma + 1;
    }
    return true;
  }
  error =
      "the PTX has no entry '" + entry + "' (" +
      (entries.empty() ? "it has no .entry at all" : "entries: " + entries) +
      ")";
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

/// Checks that the PTX entry `entry` takes `expected` parameters of 8 bytes
/// each (`what` names the params list in the message).
static bool checkPtxEntryParams(const std::string &ptx,
                                const std::string &entry, unsigned expected,
                                const std::string &what, std::string &error) {
  std::vector<unsigned> paramBytes;
  if (!getPtxEntryParamBytes(ptx, entry, paramBytes, error))
    return false;
  if (paramBytes.size() != expected)
    return failWith(error, "the PTX entry '", entry, "' takes ",
                    paramBytes.size(), " parameters but the ", what,
                    " expand to ", expected);
  for (size_t i = 0; i < paramBytes.size(); ++i)
    if (paramBytes[i] != 8)
      return failWith(error, "parameter ", i, " of the PTX entry '", entry,
                      "' is ", paramBytes[i],
                      " bytes, but every manifest parameter is 8 bytes");
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
  int64_t shared = resources.staticSharedBytes + dynamicBytes;
  int64_t limit = device.getMaxSharedMemoryPerBlockOptin();
  if (threads > resources.maxThreadsPerBlock)
    error =
        concat("kernel '", name, "' uses ", resources.numRegisters,
               " registers per thread, so it runs at most ",
               resources.maxThreadsPerBlock,
               " threads per block, but the manifest's block has ", threads);
  else if (shared > limit)
    error = concat("kernel '", name, "' needs ", shared,
                   " bytes of shared memory (", resources.staticSharedBytes,
                   " static + ", dynamicBytes, " dynamic) but ",
                   device.getName(), " allows ", limit, " per block");
  else
    return dynamicBytes <= 0 || shared <= 48 * 1024 ||
           kernel.setMaxDynamicSharedMemory(int(dynamicBytes), error);
  return false;
}

bool ManifestKernel::load(const CudaDevice &device, const Manifest &manifest,
                          const std::string &image, ManifestKernel &out,
                          std::string &error) {
  if (!device.isOpen())
    return failWith(error, "the CUDA device is not open");
  if (!verifyManifest(manifest, error))
    return failWith(error, "invalid manifest: ", error);
  if (!isChipCompatible(manifest.chip, device.getComputeCapabilityMajor(),
                        device.getComputeCapabilityMinor()))
    return failWith(error, "kernel '", manifest.kernel, "' was compiled for ",
                    manifest.chip, ", which ", device.getName(), " (",
                    device.getArchName(), ") cannot run");
  // ELF (cubin) and fatbin images have no .entry text to check.
  bool ptx = image.find(".entry") != std::string::npos &&
             image.find(".target") != std::string::npos;
  std::vector<const KernelLaunch *> launches = manifest.getKernels();
  for (const LaunchStep &step : manifest.getLaunchOrder())
    if (ptx && !checkPtxEntryParams(
                   image, step.kernel->kernel, step.kernel->getNumParamSlots(),
                   "manifest's " + (step.getPath().empty()
                                        ? std::string("params")
                                        : step.getPath() + ".params"),
                   error))
      return false;

  ManifestKernel loaded;
  loaded.device = &device;
  loaded.manifest = manifest;
  if (!device.loadModule(image, loaded.module, error))
    return failWith(error, "loading kernel '", manifest.kernel, "': ", error);
  loaded.kernels.resize(launches.size());
  loaded.resources.resize(launches.size());
  for (size_t i = 0; i < launches.size(); ++i)
    if (!loadEntry(device, loaded.module, launches[i]->kernel,
                   launches[i]->block, launches[i]->sharedMemoryBytes,
                   loaded.kernels[i], loaded.resources[i], error))
      return false;
  out = std::move(loaded);
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
  std::vector<int64_t> shape;
  int64_t bytes;
  if (!workspace)
    return failWith(error, "the kernel has no workspace '", name, "'");
  if (!evaluateWorkspace(*workspace, sizes, shape, bytes, error))
    return false;
  if (getWorkspaceCapacity(name) < uint64_t(bytes))
    return failWith(error, "workspace '", name,
                    "' was not written by a launch of these "
                    "sizes");
  out.resize(size_t(bytes));
  return workspaceBuffers.at(name).back().copyToHost(out.data(), out.size(),
                                                     error);
}

bool ManifestKernel::prepare(const std::map<std::string, TensorArg> &operands,
                             const ProblemSizes &sizes, LaunchConfig &out,
                             std::string &error) const {
  if (!isLoaded())
    return failWith(error, "the kernel is not loaded");
  std::map<std::string, TensorArg> withWorkspaces = operands;
  for (const WorkspaceSpec &workspace : manifest.workspaces) {
    std::vector<int64_t> shape;
    int64_t bytes;
    if (operands.count(workspace.name))
      continue;
    if (!evaluateWorkspace(workspace, sizes, shape, bytes, error))
      return false;
    std::vector<DeviceBuffer> &buffers = workspaceBuffers[workspace.name];
    if (buffers.empty() || buffers.back().getSize() < uint64_t(bytes)) {
      // At least double, so that the buffers kept alive add up to less than
      // twice the current one.
      uint64_t capacity = std::max<uint64_t>(
          bytes, buffers.empty() ? 0 : 2 * buffers.back().getSize());
      if (!device->allocate(capacity, buffers.emplace_back(), error)) {
        buffers.pop_back();
        error = "workspace '" + workspace.name + "': " + error;
        return false;
      }
    }
    withWorkspaces[workspace.name] =
        makeContiguousTensorArg(buffers.back().get(), std::move(shape));
  }
  std::vector<std::shared_ptr<const void>> keep;
  auto resolver = [&](const KernelParam &param, const TensorArg &arg,
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
  if (!isLoaded())
    return failWith(error, "the kernel is not loaded");
  if (config.prologue.size() != manifest.prologue.size() ||
      config.epilogue.size() != manifest.epilogue.size())
    return failWith(error, "the launch has ", config.prologue.size(),
                    " prologue and ", config.epilogue.size(),
                    " epilogue launches but kernel '", manifest.kernel,
                    "' has ", manifest.prologue.size(), " prologue and ",
                    manifest.epilogue.size(), " epilogue kernels");
  for (const LaunchStep &step : manifest.getLaunchOrder()) {
    LaunchConfig &launch = *config.getLaunch(step);
    if (!kernels[step.kernelIndex].launch(launch.grid, launch.block,
                                          launch.sharedMemoryBytes, stream,
                                          launch.params.getArgs(), error))
      return false;
  }
  return true;
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
  uint64_t wanted = (2 * l2Bytes + bytesPerCopy - 1) / bytesPerCopy;
  uint64_t fitting = 1 + availableBytes / bytesPerCopy;
  return unsigned(
      std::max<uint64_t>(std::min<uint64_t>({wanted, fitting, maxCopies}), 1));
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
    int64_t extent =
        (arg.sizes[i] - 1) * (i < arg.strides.size() ? arg.strides[i] : 0);
    (extent < 0 ? low : high) += extent;
  }
  firstByte = low * int64_t(elementBytes);
  endByte = (high + 1) * int64_t(elementBytes);
}

bool attn::runtime::benchmark(const ManifestKernel &kernel,
                              const std::map<std::string, TensorArg> &operands,
                              const ProblemSizes &sizes,
                              const BenchmarkOptions &options,
                              std::vector<double> &timesMs, std::string &error,
                              CUstream stream) {
  if (!kernel.isLoaded() || options.iterations == 0)
    return failWith(error,
                    kernel.isLoaded()
                        ? "benchmark: the number of iterations must be >= 1"
                        : "benchmark: the kernel is not loaded");
  const Manifest &manifest = kernel.getManifest();
  const CudaDevice &device = kernel.getDevice();
  // The first input set: the caller's operands.
  std::vector<LaunchConfig> configs(1);
  if (!device.makeCurrent(error) ||
      !kernel.prepare(operands, sizes, configs[0], error))
    return false;
  auto elementBytes = [&](const std::string &name) {
    return getElementBytes(name == "mask" && manifest.mask
                               ? manifest.mask->elementType
                               : manifest.elementType);
  };
  std::vector<std::string> inputs;
  uint64_t bytesPerCopy = 0;
  for (const char *name : {"query", "key", "value", "mask"}) {
    int64_t first, end;
    if (!operands.count(name))
      continue;
    getTensorByteSpan(operands.at(name), elementBytes(name), first, end);
    inputs.push_back(name);
    bytesPerCopy += uint64_t(end - first);
  }
  unsigned numCopies = 1;
  if (options.rotateInputs) {
    uint64_t freeBytes = 0, totalBytes = 0;
    if (!device.getMemoryInfo(freeBytes, totalBytes, error))
      return false;
    uint64_t reserve = options.reserveBytes + totalBytes / 20;
    numCopies = chooseNumInputCopies(
        bytesPerCopy, uint64_t(device.getL2CacheBytes()),
        freeBytes > reserve ? freeBytes - reserve : 0, options.maxCopies);
  }
  // The other input sets: copies of the inputs with the same layout.
  std::vector<DeviceBuffer> buffers;
  for (unsigned copy = 1; copy < numCopies; ++copy) {
    std::map<std::string, TensorArg> copied = operands;
    for (const std::string &name : inputs) {
      TensorArg &arg = copied[name];
      int64_t first, end;
      getTensorByteSpan(arg, elementBytes(name), first, end);
      DeviceBuffer &buffer = buffers.emplace_back();
      if (!device.allocate(uint64_t(end - first), buffer, error) ||
          !buffer.copyFromDevice(arg.devicePtr + first, uint64_t(end - first),
                                 error))
        return false;
      arg.offset -= first / int64_t(elementBytes(name));
      arg.devicePtr = buffer.get();
    }
    if (!kernel.prepare(copied, sizes, configs.emplace_back(), error))
      return false;
  }

  // Warm-up: at least `warmupIterations` launches and the facts' warm-up
  // time of GPU time.
  unsigned launched = 0;
  auto warmUp = [&](uint64_t count) {
    for (uint64_t i = 0; i < count; ++i, ++launched)
      if (!kernel.launch(configs[launched % numCopies], stream, error))
        return false;
    return true;
  };
  CudaEvent warmStart, warmEnd;
  float warmMs = 0.0f;
  if (!device.createEvent(warmStart, error) ||
      !device.createEvent(warmEnd, error) || !warmStart.record(stream, error) ||
      !warmUp(std::max(options.warmupIterations, 1u)) ||
      !warmEnd.record(stream, error) || !warmEnd.synchronize(error) ||
      !CudaEvent::elapsedMs(warmStart, warmEnd, warmMs, error))
    return false;
  double warmupMs = getFacts().benchWarmupMs;
  if (warmMs < warmupMs) {
    double perLaunch = std::max(1e-3, double(warmMs) / launched);
    double more = std::ceil((warmupMs - warmMs) / perLaunch);
    if (!warmUp(uint64_t(std::min(more, double(options.maxWarmupLaunches)))))
      return false;
  }

  std::vector<CudaEvent> starts(options.iterations), ends(options.iterations);
  for (unsigned i = 0; i < options.iterations; ++i)
    if (!device.createEvent(starts[i], error) ||
        !device.createEvent(ends[i], error))
      return false;
  for (unsigned i = 0; i < options.iterations; ++i)
    if (!starts[i].record(stream, error) ||
        !kernel.launch(configs[(launched + i) % numCopies], stream, error) ||
        !ends[i].record(stream, error))
      return false;
  if (!ends.back().synchronize(error)) {
    error += " (while waiting for the benchmarked launches)";
    return false;
  }
  std::vector<double> measured;
  for (unsigned i = 0; i < options.iterations; ++i) {
    float milliseconds = 0.0f;
    if (!CudaEvent::elapsedMs(starts[i], ends[i], milliseconds, error))
      return false;
    measured.push_back(milliseconds);
  }
  timesMs = std::move(measured);
  return true;
}

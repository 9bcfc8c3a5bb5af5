//===- CudaRunner.cpp - Running manifest kernels on host tensors ----------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaRunner.h"

#include <map>
#include <utility>

using namespace attn::runtime;

std::string attn::runtime::getNativeChip(int major, int minor) {
  std::string chip = "sm_" + std::to_string(major) + std::to_string(minor);
  if (major == 9 && minor == 0)
    chip += "a";
  return chip;
}

bool KernelRunner::open(int ordinal, std::string &error) {
  return CudaDevice::open(ordinal, device, error);
}

bool KernelRunner::load(const Manifest &manifest, const std::string &ptx,
                        std::string &error) {
  this->ptx = ptx;
  return ManifestKernel::load(device, manifest, ptx, kernel, error);
}

/// `tensor` of `problem` as passed contiguous from `devicePtr`: a broadcast
/// mask dimension is read with stride 0.
static TensorArg makeOperand(const AttentionProblem &problem,
                             const HostTensor *tensor, uint64_t devicePtr) {
  TensorArg arg = makeContiguousTensorArg(devicePtr, tensor->shape);
  if (tensor == problem.mask)
    for (size_t dim = 0; dim < arg.sizes.size(); ++dim)
      if (arg.sizes[dim] == 1)
        arg.strides[dim] = 0;
  return arg;
}

/// The precision of `type` inputs (tf32 or IEEE for f32).
static PrecisionMode getPrecision(ElementType type, bool tf32) {
  if (type != ElementType::F32)
    return PrecisionMode::Default;
  return tf32 ? PrecisionMode::TF32 : PrecisionMode::IEEE;
}

/// The device copies of one call's operands.
struct KernelRunner::DeviceTensors {
  /// One buffer per distinct input tensor, the output and the log-sum-exp
  /// (allocated when the kernel writes one).
  std::vector<DeviceBuffer> buffers;
  DeviceBuffer output, lse;
  std::map<std::string, TensorArg> operands;
  ProblemSizes sizes;
};

bool KernelRunner::upload(const AttentionProblem &problem,
                          const HostTensor &output, DeviceTensors &out,
                          std::string &error) {
  if (!kernel.isLoaded())
    return failWith(error, "no kernel is loaded");
  if (!device.makeCurrent(error) ||
      !inferProblemSizes(kernel.getManifest(), problem, output.shape, out.sizes,
                         error))
    return false;

  // Each distinct host tensor once: q = k = v share one buffer.
  std::map<const HostTensor *, CUdeviceptr> uploaded;
  std::vector<std::pair<std::string, const HostTensor *>> inputs = {
      {"query", problem.query},
      {"key", problem.key},
      {"value", problem.value},
      {"mask", problem.mask},
      {"kv_lengths", problem.kvLengths},
      {"cu_seqlens_q", problem.cuSeqlensQ},
      {"cu_seqlens_k", problem.cuSeqlensK},
      {"block_table", problem.blockTable}};
  for (size_t i = 0; i < problem.captures.size(); ++i)
    inputs.push_back({"capture" + std::to_string(i), problem.captures[i]});
  for (const auto &[name, tensor] : inputs) {
    if (!tensor)
      continue;
    auto it = uploaded.find(tensor);
    if (it == uploaded.end()) {
      DeviceBuffer buffer;
      if (!device.allocate(tensor->data.size(), buffer, error) ||
          !buffer.copyFromHost(tensor->data.data(), tensor->data.size(), error))
        return false;
      it = uploaded.emplace(tensor, buffer.get()).first;
      out.buffers.push_back(std::move(buffer));
    }
    out.operands[name] = makeOperand(problem, tensor, it->second);
  }
  if (!device.allocate(output.getNumBytes(), out.output, error))
    return false;
  out.operands["output"] =
      makeContiguousTensorArg(out.output.get(), output.shape);
  if (kernel.getManifest().lse) {
    // The log-sum-exp, f32 B x Hq x Tq, contiguous.
    std::vector<int64_t> shape = {out.sizes.B, out.sizes.Hq, out.sizes.Tq};
    if (!device.allocate(uint64_t(out.sizes.B * out.sizes.Hq * out.sizes.Tq) *
                             getElementBytes(ElementType::F32),
                         out.lse, error))
      return false;
    out.operands["lse"] = makeContiguousTensorArg(out.lse.get(), shape);
  }
  return true;
}

bool KernelRunner::download(DeviceBuffer &buffer, HostTensor &tensor,
                            std::string &error) {
  tensor.data.resize(tensor.getNumBytes());
  if (tensor.data.size() != buffer.getSize())
    return failWith(error, "the ", tensor.getShapeString(),
                    " result does not fit the kernel's ", buffer.getSize(),
                    "-byte buffer");
  return buffer.copyToHost(tensor.data.data(), tensor.data.size(), error);
}

bool KernelRunner::run(const AttentionProblem &problem, HostTensor &output,
                       HostTensor *lse, std::string &error) {
  if (lse && kernel.isLoaded() && !kernel.getManifest().lse)
    return failWith(error, "kernel '", kernel.getManifest().kernel,
                    "' writes no log-sum-exp (its manifest has no \"lse\")");
  DeviceTensors tensors;
  if (!upload(problem, output, tensors, error) ||
      !tensors.output.fill(0xFF, error) ||
      (tensors.lse.get() && !tensors.lse.fill(0xFF, error)) ||
      !kernel.launch(tensors.operands, tensors.sizes, /*stream=*/nullptr,
                     error))
    return false;
  if (!device.synchronize(error)) {
    error += " (while running kernel '" + kernel.getManifest().kernel + "')";
    return false;
  }
  return download(tensors.output, output, error) &&
         (!lse || download(tensors.lse, *lse, error));
}

bool KernelRunner::time(const AttentionProblem &problem,
                        const HostTensor &output, unsigned warmup,
                        unsigned iterations, std::vector<double> &timesMs,
                        std::string &error) {
  DeviceTensors tensors;
  if (!upload(problem, output, tensors, error))
    return false;
  BenchmarkOptions options;
  options.warmupIterations = warmup;
  options.iterations = iterations;
  return benchmark(kernel, tensors.operands, tensors.sizes, options, timesMs,
                   error);
}

DeviceInfo KernelRunner::getDeviceInfo(ElementType type, bool tf32) const {
  std::string note;
  double tflops = getPeakTflops(device.getArchName(), device.getName(), type,
                                getPrecision(type, tf32), note);
  DeviceInfo info;
  info.peakFlops = tflops * 1e12;
  info.bytesPerSecond = device.getMemoryBandwidthBytesPerSecond();
  info.description = device.describe() + "; " + note;
  return info;
}

bool KernelRunner::explain(const AttentionProblem &problem,
                           const HostTensor &output, double medianMs, bool tf32,
                           ExplainFacts &out, std::string &error) const {
  if (!kernel.isLoaded())
    return failWith(error, "no kernel is loaded");
  const Manifest &manifest = kernel.getManifest();
  ExplainFacts facts;
  if (!inferProblemSizes(manifest, problem, output.shape, facts.sizes, error))
    return false;
  facts.type = manifest.elementType;
  facts.tf32 = tf32;
  facts.causal = manifest.attributes.causal;
  if (problem.mask) {
    facts.maskElements = problem.mask->getNumElements();
    facts.maskType = problem.mask->type;
  }
  // The block map the last timed launch wrote.
  if (manifest.getWorkspace("mask_block_map")) {
    std::vector<uint8_t> map;
    if (!kernel.readWorkspace("mask_block_map", facts.sizes, map, error))
      return false;
    facts.maskBlocks = countMaskBlocks(map.data(), map.size());
    // f32 programs with two or more stages run a causal program's loops on
    // rows with a triangular mask's classes (docs/GPU.md).
    if (manifest.elementType == ElementType::F32 &&
        manifest.config.numStages > 1) {
      const ProblemSizes &n = facts.sizes;
      CausalMode causal = manifest.attributes.causal;
      facts.causalRows = countCausalRows(
          map.data(), map.size(), n.Tq, n.Tk, manifest.config.blockM,
          manifest.config.blockN, causal != CausalMode::None,
          causal == CausalMode::BottomRight ? n.Tk - n.Tq : 0);
    }
  }
  facts.medianMs = medianMs;

  // The device.
  ExplainDevice &dev = facts.device;
  dev.name = device.getName();
  dev.arch = device.getArchName();
  dev.multiprocessors = device.getMultiprocessorCount();
  dev.clockKHz = device.getClockKHz();
  dev.bandwidthBytesPerSecond = device.getMemoryBandwidthBytesPerSecond();
  dev.peakTflops = getPeakTflops(dev.arch, dev.name, facts.type,
                                 getPrecision(facts.type, tf32), dev.peakNote);
  if (!device.getAttribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                           dev.maxThreadsPerSM, error) ||
      !device.getAttribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
                           dev.maxBlocksPerSM, error) ||
      !device.getAttribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
                           dev.registersPerSM, error) ||
      !device.getAttribute(
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
          dev.sharedBytesPerSM, error))
    return false;

  // The kernel and its launch.
  ExplainKernel &k = facts.kernel;
  const KernelResources &resources = kernel.getResources();
  k.name = manifest.kernel;
  k.threadsPerBlock =
      int(manifest.block[0] * manifest.block[1] * manifest.block[2]);
  unsigned grid[3];
  if (!evaluateGrid(manifest, facts.sizes, grid, error))
    return false;
  k.gridBlocks = int64_t(grid[0]) * grid[1] * grid[2];
  k.registers = resources.numRegisters;
  k.localBytes = resources.localBytes;
  k.staticSharedBytes = resources.staticSharedBytes;
  k.dynamicSharedBytes = int(manifest.sharedMemoryBytes);
  const CudaDriverApi &api = device.getApi();
  int blocks = 0;
  CUresult result = api.occupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel.getKernel().getFunction(), k.threadsPerBlock,
      size_t(k.dynamicSharedBytes));
  if (result != CUDA_SUCCESS)
    return failWith(
        error, formatCudaError(api, result,
                               "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  k.activeBlocksPerSM = blocks;
  k.blockM = manifest.config.blockM;
  k.blockN = manifest.config.blockN;
  k.numWarps = manifest.config.numWarps;
  k.numStages = manifest.config.numStages;
  k.tensorCores = findTensorCores(ptx, manifest.chip);

  // The operands as run() and time() pass them: contiguous, in buffers of
  // their own (cuMemAlloc aligns to 256 bytes), a broadcast mask dimension
  // with stride 0.
  const std::pair<const char *, const HostTensor *> tensors[] = {
      {"q", problem.query},
      {"k", problem.key},
      {"v", problem.value},
      {"mask", problem.mask},
      {"o", &output}};
  for (const auto &[name, tensor] : tensors) {
    if (!tensor)
      continue;
    TensorArg arg = makeOperand(problem, tensor, 0);
    facts.operands.push_back({name, arg.sizes, arg.strides,
                              int64_t(getElementBytes(tensor->type)), 0});
  }
  out = std::move(facts);
  return true;
}

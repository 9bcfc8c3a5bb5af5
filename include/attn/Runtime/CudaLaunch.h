//===- CudaLaunch.h - Launching manifest kernels through CUDA ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Launching a compiled attention kernel from its PTX and launch manifest:
//
//   ManifestKernel kernel;
//   ManifestKernel::load(device, manifest, ptx, kernel, error);
//   kernel.launch({{"query", q}, ...}, sizes, /*stream=*/nullptr, error);
//
// A launch runs the manifest's prologue kernels (version 2), the main
// kernel, then its epilogue kernels (version 5), on one stream, with the
// ManifestKernel's workspaces unless the caller passes them; the tensor maps of
// version 3 params are encoded at each launch (TensorMap.h). Also here:
// benchmarking with CUDA events, rotating among copies of the inputs so that
// they do not stay in L2.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDALAUNCH_H
#define ATTN_RUNTIME_CUDALAUNCH_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/TensorMap.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// What cuLaunchKernel takes for the main kernel and, before it, each
/// prologue kernel and, after it, each epilogue kernel.
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedMemoryBytes = 0;
  ParamPack params;
  std::vector<LaunchConfig> prologue, epilogue;
  /// Keeps the device copies of the tensor maps the params point to.
  std::vector<std::shared_ptr<const void>> tensorMaps;

  /// The launch of `step` (prologue, epilogue or this one); nullptr when
  /// this config has no such launch.
  LaunchConfig *getLaunch(const LaunchStep &step);
};

/// evaluateGrid and packParams for every kernel of the launch;
/// `operands` holds every workspace (ManifestKernel::prepare adds them).
bool prepareLaunch(const Manifest &manifest,
                   const std::map<std::string, TensorArg> &operands,
                   const ProblemSizes &sizes, LaunchConfig &out,
                   std::string &error,
                   const TensorMapResolver &resolveTensorMap = nullptr);

/// The size in bytes of each parameter of `.entry <entry>(...)` in PTX text;
/// fails, listing the entries, when there is no such entry.
bool getPtxEntryParamBytes(const std::string &ptx, const std::string &entry,
                           std::vector<unsigned> &paramBytes,
                           std::string &error);

/// Whether a device of compute capability major.minor can run code compiled
/// for `chip` ("sm_90a" needs exactly 9.0, "sm_100f" 10.x, "sm_80" 8.0 or
/// newer). Unknown chip names are assumed to run (the driver decides).
bool isChipCompatible(const std::string &chip, int major, int minor);

/// A manifest's kernel loaded on a device with its prologue kernels and a
/// buffer per workspace, grown (at least doubled) when a launch needs more;
/// predecessors are kept, so LaunchConfigs prepared earlier stay valid.
/// Launches on one stream may share them; launches on streams that may
/// overlap must pass their own. prepare() is not thread-safe.
class ManifestKernel {
public:
  /// Loads `image` (PTX or a cubin) on `device`, which must outlive the
  /// kernel, after checking that the device runs the manifest's chip and
  /// that the PTX entries take the manifest's params; checks that blocks
  /// and shared memory fit, and raises the dynamic shared memory limit past
  /// 48 KiB.
  static bool load(const CudaDevice &device, const Manifest &manifest,
                   const std::string &image, ManifestKernel &out,
                   std::string &error);

  bool isLoaded() const { return module.isLoaded(); }
  const CudaDevice &getDevice() const { return *device; }
  const Manifest &getManifest() const { return manifest; }
  /// The kernels of Manifest::getKernels(): the main kernel, the prologue
  /// kernels, the epilogue kernels.
  const std::vector<CudaKernel> &getKernels() const { return kernels; }
  const CudaKernel &getKernel() const { return kernels.front(); }
  const KernelResources &getResources() const { return resources.front(); }

  /// prepareLaunch with the kernel's own workspaces where `operands` lacks
  /// them and the device copies of the tensor maps (TensorMapCache).
  bool prepare(const std::map<std::string, TensorArg> &operands,
               const ProblemSizes &sizes, LaunchConfig &out,
               std::string &error) const;
  /// Launches asynchronously: the prologue kernels, the main one, the
  /// epilogue kernels (Manifest::getLaunchOrder).
  bool launch(LaunchConfig &config, CUstream stream, std::string &error) const;
  bool launch(const std::map<std::string, TensorArg> &operands,
              const ProblemSizes &sizes, CUstream stream,
              std::string &error) const;

  size_t getNumCachedTensorMaps() const { return tensorMapCache.size(); }
  /// The bytes of the kernel's buffer for workspace `name` (0: none yet).
  uint64_t getWorkspaceCapacity(const std::string &name) const;
  /// Copies the kernel's buffer for workspace `name`, as a launch for
  /// `sizes` wrote it, to `out`.
  bool readWorkspace(const std::string &name, const ProblemSizes &sizes,
                     std::vector<uint8_t> &out, std::string &error) const;

private:
  /// The device copy of the tensor map of `param` for `arg`; its owner goes
  /// to `keep` (TensorMap.cpp).
  bool getTensorMap(const KernelParam &param, const TensorArg &arg,
                    uint64_t &devicePtr,
                    std::vector<std::shared_ptr<const void>> &keep,
                    std::string &error) const;

  const CudaDevice *device = nullptr;
  Manifest manifest;
  CudaModule module;
  std::vector<CudaKernel> kernels;
  std::vector<KernelResources> resources;
  /// By name; the last one is the current one.
  mutable std::map<std::string, std::vector<DeviceBuffer>> workspaceBuffers;
  mutable TensorMapCache tensorMapCache;
};

/// Options of benchmark().
struct BenchmarkOptions {
  /// Untimed launches: at least `warmupIterations`, and more (at most
  /// `maxWarmupLaunches`) until the facts' warm-up time of GPU time passed,
  /// so that the timed ones run at a sustained workload's clocks, not at an
  /// idle GPU's boost clock (docs/Explain.md).
  unsigned warmupIterations = 5;
  unsigned maxWarmupLaunches = 100000;
  /// Timed launches, each between its own pair of events.
  unsigned iterations = 20;
  /// Rotate among at most `maxCopies` copies of query, key, value and mask
  /// so that consecutive launches read different memory.
  bool rotateInputs = true;
  unsigned maxCopies = 64;
  /// Device memory the copies leave free, besides 5% of the total.
  uint64_t reserveBytes = 256ull << 20;
};

/// The number of input sets to rotate among: the smallest K with
/// K * bytesPerCopy >= 2 * l2Bytes, at most maxCopies, and with the K - 1
/// extra copies fitting in availableBytes; at least 1.
unsigned chooseNumInputCopies(uint64_t bytesPerCopy, uint64_t l2Bytes,
                              uint64_t availableBytes, unsigned maxCopies);

/// The bytes [first, end) a TensorArg's elements occupy from devicePtr (any
/// strides); {0, 0} if a size is 0.
void getTensorByteSpan(const TensorArg &arg, uint64_t elementBytes,
                       int64_t &firstByte, int64_t &endByte);

/// Times launches of `kernel` (the prologue and epilogue kernels included:
/// each timed launch is the whole sequence) on `stream`
/// as BenchmarkOptions say: the milliseconds of each timed launch, in launch
/// order. The input copies share the workspaces and the output, and are
/// freed before returning.
bool benchmark(const ManifestKernel &kernel,
               const std::map<std::string, TensorArg> &operands,
               const ProblemSizes &sizes, const BenchmarkOptions &options,
               std::vector<double> &timesMs, std::string &error,
               CUstream stream = nullptr);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDALAUNCH_H

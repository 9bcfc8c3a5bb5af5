//===- CudaLaunch.h - Launching manifest kernels through CUDA ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Launching a compiled attention kernel from its PTX and launch manifest:
//
//   CudaDevice device;                      // CudaDriver.h
//   CudaDevice::open(0, device, error);
//   ManifestKernel kernel;
//   ManifestKernel::loadFile(device, "f.manifest.json", kernel, error);
//   std::map<std::string, TensorArg> operands = {{"query", q}, ...};
//   ProblemSizes sizes;                     // or inferProblemSizes(...)
//   kernel.launch(operands, sizes, /*stream=*/nullptr, error);
//
// A launch runs the manifest's prologue kernels (version 2), in order, then
// the main kernel, all on the given stream; the workspaces they share are
// allocated by the ManifestKernel unless the caller passes them in
// `operands`. The tensor maps that version 3 params pass are encoded from
// the operands at each launch and copied to device memory by the
// ManifestKernel, once per distinct map (TensorMap.h).
//
// plus benchmarking with CUDA events (rotating among copies of the inputs so
// that consecutive launches do not find them in L2) and the roofline floor of
// SPEC.md section 2 (peak FLOP/s per chip and dtype, and the DRAM bandwidth).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDALAUNCH_H
#define ATTN_RUNTIME_CUDALAUNCH_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Roofline.h"
#include "attn/Runtime/TensorMap.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Everything cuLaunchKernel takes, for one launch of a prologue kernel
/// (version 2).
struct PrologueLaunch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedMemoryBytes = 0;
  ParamPack params;
};

/// Everything cuLaunchKernel takes, for one launch of the main kernel, and
/// the launches of the prologue kernels that precede it on the same stream.
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedMemoryBytes = 0;
  ParamPack params;
  /// One per entry of Manifest::prologue, in order (empty in version 1).
  std::vector<PrologueLaunch> prologue;
  /// The device copies of the tensor maps (version 3) that `params` and the
  /// prologue's params point to, kept alive as long as the configuration.
  std::vector<std::shared_ptr<const void>> tensorMaps;
};

/// Builds the launch of `manifest` for `operands` and `sizes`: evaluateGrid,
/// the block and shared memory of the manifest, and packParams, for the
/// main kernel and for each prologue kernel. `operands` must hold every
/// workspace the params name, keyed by its name (evaluateWorkspace gives
/// its bytes); ManifestKernel::prepare adds the missing ones. Tensor map
/// params (version 3) take their pointers from `resolveTensorMap` (see
/// packParams); ManifestKernel::prepare supplies it.
bool prepareLaunch(const Manifest &manifest,
                   const std::map<std::string, TensorArg> &operands,
                   const ProblemSizes &sizes, LaunchConfig &out,
                   std::string &error,
                   const TensorMapResolver &resolveTensorMap = nullptr);

/// Reads the parameter list of `.entry <entry>(...)` in PTX text: the size
/// in bytes of each parameter, in order. Fails if the PTX has no such entry
/// (the message lists the entries it has).
bool getPtxEntryParamBytes(const std::string &ptx, const std::string &entry,
                           std::vector<unsigned> &paramBytes,
                           std::string &error);

/// Whether a device of compute capability major.minor can run code compiled
/// for `chip` ("sm_90a" needs exactly 9.0, "sm_100f" 10.x, "sm_80" 8.0 or
/// newer). Unknown chip names are assumed to run (the driver decides).
bool isChipCompatible(const std::string &chip, int major, int minor);

/// A manifest's kernel loaded on a device, ready to launch, with its
/// prologue kernels (version 2) and the workspaces it allocates for them.
///
/// The workspaces a caller does not pass in `operands` live in device
/// buffers the ManifestKernel owns: one per workspace, grown (at least
/// doubled) when a launch needs more and freed with the kernel. A grown
/// buffer's predecessors are kept until then too, so a LaunchConfig
/// prepared earlier stays valid. Launches on one stream are serialized, so
/// they may share them; launches on streams that may overlap must each pass
/// their own workspaces. prepare() is not thread-safe.
class ManifestKernel {
public:
  /// Loads `image` (the PTX text, or a cubin) for `manifest` on `device`,
  /// which must outlive the kernel. Checks, with readable errors, that the
  /// device can run the manifest's chip, that the PTX entries (the main one
  /// and each prologue kernel's) take the parameters the manifest
  /// describes, that each block fits its compiled kernel (registers) and
  /// that the shared memory fits the device; raises the dynamic shared
  /// memory limit of a kernel when its static + dynamic > 48 KiB.
  static bool load(const CudaDevice &device, const Manifest &manifest,
                   const std::string &image, ManifestKernel &out,
                   std::string &error,
                   const ModuleLoadOptions &options = ModuleLoadOptions());

  /// readManifestFile, reads the PTX next to it (Manifest::getPtxPath), and
  /// load.
  static bool loadFile(const CudaDevice &device,
                       const std::string &manifestPath, ManifestKernel &out,
                       std::string &error,
                       const ModuleLoadOptions &options = ModuleLoadOptions());

  ManifestKernel() = default;
  ManifestKernel(ManifestKernel &&) = default;
  ManifestKernel &operator=(ManifestKernel &&) = default;

  bool isLoaded() const { return module.isLoaded(); }
  const CudaDevice &getDevice() const { return *device; }
  const Manifest &getManifest() const { return manifest; }
  /// The main kernel.
  const CudaKernel &getKernel() const { return kernel; }
  const KernelResources &getResources() const { return resources; }
  /// The kernels of Manifest::prologue, in order.
  const std::vector<CudaKernel> &getPrologueKernels() const {
    return prologueKernels;
  }
  const std::vector<KernelResources> &getPrologueResources() const {
    return prologueResources;
  }
  /// The JIT info log (ptxas's report with ModuleLoadOptions::verbose).
  const std::string &getInfoLog() const { return module.getInfoLog(); }

  /// prepareLaunch for this kernel, with the kernel's own buffers for the
  /// workspaces `operands` lacks (allocated or grown here), and the device
  /// copies of the tensor maps the params take (version 3): each encoded
  /// from its operand (getTensorMapEncoding, encodeTensorMap) and looked up
  /// in the kernel's TensorMapCache, which copies a new map to device memory
  /// (cuMemAlloc, cuMemcpyHtoD, then a context synchronization: a first
  /// launch on new tensors costs that, later ones nothing). `out` holds the
  /// copies it points to.
  bool prepare(const std::map<std::string, TensorArg> &operands,
               const ProblemSizes &sizes, LaunchConfig &out,
               std::string &error) const;
  /// Launches a prepared configuration on `stream` (asynchronous): each
  /// prologue kernel in order, then the main kernel.
  bool launch(LaunchConfig &config, CUstream stream, std::string &error) const;
  /// prepare + launch (asynchronous).
  bool launch(const std::map<std::string, TensorArg> &operands,
              const ProblemSizes &sizes, CUstream stream,
              std::string &error) const;

  /// The number of tensor maps in device memory that the kernel keeps for
  /// its launches (at most TensorMapCache::kDefaultCapacity unless prepared
  /// LaunchConfigs hold more).
  size_t getNumCachedTensorMaps() const { return tensorMapCache.size(); }

  /// The bytes of the kernel's own buffer for workspace `name` (0 before a
  /// launch needed it).
  uint64_t getWorkspaceCapacity(const std::string &name) const;
  /// Copies the kernel's own buffer for workspace `name`, as a launch for
  /// `sizes` uses it, to `out` (after the launches that wrote it: the copy
  /// synchronizes with the default stream). Fails when no launch allocated
  /// it yet.
  bool readWorkspace(const std::string &name, const ProblemSizes &sizes,
                     std::vector<uint8_t> &out, std::string &error) const;

private:
  /// A TensorArg over the kernel's buffer for `workspace`, grown to fit
  /// `sizes`.
  bool getOwnWorkspace(const WorkspaceSpec &workspace,
                       const ProblemSizes &sizes, TensorArg &out,
                       std::string &error) const;
  /// The device address of the tensor map of `param` for `arg`, from
  /// tensorMapCache; adds the copy's owner to `keep` (TensorMap.cpp).
  bool getTensorMap(const KernelParam &param, const TensorArg &arg,
                    uint64_t &devicePtr,
                    std::vector<std::shared_ptr<const void>> &keep,
                    std::string &error) const;

  const CudaDevice *device = nullptr;
  Manifest manifest;
  CudaModule module;
  CudaKernel kernel;
  KernelResources resources;
  std::vector<CudaKernel> prologueKernels;
  std::vector<KernelResources> prologueResources;
  /// The buffers of the workspaces, by name; the last one is the current
  /// one, the others are kept alive for LaunchConfigs that point to them.
  mutable std::map<std::string, std::vector<DeviceBuffer>> workspaceBuffers;
  /// The device copies of the tensor maps of earlier launches.
  mutable TensorMapCache tensorMapCache;
};

/// Options of benchmark().
struct BenchmarkOptions {
  /// Untimed launches first: at least `warmupIterations`, and more until
  /// they took `warmupMs` of GPU time (at most `maxWarmupLaunches` more).
  /// An idle H200 runs at its 1980 MHz boost clock for the first tens of
  /// milliseconds of a heavy kernel; within about 200 ms it reaches its
  /// 700 W cap and settles at 1600-1830 MHz, where a sustained workload
  /// runs (the seed's causal kernel: 1.76 ms over the first 20 launches,
  /// 1.90 ms after, bench/results/2026-12-01-h200-power-cap.log).
  unsigned warmupIterations = 5;
  double warmupMs = 250.0;
  unsigned maxWarmupLaunches = 100000;
  /// Timed launches (each between its own pair of events).
  unsigned iterations = 20;
  /// Rotate among copies of the inputs (query, key, value, mask) so that
  /// consecutive launches read different memory when one set fits in L2.
  bool rotateInputs = true;
  /// At most this many input sets (the original included).
  unsigned maxCopies = 64;
  /// Device memory left free when making copies (besides 5% of the total).
  uint64_t reserveBytes = 256ull << 20;
};

/// What benchmark() measured.
struct BenchmarkResult {
  /// Milliseconds of each timed launch, in launch order.
  std::vector<double> timesMs;
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
  /// Input sets rotated among (1: no copies).
  unsigned numInputCopies = 1;
  /// Bytes of one input set (what one launch reads of query, key, value and
  /// mask).
  uint64_t inputBytesPerCopy = 0;
};

/// The number of input sets to rotate among: the smallest K with
/// K * bytesPerCopy >= 2 * l2Bytes, at most maxCopies, and with the K - 1
/// extra copies fitting in availableBytes; at least 1.
unsigned chooseNumInputCopies(uint64_t bytesPerCopy, uint64_t l2Bytes,
                              uint64_t availableBytes, unsigned maxCopies);

/// The byte span [first, last) that a TensorArg's elements occupy, relative
/// to devicePtr, for elements of `elementBytes` (handles any strides, zero
/// and negative included). {0, 0} if a size is 0.
void getTensorByteSpan(const TensorArg &arg, uint64_t elementBytes,
                       int64_t &firstByte, int64_t &endByte);

/// The median (mean of the middle two for an even count); 0 when empty.
double getMedian(std::vector<double> values);

/// Times `kernel` on `operands`: warm-up launches, then `iterations` launches
/// each between two CUDA events on `stream`, rotating among input copies
/// (see BenchmarkOptions), and reports the median. A launch is the prologue
/// kernels and the main kernel (ManifestKernel::launch), so each time
/// includes the prologue; the input copies share one set of workspaces. The
/// output is written by every launch. The copies are freed before
/// returning.
bool benchmark(const ManifestKernel &kernel,
               const std::map<std::string, TensorArg> &operands,
               const ProblemSizes &sizes, const BenchmarkOptions &options,
               BenchmarkResult &result, std::string &error,
               CUstream stream = nullptr);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDALAUNCH_H

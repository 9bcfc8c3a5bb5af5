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
//   kernel.launch(operands, sizes, /*stream=*/nullptr, error);
//
// A launch runs the manifest's prologue kernels (version 2), in order, then
// the main kernel, on one stream; the workspaces they share are the
// ManifestKernel's unless the caller passes them in `operands`. The tensor
// maps of version 3 params are encoded from the operands at each launch and
// copied to device memory once per distinct map (TensorMap.h). Also here:
// benchmarking with CUDA events, rotating among copies of the inputs so that
// consecutive launches do not find them in L2.
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

/// Everything cuLaunchKernel takes for one kernel: the main one, with the
/// prologue kernels launched before it on the same stream.
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedMemoryBytes = 0;
  ParamPack params;
  /// One per entry of Manifest::prologue, in order (their own `prologue`
  /// and `tensorMaps` are empty).
  std::vector<LaunchConfig> prologue;
  /// The device copies of the tensor maps (version 3) the params point to,
  /// kept alive as long as the configuration.
  std::vector<std::shared_ptr<const void>> tensorMaps;
};

/// Builds the launch of `manifest` for `operands` and `sizes`: evaluateGrid,
/// the block and shared memory, and packParams, for the main kernel and for
/// each prologue kernel. `operands` must hold every workspace the params
/// name (ManifestKernel::prepare adds the missing ones); tensor map params
/// take their pointers from `resolveTensorMap` (see packParams).
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
/// prologue kernels (version 2) and the workspaces it allocates for them:
/// one buffer per workspace, grown (at least doubled) when a launch needs
/// more. A grown buffer's predecessors are kept until the kernel goes, so a
/// LaunchConfig prepared earlier stays valid. Launches on one stream are
/// serialized and may share them; launches on streams that may overlap must
/// each pass their own workspaces. prepare() is not thread-safe.
class ManifestKernel {
public:
  /// Loads `image` (PTX text or a cubin) for `manifest` on `device`, which
  /// must outlive the kernel. Checks, with readable errors, that the device
  /// can run the manifest's chip, that the PTX entries (the main one and each
  /// prologue kernel's) take the parameters the manifest describes, that
  /// each block fits its kernel (registers) and the shared memory the
  /// device; raises a kernel's dynamic shared memory limit when its static +
  /// dynamic > 48 KiB.
  static bool load(const CudaDevice &device, const Manifest &manifest,
                   const std::string &image, ManifestKernel &out,
                   std::string &error);
  /// readManifestFile, reads the PTX next to it (getPtxPath), and load.
  static bool loadFile(const CudaDevice &device,
                       const std::string &manifestPath, ManifestKernel &out,
                       std::string &error);

  bool isLoaded() const { return module.isLoaded(); }
  const CudaDevice &getDevice() const { return *device; }
  const Manifest &getManifest() const { return manifest; }
  /// The main kernel, then the kernels of Manifest::prologue in order.
  const std::vector<CudaKernel> &getKernels() const { return kernels; }
  const CudaKernel &getKernel() const { return kernels.front(); }
  const KernelResources &getResources() const { return resources.front(); }

  /// prepareLaunch with the kernel's own buffers for the workspaces
  /// `operands` lacks, and the device copies of the tensor maps the params
  /// take (version 3): each encoded from its operand and looked up in the
  /// kernel's TensorMapCache, which copies a new map to device memory (a
  /// first launch on new tensors costs that, later ones nothing). `out`
  /// holds the copies it points to.
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

  /// The tensor maps in device memory the kernel keeps for its launches.
  size_t getNumCachedTensorMaps() const { return tensorMapCache.size(); }
  /// The bytes of the kernel's own buffer for workspace `name` (0 before a
  /// launch needed it).
  uint64_t getWorkspaceCapacity(const std::string &name) const;
  /// Copies the kernel's own buffer for workspace `name`, as a launch for
  /// `sizes` uses it, to `out`, after the launches that wrote it. Fails when
  /// no launch of these sizes allocated it.
  bool readWorkspace(const std::string &name, const ProblemSizes &sizes,
                     std::vector<uint8_t> &out, std::string &error) const;

private:
  /// The device address of the tensor map of `param` for `arg`, from
  /// tensorMapCache; adds the copy's owner to `keep` (TensorMap.cpp).
  bool getTensorMap(const KernelParam &param, const TensorArg &arg,
                    uint64_t &devicePtr,
                    std::vector<std::shared_ptr<const void>> &keep,
                    std::string &error) const;

  const CudaDevice *device = nullptr;
  Manifest manifest;
  CudaModule module;
  std::vector<CudaKernel> kernels;
  std::vector<KernelResources> resources;
  /// The buffers of the workspaces, by name; the last one is the current
  /// one, the others are kept for LaunchConfigs that point to them.
  mutable std::map<std::string, std::vector<DeviceBuffer>> workspaceBuffers;
  mutable TensorMapCache tensorMapCache;
};

/// Options of benchmark().
struct BenchmarkOptions {
  /// Untimed launches first: at least `warmupIterations`, and more until
  /// they took the facts' warm-up time of GPU time (at most
  /// `maxWarmupLaunches` more), so that the timed launches run at the clocks
  /// of a sustained workload rather than at the boost clock of an idle GPU
  /// (docs/Explain.md).
  unsigned warmupIterations = 5;
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
  /// Input sets rotated among (1: no copies), and the bytes of one (what one
  /// launch reads of query, key, value and mask).
  unsigned numInputCopies = 1;
  uint64_t inputBytesPerCopy = 0;
};

/// The number of input sets to rotate among: the smallest K with
/// K * bytesPerCopy >= 2 * l2Bytes, at most maxCopies, and with the K - 1
/// extra copies fitting in availableBytes; at least 1.
unsigned chooseNumInputCopies(uint64_t bytesPerCopy, uint64_t l2Bytes,
                              uint64_t availableBytes, unsigned maxCopies);

/// The byte span [first, last) that a TensorArg's elements occupy, relative
/// to devicePtr, for elements of `elementBytes` (any strides, zero and
/// negative included). {0, 0} if a size is 0.
void getTensorByteSpan(const TensorArg &arg, uint64_t elementBytes,
                       int64_t &firstByte, int64_t &endByte);

/// The median (mean of the middle two for an even count); 0 when empty.
double getMedian(std::vector<double> values);

/// Times `kernel` on `operands`: warm-up launches, then `iterations` launches
/// each between two CUDA events on `stream`, rotating among input copies
/// (BenchmarkOptions), and reports the median. Each time includes the
/// prologue kernels; the input copies share one set of workspaces; the
/// output is written by every launch. The copies are freed before returning.
bool benchmark(const ManifestKernel &kernel,
               const std::map<std::string, TensorArg> &operands,
               const ProblemSizes &sizes, const BenchmarkOptions &options,
               BenchmarkResult &result, std::string &error,
               CUstream stream = nullptr);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDALAUNCH_H

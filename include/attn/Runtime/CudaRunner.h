//===- CudaRunner.h - Running manifest kernels on host tensors --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What `attn-run --target=cuda` and the runner-only `attn-run MANIFEST.json`
// do with a compiled kernel: open a device, load the kernel, upload host
// tensors, launch, download the output, and time it.
//
//   KernelRunner runner;
//   runner.open(/*ordinal=*/0, error);
//   runner.load(manifest, ptxText, error);
//   runner.run(problem, output, error);     // output: shape and type set
//   runner.time(problem, output, warmup, iterations, timesMs, error);
//
// Inputs are taken from an AttentionProblem: each distinct tensor is
// uploaded once, so an argument that feeds several operands (q = k = v)
// is passed to all of them as the same device pointer. A broadcast mask
// dimension (size 1) is passed with stride 0. Every launch, in run() and in
// each timed iteration of time(), is the manifest's prologue kernels
// (version 2) then the main kernel (ManifestKernel::launch), with the
// workspaces the ManifestKernel allocates.
//
// Needs cuda.h (AttnCudaRuntime defines ATTN_HAS_CUDA_DRIVER when found);
// MLIR-free. Errors are one line.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDARUNNER_H
#define ATTN_RUNTIME_CUDARUNNER_H

#include "attn/Runtime/CudaLaunch.h"
#include "attn/Runtime/Explain.h"
#include "attn/Runtime/Reference.h"
#include "attn/Runtime/RunReport.h"

#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// The chip attn-run compiles for on a device of compute capability
/// major.minor: the arch-specific "sm_90a" for 9.0 (wgmma, TMA), else
/// "sm_XY".
std::string getNativeChip(int major, int minor);

/// Runs one kernel of a launch manifest on host tensors (see the file
/// comment). Neither copyable nor movable: the loaded kernel points to the
/// device.
class KernelRunner {
public:
  KernelRunner() = default;
  KernelRunner(const KernelRunner &) = delete;
  KernelRunner &operator=(const KernelRunner &) = delete;

  /// Opens CUDA device `ordinal`. Errors as CudaDevice::open ("no CUDA
  /// driver found (libcuda.so.1 could not be loaded)", ...).
  bool open(int ordinal, std::string &error);
  const CudaDevice &getDevice() const { return device; }

  /// Loads `manifest`'s kernel from `ptx` (checks as ManifestKernel::load).
  bool load(const Manifest &manifest, const std::string &ptx,
            std::string &error);
  const ManifestKernel &getKernel() const { return kernel; }

  /// Runs the kernel once on the tensors of `problem`. `output` arrives with
  /// its shape and type set; its device buffer is filled with 0xFF bytes
  /// (NaN for every float type) before the launch, so elements the kernel
  /// does not write fail a check.
  bool run(const AttentionProblem &problem, HostTensor &output,
           std::string &error);

  /// benchmark(): `warmup` untimed launches, then `iterations` launches each
  /// timed with CUDA events, rotating among copies of the inputs so that
  /// they do not stay in L2. `output` gives the output's shape and type.
  bool time(const AttentionProblem &problem, const HostTensor &output,
            unsigned warmup, unsigned iterations, std::vector<double> &timesMs,
            std::string &error);

  /// The facts of the explain report (Explain.h) for `problem` timed at
  /// `medianMs`: the device's limits (cuDeviceGetAttribute), the kernel's
  /// resources (cuFuncGetAttribute) and occupancy
  /// (cuOccupancyMaxActiveBlocksPerMultiprocessor), the launch, the operands
  /// as run() passes them, the tensor-core evidence (findTensorCores), and
  /// the classes in the mask block map of the last launch (after time()).
  /// The kernel facts are the main kernel's; `medianMs` from time()
  /// includes the prologue kernels.
  bool explain(const AttentionProblem &problem, const HostTensor &output,
               double medianMs, bool tf32, ExplainFacts &out,
               std::string &error) const;

  /// The peak rates of the device (getPeakTflops for `type`, with tf32 or
  /// IEEE f32 matmuls; the estimated DRAM bandwidth).
  DeviceInfo getDeviceInfo(ElementType type, bool tf32) const;

private:
  struct DeviceTensors;
  bool upload(const AttentionProblem &problem, const HostTensor &output,
              DeviceTensors &out, std::string &error);

  CudaDevice device;
  ManifestKernel kernel;
  /// The loaded PTX, for the explain report's tensor-core evidence.
  std::string ptx;
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDARUNNER_H

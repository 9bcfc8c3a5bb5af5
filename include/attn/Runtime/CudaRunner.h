//===- CudaRunner.h - Running manifest kernels on host tensors --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What `attn-run --target=cuda` and the runner-only `attn-run MANIFEST.json`
// do with a compiled kernel: open a device, load the kernel, upload the host
// tensors of an AttentionProblem (each distinct tensor once: q = k = v share
// a pointer; a broadcast mask dimension has stride 0), launch, download the
// output (and the log-sum-exp of a kernel that writes one), time it and
// gather the explain report's facts.
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

/// The chip attn-run compiles for on a device: "sm_90a" for 9.0 (wgmma,
/// TMA), else "sm_XY".
std::string getNativeChip(int major, int minor);

/// Runs one kernel of a launch manifest on host tensors. Not copyable: the
/// loaded kernel points to the device.
class KernelRunner {
public:
  KernelRunner() = default;
  KernelRunner(const KernelRunner &) = delete;
  KernelRunner &operator=(const KernelRunner &) = delete;

  /// CudaDevice::open.
  bool open(int ordinal, std::string &error);
  const CudaDevice &getDevice() const { return device; }

  /// Loads `manifest`'s kernel from `ptx` (checks as ManifestKernel::load).
  bool load(const Manifest &manifest, const std::string &ptx,
            std::string &error);

  /// Runs the kernel once; `output` comes with its shape and type, and so
  /// does `lse` (f32 B x Hq x Tq) when the kernel writes a log-sum-exp
  /// (the manifest's "lse"; nullptr: it is written to a device buffer and
  /// dropped). The device buffers are first filled with 0xFF bytes (NaN
  /// for every float type), so elements the kernel does not write fail a
  /// check.
  bool run(const AttentionProblem &problem, HostTensor &output, HostTensor *lse,
           std::string &error);

  /// benchmark() with `warmup` and `iterations` launches.
  bool time(const AttentionProblem &problem, const HostTensor &output,
            unsigned warmup, unsigned iterations, std::vector<double> &timesMs,
            std::string &error);

  /// The explain report's facts for `problem` timed at `medianMs`: from the
  /// driver (the device's limits, the main kernel's resources and
  /// occupancy), the launch, the operands as run() passes them, the
  /// tensor-core evidence and the mask block map of the last launch.
  bool explain(const AttentionProblem &problem, const HostTensor &output,
               double medianMs, bool tf32, ExplainFacts &out,
               std::string &error) const;

  /// The device's peak rates for `type` (getPeakTflops, the estimated DRAM
  /// bandwidth).
  DeviceInfo getDeviceInfo(ElementType type, bool tf32) const;

private:
  struct DeviceTensors;
  bool upload(const AttentionProblem &problem, const HostTensor &output,
              DeviceTensors &out, std::string &error);
  /// Copies the device result `buffer` to `tensor`, resized to its bytes.
  static bool download(DeviceBuffer &buffer, HostTensor &tensor,
                       std::string &error);

  CudaDevice device;
  ManifestKernel kernel;
  std::string ptx; // for the tensor-core evidence
};

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_CUDARUNNER_H

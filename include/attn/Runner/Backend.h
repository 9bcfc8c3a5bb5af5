//===- Backend.h - Targets that compile and run attention -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// A Backend compiles the entry function of a module for one target and runs
// it on host tensors. attn-run drives every target through this interface:
// the CPU backend (LLVM JIT through mlir::ExecutionEngine) lives in
// CPUBackend.cpp, the CUDA backend (PTX through the CUDA driver) in
// CUDABackend.cpp; createBackend selects one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_BACKEND_H
#define ATTN_RUNNER_BACKEND_H

#include "attn/Conversion/AttnToNVVM/Options.h"
#include "attn/Runner/EntryFunction.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/RunReport.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class PassManager;

namespace attn {
namespace runner {

/// Options of Backend::compile.
struct CompileOptions {
  /// Kernel config overrides of `--attn-tile` (0 keeps the default).
  int64_t blockM = 0;
  int64_t blockN = 0;
  /// K/V pipeline stages of `--attn-pipeline` (0 keeps the default; the
  /// CPU runs the pipelined loop sequentially, which checks its expansion).
  int64_t numStages = 0;
  /// --attn-tile's split-KV for a static Tq of one query block: the
  /// programs the key splits aim for (0: none; -1: the target's default,
  /// getDefaultSplitPrograms).
  int64_t splitPrograms = -1;
  /// --attn-pipeline's scores-ahead ("none", "tf32", "auto", "all"); empty
  /// keeps the target's default (cpu: none; cuda: auto).
  std::string scoresAhead;
  /// CUDA only: warps per program (0 keeps the default config).
  int64_t numWarps = 0;
  /// CUDA only: --convert-attn-to-nvvm's options.
  ConvertAttnToNVVMOptions nvvm;
  /// CUDA only: the chip to compile for, e.g. sm_90a; empty means the
  /// device's own (getNativeChip), or kDefaultCUDAChip for emitCUDAKernel.
  std::string chip;
  /// CPU only: the LLVM CPU name the JIT compiles for, with that CPU's
  /// default features; empty means the host CPU and all its features.
  std::string jitCPU;
  /// Called on every PassManager a backend creates, before it runs (for
  /// instance to apply the MLIR pass manager command-line options).
  std::function<LogicalResult(PassManager &)> configurePassManager;
};

/// What the roofline floor of `--bench` assumes about the device: a
/// description, the peak flop/s and the bandwidth in bytes/s.
using DeviceInfo = ::attn::runtime::DeviceInfo;

/// Compiles and runs the entry function on one target.
class Backend {
public:
  virtual ~Backend();

  /// The target name: "cpu", "cuda".
  virtual StringRef getTarget() const = 0;

  /// Compiles `entry` of `module` (which is not modified).
  virtual llvm::Error compile(ModuleOp module, EntryFunction &entry,
                              const CompileOptions &options) = 0;

  /// Runs the compiled function once. `arguments` are in the function's
  /// argument order; `results` are the function's results in order (the
  /// output, then the log-sum-exp if the op has one), which arrive with
  /// their types and shapes set and zero data, and receive the results.
  /// Fails if the compiled code returns a result of another shape.
  virtual llvm::Error
  run(const std::vector<const ::attn::runtime::HostTensor *> &arguments,
      std::vector<::attn::runtime::HostTensor> &results) = 0;

  /// Runs `warmup` times untimed, then `iterations` times, and returns the
  /// wall time of each timed run in milliseconds. The default times run()
  /// with std::chrono::steady_clock; backends override it to exclude host
  /// copies or to use device timers.
  virtual llvm::Expected<std::vector<double>>
  time(const std::vector<const ::attn::runtime::HostTensor *> &arguments,
       std::vector<::attn::runtime::HostTensor> &results, unsigned warmup,
       unsigned iterations);

  /// The peak rates of the device for inputs of `type` (`tf32` for f32
  /// inputs with tf32 matmuls).
  virtual DeviceInfo getDeviceInfo(::attn::runtime::ElementType type,
                                   bool tf32) const = 0;

  /// The facts of the explain report (attn/Runtime/Explain.h) of the
  /// compiled kernel on `arguments`, timed at `medianMs`. The default fails:
  /// only the CUDA backend reads them (from the driver).
  virtual llvm::Expected<::attn::runtime::ExplainFacts>
  explain(const std::vector<const ::attn::runtime::HostTensor *> &arguments,
          const ::attn::runtime::HostTensor &result, double medianMs,
          bool tf32) const;
};

/// Returns the CPU backend: the attn-to-llvm-cpu pipeline, then the LLVM JIT.
std::unique_ptr<Backend> createCPUBackend();

/// Returns the CUDA backend: compileToPTX for the chip of CUDA device 0
/// (see CUDABackend.cpp), then the CUDA driver. Opens the device at once, so
/// that a machine without one fails with "--target=cuda: no CUDA driver
/// found (libcuda.so.1 could not be loaded)" before any work is done.
llvm::Expected<std::unique_ptr<Backend>> createCUDABackend();

/// Returns the backend of `target` ("cpu" or "cuda"), or an error naming
/// the targets this build provides.
llvm::Expected<std::unique_ptr<Backend>> createBackend(StringRef target);

/// The chip emitCUDAKernel compiles for when CompileOptions::chip is empty.
constexpr const char *kDefaultCUDAChip = "sm_90a";

/// The files emitCUDAKernel wrote.
struct EmittedKernel {
  std::string ptxPath;
  std::string manifestPath;
  std::string chip;
};

/// Compiles `entry` of `module` to PTX (compileToPTX) and writes
/// `directory`/<func>.ptx and `directory`/<func>.json, the launch manifest
/// whose "ptx" is the PTX file's name (docs/Manifest.md); creates
/// `directory` if needed. Needs no GPU: the runner-only attn-run runs the
/// result on another machine. Nothing is written when compilation fails.
llvm::Expected<EmittedKernel> emitCUDAKernel(ModuleOp module,
                                             EntryFunction &entry,
                                             const CompileOptions &options,
                                             StringRef directory);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_BACKEND_H

//===- CUDABackend.cpp - attn-run on a GPU through the CUDA driver --------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the entry function with compileToPTX (attn-to-nvvm, then MLIR's
// NVVM lowering and serialization to PTX) and runs the PTX with the
// MLIR-free CUDA runtime (attn/Runtime/CudaRunner.h) on CUDA device 0, the
// first one CUDA_VISIBLE_DEVICES shows:
//
//  - compile: the chip is --chip, else the device's own (sm_90a on a
//    compute capability 9.0 device); the kernel is loaded with
//    ManifestKernel::load, which checks the PTX against its manifest.
//  - run: uploads each distinct argument once (an argument that feeds
//    several operands is passed to all of them as one pointer), fills the
//    output (and the log-sum-exp of an op that has one) with 0xFF bytes (NaN)
//    so that unwritten elements fail --check, launches, and downloads them.
//  - time: benchmark(): at least kCudaBenchWarmupRuns warm-up launches, then
//    each timed launch between CUDA events, rotating among copies of the
//    inputs so that L2 does not hold them.
//  - bench floor: getPeakTflops for the device and the input type (tf32 or
//    IEEE for f32), and the DRAM bandwidth estimated from the device.
//
// emitCUDAKernel writes the PTX and the manifest instead, without a GPU.
// Without cuda.h at build time (ATTN_HAS_CUDA_DRIVER unset), only
// emitCUDAKernel works.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Backend.h"

#include "attn/Runner/Diagnostics.h"
#include "attn/Target/PTX.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#if ATTN_HAS_CUDA_DRIVER
#include "attn/Runtime/CudaRunner.h"
#include "attn/Runtime/ManifestRun.h"

#include <algorithm>
#endif

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

/// compileToPTX for `chip`, with the diagnostics as a one-line error.
static llvm::Expected<KernelArtifact>
compileKernel(ModuleOp module, EntryFunction &entry,
              const CompileOptions &options, StringRef chip) {
  llvm::Expected<std::string> features = getPTXFeatures(chip);
  if (!features)
    return features.takeError();
  PTXOptions ptxOptions;
  ptxOptions.chip = chip.str();
  ptxOptions.features = *features;
  ptxOptions.overrides.blockM = options.blockM;
  ptxOptions.overrides.blockN = options.blockN;
  ptxOptions.overrides.numWarps = options.numWarps;
  ptxOptions.overrides.numStages = options.numStages;
  ptxOptions.splitPrograms = options.splitPrograms;
  if (!options.scoresAhead.empty())
    ptxOptions.scoresAhead = options.scoresAhead;
  ptxOptions.nvvm = options.nvvm;
  std::string name = entry.getName().str();
  DiagnosticCollector diagnostics(module.getContext());
  FailureOr<KernelArtifact> artifact = compileToPTX(module, name, ptxOptions);
  if (failed(artifact))
    return makeError(
        "compiling '" + name + "' for cuda (" + chip +
        ") failed: " + diagnostics.getFirstError("the PTX pipeline failed"));
  return std::move(*artifact);
}

llvm::Expected<EmittedKernel>
mlir::attn::runner::emitCUDAKernel(ModuleOp module, EntryFunction &entry,
                                   const CompileOptions &options,
                                   StringRef directory) {
  EmittedKernel emitted;
  emitted.chip = options.chip.empty() ? kDefaultCUDAChip : options.chip;
  llvm::Expected<KernelArtifact> artifact =
      compileKernel(module, entry, options, emitted.chip);
  if (!artifact)
    return artifact.takeError();

  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return makeError("cannot create directory '" + directory +
                     "': " + ec.message());
  std::string name = entry.getName().str();
  SmallString<128> ptxPath(directory), manifestPath(directory);
  llvm::sys::path::append(ptxPath, name + ".ptx");
  llvm::sys::path::append(manifestPath, name + ".json");
  artifact->manifest.ptx = name + ".ptx";

  // Both files or neither: ToolOutputFile removes what it is not told to
  // keep.
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> ptxFile =
      openOutputFile(ptxPath, &errorMessage);
  if (!ptxFile)
    return makeError(errorMessage);
  std::unique_ptr<llvm::ToolOutputFile> manifestFile =
      openOutputFile(manifestPath, &errorMessage);
  if (!manifestFile)
    return makeError(errorMessage);
  ptxFile->os() << artifact->ptx;
  manifestFile->os() << rt::serializeManifest(artifact->manifest);
  for (llvm::ToolOutputFile *file : {ptxFile.get(), manifestFile.get()}) {
    file->os().close();
    if (file->os().has_error())
      return makeError("cannot write '" + file->getFilename() +
                       "': " + file->os().error().message());
  }
  ptxFile->keep();
  manifestFile->keep();
  emitted.ptxPath = std::string(ptxPath);
  emitted.manifestPath = std::string(manifestPath);
  return emitted;
}

#if ATTN_HAS_CUDA_DRIVER

namespace {
class CUDABackend : public Backend {
public:
  explicit CUDABackend(std::unique_ptr<rt::KernelRunner> runner)
      : runner(std::move(runner)) {}

  StringRef getTarget() const override { return "cuda"; }
  llvm::Error compile(ModuleOp module, EntryFunction &entry,
                      const CompileOptions &options) override;
  llvm::Error run(const std::vector<const rt::HostTensor *> &arguments,
                  std::vector<rt::HostTensor> &results) override;
  llvm::Expected<std::vector<double>>
  time(const std::vector<const rt::HostTensor *> &arguments,
       std::vector<rt::HostTensor> &results, unsigned warmup,
       unsigned iterations) override;
  DeviceInfo getDeviceInfo(rt::ElementType type, bool tf32) const override;
  llvm::Expected<rt::ExplainFacts>
  explain(const std::vector<const rt::HostTensor *> &arguments,
          const rt::HostTensor &result, double medianMs,
          bool tf32) const override;

private:
  /// The operands of the kernel, from the function's arguments.
  llvm::Expected<rt::AttentionProblem>
  getProblem(const std::vector<const rt::HostTensor *> &arguments) const;

  std::unique_ptr<rt::KernelRunner> runner;
  RoleArguments roleArguments = {-1, -1, -1, -1, -1, -1, -1, -1};
  std::vector<int> captureArguments;
  unsigned numArguments = 0, numResults = 0;
  bool compiled = false;
};
} // namespace

llvm::Error CUDABackend::compile(ModuleOp module, EntryFunction &entry,
                                 const CompileOptions &options) {
  const rt::CudaDevice &device = runner->getDevice();
  std::string chip = options.chip;
  if (chip.empty())
    chip = rt::getNativeChip(device.getComputeCapabilityMajor(),
                             device.getComputeCapabilityMinor());
  llvm::Expected<KernelArtifact> artifact =
      compileKernel(module, entry, options, chip);
  if (!artifact)
    return artifact.takeError();
  std::string error;
  if (!runner->load(artifact->manifest, artifact->ptx, error))
    return makeError("loading the kernel of '" + entry.getName() + "' on " +
                     device.getName() + " failed: " + error);
  roleArguments = entry.roleArguments;
  captureArguments = entry.captureArguments;
  numArguments = entry.getNumArguments();
  numResults = entry.func.getNumResults();
  compiled = true;
  return llvm::Error::success();
}

llvm::Expected<rt::AttentionProblem> CUDABackend::getProblem(
    const std::vector<const rt::HostTensor *> &arguments) const {
  if (!compiled)
    return makeError("the function was not compiled");
  if (arguments.size() != numArguments)
    return makeError("expected " + Twine(numArguments) + " arguments, got " +
                     Twine(arguments.size()));
  auto get = [&](OperandRole role) -> const rt::HostTensor * {
    int index = roleArguments[static_cast<unsigned>(role)];
    return index < 0 ? nullptr : arguments[index];
  };
  rt::AttentionProblem problem;
  problem.query = get(OperandRole::Query);
  problem.key = get(OperandRole::Key);
  problem.value = get(OperandRole::Value);
  problem.mask = get(OperandRole::Mask);
  problem.kvLengths = get(OperandRole::KvLengths);
  problem.cuSeqlensQ = get(OperandRole::CuSeqlensQ);
  problem.cuSeqlensK = get(OperandRole::CuSeqlensK);
  problem.blockTable = get(OperandRole::BlockTable);
  for (int index : captureArguments) {
    if (index < 0)
      return makeError("a region reads a tensor the function computes; the "
                       "GPU kernel takes the tensors its regions read as "
                       "arguments");
    problem.captures.push_back(arguments[index]);
  }
  return problem;
}

llvm::Error
CUDABackend::run(const std::vector<const rt::HostTensor *> &arguments,
                 std::vector<rt::HostTensor> &results) {
  llvm::Expected<rt::AttentionProblem> problem = getProblem(arguments);
  if (!problem)
    return problem.takeError();
  if (results.size() != numResults)
    return makeError("expected " + Twine(numResults) + " results, got " +
                     Twine(results.size()));
  std::string error;
  if (!runner->run(*problem, results[0],
                   results.size() > 1 ? &results[1] : nullptr, error))
    return makeError(error);
  return llvm::Error::success();
}

llvm::Expected<std::vector<double>>
CUDABackend::time(const std::vector<const rt::HostTensor *> &arguments,
                  std::vector<rt::HostTensor> &results, unsigned warmup,
                  unsigned iterations) {
  llvm::Expected<rt::AttentionProblem> problem = getProblem(arguments);
  if (!problem)
    return problem.takeError();
  if (results.empty())
    return makeError("expected the output among the results");
  std::vector<double> timesMs;
  std::string error;
  if (!runner->time(*problem, results[0],
                    std::max(warmup, rt::kCudaBenchWarmupRuns), iterations,
                    timesMs, error))
    return makeError(error);
  return timesMs;
}

DeviceInfo CUDABackend::getDeviceInfo(rt::ElementType type, bool tf32) const {
  return runner->getDeviceInfo(type, tf32);
}

llvm::Expected<rt::ExplainFacts>
CUDABackend::explain(const std::vector<const rt::HostTensor *> &arguments,
                     const rt::HostTensor &result, double medianMs,
                     bool tf32) const {
  llvm::Expected<rt::AttentionProblem> problem = getProblem(arguments);
  if (!problem)
    return problem.takeError();
  rt::ExplainFacts facts;
  std::string error;
  if (!runner->explain(*problem, result, medianMs, tf32, facts, error))
    return makeError(error);
  return facts;
}

llvm::Expected<std::unique_ptr<Backend>>
mlir::attn::runner::createCUDABackend() {
  auto runner = std::make_unique<rt::KernelRunner>();
  std::string error;
  if (!runner->open(/*ordinal=*/0, error))
    return makeError("--target=cuda: " + error);
  return std::make_unique<CUDABackend>(std::move(runner));
}

#else // !ATTN_HAS_CUDA_DRIVER

llvm::Expected<std::unique_ptr<Backend>>
mlir::attn::runner::createCUDABackend() {
  return makeError("--target=cuda: this attn-run was built without the CUDA "
                   "driver header cuda.h (configure with CUDA_HOME set); "
                   "--emit-kernel works without it");
}

#endif // ATTN_HAS_CUDA_DRIVER

//===- CPUBackend.cpp - attn-run on the host through the LLVM JIT ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Compiles the entry function with the attn-to-llvm-cpu pipeline (the same
// tiled, online-softmax IR the GPU runs, lowered to loops), JIT-compiles the
// LLVM dialect with mlir::ExecutionEngine at -O2 for the host CPU, and calls
// `_mlir_ciface_<F>` with memref descriptors (MemRefDescriptor.h: one per
// argument, and the struct of the results' descriptors: the output and, when
// the op has one, the log-sum-exp).
//
// Bench floor (docs in Report.h): peak = cores x 2 FMA units x 8 f32 lanes
// x 2 flop x clock, where the clock is cpuinfo_max_freq of cpu0 (or the
// first "cpu MHz" of /proc/cpuinfo, or 3 GHz when neither can be read), and
// the memory bandwidth is taken as 20 GB/s.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Backend.h"

#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/Diagnostics.h"
#include "attn/Runner/MemRefDescriptor.h"
#include "attn/Runner/SoftFloat.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

/// The memory bandwidth the CPU floor assumes, in bytes per second.
static constexpr double kCPUBytesPerSecond = 20e9;
/// f32 flops per cycle and core: 2 FMA units x 8 lanes x 2 flop.
static constexpr double kCPUFlopsPerCycle = 2 * 8 * 2;

/// Returns the message of `error` on one line.
static std::string toOneLine(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  std::replace(message.begin(), message.end(), '\n', ' ');
  return message;
}

/// Reads the host clock in GHz (see the file comment).
static double getHostClockGHz() {
  std::ifstream maxFreq(
      "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double kHz = 0.0;
  if (maxFreq >> kHz && kHz > 0.0)
    return kHz * 1e-6;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0)
      continue;
    size_t colon = line.find(':');
    double mHz = colon == std::string::npos
                     ? 0.0
                     : std::strtod(line.c_str() + colon + 1, nullptr);
    if (mHz > 0.0)
      return mHz * 1e-3;
    break;
  }
  return 3.0;
}

namespace {
class CPUBackend : public Backend {
public:
  StringRef getTarget() const override { return "cpu"; }
  llvm::Error compile(ModuleOp module, EntryFunction &entry,
                      const CompileOptions &options) override;
  llvm::Error run(const std::vector<const rt::HostTensor *> &arguments,
                  std::vector<rt::HostTensor> &results) override;
  llvm::Expected<std::vector<double>>
  time(const std::vector<const rt::HostTensor *> &arguments,
       std::vector<rt::HostTensor> &results, unsigned warmup,
       unsigned iterations) override;
  DeviceInfo getDeviceInfo(rt::ElementType type, bool tf32) const override;

private:
  /// Calls the compiled function once; `resultDescs` receive the results,
  /// which the caller frees with releaseResults.
  llvm::Error call(const std::vector<const rt::HostTensor *> &arguments,
                   ResultDescriptors &resultDescs);
  void releaseResults(ResultDescriptors &resultDescs,
                      const std::vector<const rt::HostTensor *> &arguments);
  /// The descriptors of `results`, after checking their number.
  llvm::Expected<ResultDescriptors>
  makeResultDescriptors(const std::vector<rt::HostTensor> &results) const;

  std::unique_ptr<ExecutionEngine> engine;
  /// The engine's packed wrapper of `_mlir_ciface_F(result, args...)`: one
  /// array of pointers to the arguments, so any number of them.
  void (*function)(void **) = nullptr;
  unsigned numArguments = 0, numResults = 0;
};
} // namespace

/// Builds the JIT's target machine: the host, or `cpuName` with its default
/// features; codegen at -O2.
static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(StringRef cpuName) {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  if (!cpuName.empty()) {
    // LLVM aborts on a CPU that cannot run the host's code: check first.
    const llvm::Triple &triple = builder->getTargetTriple();
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return makeError(error);
    std::unique_ptr<llvm::MCSubtargetInfo> hostInfo(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!hostInfo || !hostInfo->isCPUStringValid(cpuName))
      return makeError("unknown --jit-cpu '" + cpuName + "' for " +
                       triple.str());
    std::unique_ptr<llvm::MCSubtargetInfo> cpuInfo(
        target->createMCSubtargetInfo(triple, cpuName, ""));
    if (triple.getArch() == llvm::Triple::x86_64 &&
        !cpuInfo->checkFeatures("+64bit"))
      return makeError("--jit-cpu '" + cpuName + "' cannot run " +
                       triple.str() + " code");
    builder->setCPU(cpuName.str());
    builder->setFeatures("");
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  return builder->createTargetMachine();
}

llvm::Error CPUBackend::compile(ModuleOp module, EntryFunction &entry,
                                const CompileOptions &options) {
  static bool nativeTargetInitialized = [] {
    return !llvm::InitializeNativeTarget() &&
           !llvm::InitializeNativeTargetAsmPrinter();
  }();
  if (!nativeTargetInitialized)
    return makeError("cannot initialize the LLVM native target");

  MLIRContext *context = module.getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  // Compile only the entry function, public and with the C interface.
  std::string name = entry.getName().str();
  OwningOpRef<ModuleOp> clone(module.clone());
  for (Operation &op :
       llvm::make_early_inc_range(clone->getBody()->getOperations())) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func || func.getSymName() != name) {
      op.erase();
      continue;
    }
    func.setPublic();
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(context));
  }

  std::string prefix = "compiling '" + name + "' for cpu failed: ";
  {
    DiagnosticCollector diagnostics(context);
    PassManager pm(context);
    if (options.configurePassManager &&
        failed(options.configurePassManager(pm)))
      return makeError(
          prefix + diagnostics.getFirstError("invalid pass manager options"));
    AttnToLLVMCPUOptions pipelineOptions;
    pipelineOptions.blockM = options.blockM;
    pipelineOptions.blockN = options.blockN;
    pipelineOptions.numStages = options.numStages;
    pipelineOptions.splitPrograms = options.splitPrograms;
    if (!options.scoresAhead.empty())
      pipelineOptions.scoresAhead = options.scoresAhead;
    buildAttnToLLVMCPUPipeline(pm, pipelineOptions);
    if (failed(pm.run(*clone)))
      return makeError(prefix + diagnostics.getFirstError(
                                    "the attn-to-llvm-cpu pipeline failed"));
  }

  // Everything must now be in the LLVM dialect.
  Operation *leftOver = nullptr;
  clone->walk([&](Operation *op) {
    if (op != clone->getOperation() &&
        !isa<LLVM::LLVMDialect>(op->getDialect()))
      leftOver = op;
    return leftOver ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (leftOver)
    return makeError(prefix + "the attn-to-llvm-cpu pipeline left op '" +
                     leftOver->getName().getStringRef() +
                     "', which LLVM cannot translate");
  std::string cifaceName = "_mlir_ciface_" + name;
  if (!clone->lookupSymbol<LLVM::LLVMFuncOp>(cifaceName))
    return makeError(prefix + "the lowered module has no '" + cifaceName + "'");
  bool hasGlobalCtors = !clone->getOps<LLVM::GlobalCtorsOp>().empty();

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      createTargetMachine(options.jitCPU);
  if (!targetMachine)
    return makeError(prefix + toOneLine(targetMachine.takeError()));
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0,
                                targetMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Default;
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;

  DiagnosticCollector diagnostics(context);
  llvm::Expected<std::unique_ptr<ExecutionEngine>> created =
      ExecutionEngine::create(*clone, engineOptions, std::move(*targetMachine));
  if (!created)
    return makeError(prefix +
                     diagnostics.getFirstError(toOneLine(created.takeError())));
  engine = std::move(*created);

  // Conversions that LLVM may call and the process may lack; these take
  // precedence over the process's own.
  engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const RuntimeSymbol &symbol : getSoftFloatSymbols())
      symbols[interner(symbol.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(symbol.address),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });

  // Looking the function up links the object: unresolved symbols show here.
  llvm::Expected<void (*)(void **)> address = engine->lookupPacked(cifaceName);
  if (!address)
    return makeError(prefix + "cannot link the JIT-compiled code: " +
                     toOneLine(address.takeError()));
  if (hasGlobalCtors)
    engine->initialize();
  function = *address;
  numArguments = entry.getNumArguments();
  numResults = entry.func.getNumResults();
  return llvm::Error::success();
}

llvm::Expected<ResultDescriptors> CPUBackend::makeResultDescriptors(
    const std::vector<rt::HostTensor> &results) const {
  if (results.size() != numResults)
    return makeError("expected " + Twine(numResults) + " results, got " +
                     Twine(results.size()));
  SmallVector<unsigned, 2> ranks;
  for (const rt::HostTensor &result : results)
    ranks.push_back(result.shape.size());
  return ResultDescriptors(ranks);
}

llvm::Error
CPUBackend::call(const std::vector<const rt::HostTensor *> &arguments,
                 ResultDescriptors &resultDescs) {
  if (!function)
    return makeError("the function was not compiled");
  if (arguments.size() != numArguments)
    return makeError("expected " + Twine(numArguments) + " arguments, got " +
                     Twine(arguments.size()));
  // The compiled code only reads the inputs.
  SmallVector<MemRefDescriptor, 4> descriptors;
  for (const rt::HostTensor *tensor : arguments)
    descriptors.emplace_back(const_cast<uint8_t *>(tensor->data.data()),
                             tensor->shape);
  std::vector<void *> addresses;
  for (MemRefDescriptor &descriptor : descriptors)
    addresses.push_back(descriptor.getAddress());
  resultDescs.clear();
  void *resultAddress = resultDescs.getAddress();
  std::vector<void *> packed = {&resultAddress};
  for (void *&address : addresses)
    packed.push_back(&address);
  function(packed.data());
  return llvm::Error::success();
}

void CPUBackend::releaseResults(
    ResultDescriptors &resultDescs,
    const std::vector<const rt::HostTensor *> &arguments) {
  SmallVector<void *, 2> freed;
  for (unsigned i = 0; i < resultDescs.size(); ++i) {
    void *allocated = resultDescs.get(i).getAllocated();
    // Never free an input, should the compiled code ever return one, nor
    // a buffer twice.
    for (const rt::HostTensor *tensor : arguments)
      if (allocated == tensor->data.data())
        allocated = nullptr;
    if (llvm::is_contained(freed, allocated))
      allocated = nullptr;
    std::free(allocated);
    freed.push_back(allocated);
  }
  resultDescs.clear();
}

llvm::Error
CPUBackend::run(const std::vector<const rt::HostTensor *> &arguments,
                std::vector<rt::HostTensor> &results) {
  llvm::Expected<ResultDescriptors> resultDescs =
      makeResultDescriptors(results);
  if (!resultDescs)
    return resultDescs.takeError();
  if (llvm::Error error = call(arguments, *resultDescs))
    return error;
  llvm::Error error = llvm::Error::success();
  for (unsigned i = 0; i < results.size() && !error; ++i)
    error = copyFromDescriptor(resultDescs->get(i), results[i]);
  releaseResults(*resultDescs, arguments);
  return error;
}

llvm::Expected<std::vector<double>>
CPUBackend::time(const std::vector<const rt::HostTensor *> &arguments,
                 std::vector<rt::HostTensor> &results, unsigned warmup,
                 unsigned iterations) {
  llvm::Expected<ResultDescriptors> resultDescs =
      makeResultDescriptors(results);
  if (!resultDescs)
    return resultDescs.takeError();
  std::vector<double> times;
  for (unsigned i = 0; i < warmup + iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error = call(arguments, *resultDescs))
      return std::move(error);
    auto stop = std::chrono::steady_clock::now();
    releaseResults(*resultDescs, arguments);
    if (i >= warmup)
      times.push_back(
          std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return times;
}

DeviceInfo CPUBackend::getDeviceInfo(rt::ElementType type, bool tf32) const {
  (void)type;
  (void)tf32;
  unsigned cores =
      std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  double clockGHz = getHostClockGHz();
  DeviceInfo info;
  info.peakFlops = cores * kCPUFlopsPerCycle * clockGHz * 1e9;
  info.bytesPerSecond = kCPUBytesPerSecond;
  char text[128];
  std::snprintf(text, sizeof(text),
                "host cpu: %u cores x %.2f GHz x %.0f flop/cycle, %.0f GB/s",
                cores, clockGHz, kCPUFlopsPerCycle, kCPUBytesPerSecond * 1e-9);
  info.description = text;
  return info;
}

std::unique_ptr<Backend> mlir::attn::runner::createCPUBackend() {
  return std::make_unique<CPUBackend>();
}

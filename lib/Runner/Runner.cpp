//===- Runner.cpp - attn-run as a library ---------------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Runner.h"

#include "attn/Runner/Diagnostics.h"
#include "attn/Runner/EntryFunction.h"
#include "attn/Runner/Inputs.h"
#include "attn/Runner/RegionEval.h"
#include "attn/Runner/Report.h"
#include "attn/Runtime/ManifestRun.h"
#include "attn/Runtime/Npy.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::attn::runner::loadModule(StringRef path, MLIRContext &context) {
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &errorMessage);
  if (!file)
    return makeError(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  DiagnosticCollector diagnostics(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return makeError(
        diagnostics.getFirstError(("cannot parse '" + path + "'").str()));
  return module;
}

/// Prints `type` as MLIR does: "tensor<?x32x?x128xbf16>".
static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Fills the parts of the summary known before running.
static RunSummary makeSummary(EntryFunction &entry, const RunInputs &inputs,
                              StringRef target,
                              const std::vector<std::string> &outputPaths) {
  RunSummary summary;
  summary.function = entry.getName().str();
  summary.target = target.str();
  for (unsigned i = 0, e = inputs.arguments.size(); i < e; ++i)
    summary.arguments.push_back({entry.getArgumentLabel(i),
                                 inputs.arguments[i].shape,
                                 inputs.arguments[i].type, inputs.sources[i]});
  summary.resultShape = inputs.resultShape;
  summary.resultType = inputs.resultType;
  summary.lseShape = inputs.lseShape;
  summary.scale = inputs.scale;
  summary.causal = inputs.causal;
  summary.tf32 = entry.usesTF32();
  summary.outputPaths = outputPaths;
  return summary;
}

llvm::Expected<bool> mlir::attn::runner::runModule(ModuleOp module,
                                                   const RunOptions &options,
                                                   llvm::raw_ostream &os) {
  llvm::Expected<std::unique_ptr<Backend>> backend =
      createBackend(options.target);
  if (!backend)
    return backend.takeError();
  std::vector<std::string> outputPaths;
  std::string error;
  if (!rt::checkRunFlags(options, outputPaths, error))
    return makeError(error);

  llvm::Expected<EntryFunction> entry =
      selectEntryFunction(module, options.entry);
  if (!entry)
    return entry.takeError();
  std::vector<std::string> resultNames = {"o: " +
                                          formatType(entry->getResultType())};
  if (entry->hasLse())
    resultNames.push_back("lse: " + formatType(entry->getLseType()));
  if (!rt::checkOutputCount(outputPaths,
                            "function '" + entry->getName().str() + "'",
                            resultNames, error))
    return makeError(error);
  llvm::Expected<RunInputs> inputs =
      prepareInputs(*entry, options.inputs, options.seed);
  if (!inputs)
    return inputs.takeError();
  if (llvm::Error error = (*backend)->compile(module, *entry, options.compile))
    return std::move(error);

  RunSummary summary =
      makeSummary(*entry, *inputs, (*backend)->getTarget(), outputPaths);
  if (!options.json) {
    os << formatHeaderLine(summary) << "\n";
    os.flush();
  }

  std::vector<const rt::HostTensor *> arguments = inputs->getArgumentPointers();
  // In result order: the output, then the log-sum-exp if the op has one.
  std::vector<rt::HostTensor> results = inputs->makeResults();
  if (llvm::Error error = (*backend)->run(arguments, results))
    return std::move(error);
  const rt::HostTensor &result = results[0];
  const rt::HostTensor *lse = results.size() > 1 ? &results[1] : nullptr;

  // Written before the check so that a failing result can be inspected.
  for (size_t i = 0; i < outputPaths.size(); ++i)
    if (!rt::writeNpy(outputPaths[i], results[i], error))
      return makeError(error);

  rt::AttentionProblem problem = inputs->getProblem();
  if (options.check) {
    // The reference evaluates the op's regions as written.
    llvm::Expected<std::shared_ptr<Modifiers>> modifiers =
        Modifiers::compile(*entry);
    if (!modifiers)
      return modifiers.takeError();
    (*modifiers)->bind(inputs->arguments, problem);
    summary.check =
        checkOutput(problem, result, entry->usesTF32(), options.seed, lse);
    if (!(*modifiers)->getError().empty())
      return makeError("--check: " + (*modifiers)->getError());
  }

  if (options.bench) {
    std::vector<rt::HostTensor> scratch = inputs->makeResults();
    llvm::Expected<std::vector<double>> times = (*backend)->time(
        arguments, scratch, kBenchWarmupRuns, options.iterations);
    if (!times)
      return times.takeError();
    summary.bench = summarizeBench(
        std::move(*times), problem, result,
        (*backend)->getDeviceInfo(inputs->resultType, entry->usesTF32()), lse);
    if (options.explain) {
      llvm::Expected<rt::ExplainFacts> facts = (*backend)->explain(
          arguments, result, summary.bench->medianMs, entry->usesTF32());
      if (!facts)
        return facts.takeError();
      summary.explain = rt::ExplainResult{*facts, rt::computeExplain(*facts)};
    }
  }

  os << (options.json ? formatJson(summary) + "\n"
                      : rt::formatResultLines(summary));
  os.flush();
  return !summary.check || summary.check->result.pass;
}

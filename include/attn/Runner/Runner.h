//===- Runner.h - attn-run as a library -------------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The whole of `attn-run` behind its command line: load a module, select the
// entry function, build and validate the inputs, compile and run it on a
// target, write the output, check it against the float64 reference, time
// it, and print the report. Every failure is an llvm::Error whose message is
// one line without the "attn-run: " prefix.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_RUNNER_H
#define ATTN_RUNNER_RUNNER_H

#include "attn/Runner/Backend.h"
#include "attn/Runtime/ManifestRun.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class MLIRContext;

namespace attn {
namespace runner {

/// The options of one run (attn-run's command line): the run flags (one
/// --input per function argument; --bench's timed runs come after
/// kBenchWarmupRuns untimed ones; --explain on cuda), the function and where
/// it runs.
struct RunOptions : ::attn::runtime::RunFlags {
  /// The function to run; empty selects the only func.func.
  std::string entry;
  /// "cpu" or "cuda".
  std::string target = "cpu";
  CompileOptions compile;
};

/// Untimed runs before the timed ones of --bench.
constexpr unsigned kBenchWarmupRuns = 2;

/// Registers every dialect and extension the runner's pipelines use, and
/// the LLVM IR translations of the builtin and LLVM dialects.
void registerRunnerDialects(DialectRegistry &registry);

/// Parses and verifies the module in `path` ("-" for stdin).
llvm::Expected<OwningOpRef<ModuleOp>> loadModule(StringRef path,
                                                 MLIRContext &context);

/// Runs `options` on `module` and prints the report to `os`. Returns false
/// when --check was given and failed, true otherwise.
llvm::Expected<bool> runModule(ModuleOp module, const RunOptions &options,
                               llvm::raw_ostream &os);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_RUNNER_H

//===- attn-run.cpp - Run attn.attention functions and check them ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
//   attn-run FILE.mlir [-e FUNC] [--target=cpu|cuda] --input=SPEC ...
//            [--seed=N] [--check] [--bench [--iters=N]] [--output=@o.npy]
//            [--json] [--block-m=N --block-n=N]
//
// Option parsing and printing only; the work is done by the AttnRunner
// library (attn/Runner/Runner.h). Errors are one line on stderr starting
// with "attn-run: " and exit code 1; a failing --check also exits 1.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Runner.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

static int fail(const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "attn-run: " << message << "\n";
  return EXIT_FAILURE;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  cl::OptionCategory category("attn-run options");
  cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                     cl::desc("<input .mlir file>"),
                                     cl::cat(category));
  cl::opt<std::string> entry(
      "e", cl::desc("The function to run (default: the only func.func)"),
      cl::value_desc("function"), cl::cat(category));
  cl::opt<std::string> target("target",
                              cl::desc("Where to run: cpu (LLVM JIT on the "
                                       "host) or cuda"),
                              cl::value_desc("cpu|cuda"), cl::init("cpu"),
                              cl::cat(category));
  cl::list<std::string> inputs(
      "input",
      cl::desc("One per function argument, in order: SHAPExTYPE (random data, "
               "e.g. 2x32x1024x128xbf16), @file.npy, or random (the "
               "argument's static type)"),
      cl::value_desc("spec"), cl::cat(category));
  cl::opt<uint64_t> seed(
      "seed",
      cl::desc("Seed of the random inputs (each input derives its own) and "
               "of the rows --check samples"),
      cl::init(0), cl::cat(category));
  cl::opt<bool> check(
      "check",
      cl::desc("Compare the result with a float64 reference; the last line "
               "is 'check: PASS ...' or 'check: FAIL ...' (exit code 1)"),
      cl::cat(category));
  cl::opt<bool> bench(
      "bench",
      cl::desc("Time the run: 'bench: median_ms=... tflops=... floor_ms=...' "
               "(before the check line)"),
      cl::cat(category));
  cl::opt<unsigned> iters(
      "iters", cl::desc("Timed runs of --bench, after 2 warm-up runs"),
      cl::init(20), cl::cat(category));
  cl::opt<std::string> output("output",
                              cl::desc("Write the result to a .npy file"),
                              cl::value_desc("@file.npy"), cl::cat(category));
  cl::opt<bool> json(
      "json", cl::desc("Print one JSON object instead of the text lines"),
      cl::cat(category));
  cl::opt<int64_t> blockM(
      "block-m", cl::desc("Query rows per program (0: the default config)"),
      cl::init(0), cl::cat(category));
  cl::opt<int64_t> blockN(
      "block-n", cl::desc("Keys per inner block (0: the default config)"),
      cl::init(0), cl::cat(category));
  cl::opt<std::string> jitCPU(
      "jit-cpu",
      cl::desc("CPU name for the JIT with that CPU's default features, e.g. "
               "x86-64 (default: the host with all its features)"),
      cl::cat(category));

  // The MLIR options (--mlir-print-ir-after-all, ...) stay usable and are
  // listed by --help-hidden, with the options of LLVM's backends.
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: run an attn.attention function on random or .npy inputs, "
      "check it against a float64 reference, and time it\n");

  if (blockM < 0 || blockN < 0)
    return fail("--block-m and --block-n must be >= 0");

  mlir::attn::runner::RunOptions options;
  options.entry = entry;
  options.target = target;
  options.inputs.assign(inputs.begin(), inputs.end());
  options.seed = seed;
  options.check = check;
  options.bench = bench;
  options.iterations = iters;
  options.output = output;
  options.json = json;
  options.compile.blockM = blockM;
  options.compile.blockN = blockN;
  options.compile.jitCPU = jitCPU;
  options.compile.configurePassManager = [](PassManager &pm) {
    return applyPassManagerCLOptions(pm);
  };

  DialectRegistry registry;
  mlir::attn::runner::registerRunnerDialects(registry);
  MLIRContext context(registry);

  llvm::Expected<OwningOpRef<ModuleOp>> module =
      mlir::attn::runner::loadModule(inputFilename, context);
  if (!module)
    return fail(llvm::toString(module.takeError()));

  llvm::Expected<bool> passed =
      mlir::attn::runner::runModule(**module, options, llvm::outs());
  if (!passed)
    return fail(llvm::toString(passed.takeError()));
  return *passed ? EXIT_SUCCESS : EXIT_FAILURE;
}

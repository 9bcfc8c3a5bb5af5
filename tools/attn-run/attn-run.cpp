//===- attn-run.cpp - Run attn.attention functions and check them ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
//   attn-run FILE.mlir [-e FUNC] [--target=cpu|cuda] --input=SPEC ...
//            [--seed=N] [--check] [--bench [--iters=N] [--explain]]
//            [--output=@o.npy [--output=@lse.npy]]
//            [--json] [--block-m=N --block-n=N] [--num-warps=N]
//            [--split-programs=N]
//            [--chip=sm_90a] [--emit-kernel=DIR]
//            [--NAME=VALUE ...]  (cuda: --convert-attn-to-nvvm's options)
//   attn-run MANIFEST.json --input=SPEC ... [--seed=N] [--check] ...
//
// Option parsing and printing only; the work is done by the AttnRunner
// library (attn/Runner/Runner.h), and for a launch manifest by the MLIR-free
// runtime (attn/Runtime/ManifestRun.h), as in the runner-only attn-run.
// --target=cuda --emit-kernel=DIR writes DIR/<func>.ptx and DIR/<func>.json
// and stops. Errors are one line on stderr starting with "attn-run: error: "
// and exit code 1; a failing --check also exits 1.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Runner.h"
#include "attn/Runtime/ManifestRun.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <iostream>

using namespace mlir;
namespace cl = llvm::cl;

static int fail(const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "attn-run: error: " << message << "\n";
  return EXIT_FAILURE;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  cl::OptionCategory category("attn-run options");
  cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                     cl::desc("<input .mlir file or launch "
                                              "manifest .json>"),
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
      cl::desc("One per function argument, in order (for a manifest: query, "
               "key, value[, mask][, kv_lengths][, cu_seqlens_q, "
               "cu_seqlens_k][, block_table][, captures]): SHAPExTYPE "
               "(random data, e.g. 2x32x1024x128xbf16; kv_lengths get "
               "lengths in 0..Tk, cu_seqlens random lengths summing to Tq "
               "or Tk, a block_table distinct pages of the pool), @file.npy, "
               "or random (the argument's static type)"),
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
      "iters",
      cl::desc("Timed runs of --bench, after 2 warm-up runs (on cuda: at "
               "least 5 and 250 ms of GPU time)"),
      cl::init(20), cl::cat(category));
  cl::opt<bool> explain(
      "explain",
      cl::desc("cuda, with --bench: explain the time: FLOPs, bytes, the FLOP "
               "and HBM floors, the fraction of the floor reached, "
               "registers, shared memory, spills, occupancy, the config and "
               "the known causes that apply ('explain: key=value' lines, "
               "docs/Explain.md)"),
      cl::cat(category));
  cl::list<std::string> outputs(
      "output",
      cl::desc("Write a result to a .npy file: one per result of the "
               "function, in result order (fewer is fine)"),
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
  cl::opt<int64_t> numWarps(
      "num-warps", cl::desc("cuda: warps per program (0: the default config)"),
      cl::init(0), cl::cat(category));
  cl::opt<int64_t> numStages(
      "num-stages",
      cl::desc("K/V pipeline stages of --attn-pipeline (0: the default "
               "config); on cpu the pipelined loop runs in order"),
      cl::init(0), cl::cat(category));
  cl::opt<int64_t> splitPrograms(
      "split-programs",
      cl::desc("Split-KV for a static Tq of one query block: the programs "
               "the key splits aim for, merged by a combine grid (0: never "
               "split; -1, the default: the target's default)"),
      cl::init(-1), cl::cat(category));
  cl::opt<std::string> scoresAhead(
      "scores-ahead", cl::ValueOptional, cl::value_desc("none|tf32|auto|all"),
      cl::desc("--attn-pipeline's scores-ahead: the next key block's Q K^T "
               "before this block's softmax and P V (cuda: on wgmma). "
               "Default: auto on cuda, none on cpu; alone: all"),
      cl::cat(category));
  cl::opt<std::string> chip(
      "chip",
      cl::desc("cuda: the chip to compile for (default: the device's own, "
               "sm_90a on compute capability 9.0; sm_90a with --emit-kernel)"),
      cl::value_desc("sm_XY"), cl::cat(category));
  cl::opt<std::string> emitKernel(
      "emit-kernel",
      cl::desc("cuda: compile only, write DIR/<func>.ptx and DIR/<func>.json "
               "(the launch manifest) and stop; no GPU needed, the run "
               "options are not used"),
      cl::value_desc("DIR"), cl::cat(category));
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
  // Any other `--NAME[=VALUE]` is an option of --convert-attn-to-nvvm.
  cl::list<std::string> conversionArgs(cl::Sink);
  cl::HideUnrelatedOptions(category);
  std::string overview =
      "attn-run: run an attn.attention function on random or .npy inputs, "
      "check it against a float64 reference, and time it\n\n"
      "With --target=cuda, also takes the options of --convert-attn-to-nvvm "
      "as --NAME=VALUE (attn-opt --help describes them; defaults: " +
      mlir::attn::describeConvertAttnToNVVMOptions() + ")\n";
  // LLVM's complaints about the command line as a whole, as errors of this
  // tool (those about one option's value it prints itself).
  std::string clErrors;
  llvm::raw_string_ostream clErrorStream(clErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &clErrorStream)) {
    for (StringRef line : llvm::split(StringRef(clErrors).trim(), '\n')) {
      line = line.trim();
      line.consume_front("attn-run: ");
      if (!line.empty())
        fail(line);
    }
    return EXIT_FAILURE;
  }
  mlir::attn::runner::RunOptions options;
  std::string conversionError;
  if (failed(mlir::attn::parseConvertAttnToNVVMArguments(
          conversionArgs, options.compile.nvvm,
          [&](const Twine &message) { conversionError = message.str(); })))
    return fail("unknown option or value " + conversionError);

  if (blockM < 0 || blockN < 0)
    return fail("--block-m and --block-n must be >= 0");
  if (numWarps < 0)
    return fail("--num-warps must be >= 0");
  if (numStages < 0)
    return fail("--num-stages must be >= 0");
  if (splitPrograms < -1)
    return fail("--split-programs must be >= -1 (-1: the target's default; "
                "0: never split), got " +
                llvm::Twine(static_cast<int64_t>(splitPrograms)));
  if (!scoresAhead.empty() && scoresAhead != "none" && scoresAhead != "tf32" &&
      scoresAhead != "auto" && scoresAhead != "all")
    return fail("--scores-ahead must be none, tf32, auto or all, got '" +
                scoresAhead + "'");
  if (entry.getNumOccurrences() && entry.empty())
    return fail("-e needs a function name, as in -e attn");
  for (const std::string &output : outputs)
    if (!StringRef(output).starts_with("@"))
      return fail("--output takes @FILE.npy, as in --output=@o.npy, got '" +
                  output + "'");
  if (emitKernel.getNumOccurrences() && emitKernel.empty())
    return fail("--emit-kernel needs a directory, as in --emit-kernel=out");
  bool isCUDA =
      target == "cuda" ||
      (target.getNumOccurrences() == 0 &&
       (!emitKernel.empty() || StringRef(inputFilename).ends_with(".json")));
  if (!isCUDA && (numWarps.getNumOccurrences() || chip.getNumOccurrences()))
    return fail("--num-warps and --chip apply to --target=cuda");
  if (!isCUDA && emitKernel.getNumOccurrences())
    return fail("--emit-kernel writes PTX: it needs --target=cuda");
  if (!isCUDA && !conversionArgs.empty())
    return fail("'" + conversionArgs.front() +
                "' is an option of the GPU lowering (--convert-attn-to-nvvm): "
                "it needs --target=cuda");
  if (explain && !bench)
    return fail(::attn::runtime::kExplainNeedsBench);
  if (explain && !isCUDA)
    return fail(::attn::runtime::kExplainNeedsCuda);

  options.inputs.assign(inputs.begin(), inputs.end());
  options.seed = seed;
  options.check = check;
  options.bench = bench;
  options.iterations = iters;
  options.explain = explain;
  options.outputs.assign(outputs.begin(), outputs.end());
  options.json = json;

  // A launch manifest is already compiled: run it as the runner-only
  // attn-run does.
  if (StringRef(inputFilename).ends_with(".json")) {
    if (!isCUDA)
      return fail("a launch manifest runs on --target=cuda only");
    if (entry.getNumOccurrences() || blockM || blockN || numWarps ||
        numStages || splitPrograms.getNumOccurrences() ||
        scoresAhead.getNumOccurrences() || !conversionArgs.empty() ||
        chip.getNumOccurrences() || !jitCPU.empty() ||
        emitKernel.getNumOccurrences())
      return fail("-e, --block-m, --block-n, --num-warps, --num-stages, "
                  "--split-programs, --scores-ahead, --chip, --jit-cpu, "
                  "--emit-kernel and the "
                  "options of --convert-attn-to-nvvm do not apply to a launch "
                  "manifest (it is compiled already)");
    ::attn::runtime::ManifestRunOptions manifestOptions;
    static_cast<::attn::runtime::RunFlags &>(manifestOptions) = options;
    manifestOptions.manifestPath = inputFilename;
    bool passed = true;
    std::string error;
    if (!::attn::runtime::runManifest(manifestOptions, std::cout, passed,
                                      error))
      return fail(error);
    return passed ? EXIT_SUCCESS : EXIT_FAILURE;
  }

  options.entry = entry;
  options.target = isCUDA ? std::string("cuda") : std::string(target);
  options.compile.blockM = blockM;
  options.compile.blockN = blockN;
  options.compile.numWarps = numWarps;
  options.compile.numStages = numStages;
  options.compile.splitPrograms = splitPrograms;
  if (scoresAhead.getNumOccurrences())
    options.compile.scoresAhead =
        scoresAhead.empty() ? std::string("all") : scoresAhead.getValue();
  options.compile.chip = chip;
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

  if (!emitKernel.empty()) {
    llvm::Expected<mlir::attn::runner::EntryFunction> entryFunction =
        mlir::attn::runner::selectEntryFunction(**module, options.entry);
    if (!entryFunction)
      return fail(llvm::toString(entryFunction.takeError()));
    llvm::Expected<mlir::attn::runner::EmittedKernel> emitted =
        mlir::attn::runner::emitCUDAKernel(**module, *entryFunction,
                                           options.compile, emitKernel);
    if (!emitted)
      return fail(llvm::toString(emitted.takeError()));
    llvm::outs() << "attn-run: wrote " << emitted->ptxPath << " and "
                 << emitted->manifestPath << " for " << emitted->chip << "\n";
    return EXIT_SUCCESS;
  }

  llvm::Expected<bool> passed =
      mlir::attn::runner::runModule(**module, options, llvm::outs());
  if (!passed)
    return fail(llvm::toString(passed.takeError()));
  return *passed ? EXIT_SUCCESS : EXIT_FAILURE;
}

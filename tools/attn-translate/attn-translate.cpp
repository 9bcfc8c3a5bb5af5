//===- attn-translate.cpp - attn.attention to PTX / cubin -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
//   attn-translate --attn-to-ptx   [FILE.mlir|-] [-o OUT] [--manifest=M.json]
//   attn-translate --attn-to-cubin [FILE.mlir|-]  -o OUT  [--manifest=M.json]
//                  [-e FUNC] [--chip=sm_90a] [--features=+ptx80]
//                  [--block-m=N --block-n=N --num-warps=N --num-stages=N]
//                  [--NAME=VALUE ...]  (--convert-attn-to-nvvm's options)
//
// Compiles one function holding attn.attention to PTX text (stdout or -o)
// or, through ptxas, to a cubin, and writes the launch manifest
// (docs/Manifest.md) next to it. Errors are one line
// (`attn-translate: error: ...`, or a diagnostic at its location), exit code
// 1, and no output file is left behind.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "attn/Runtime/FileWrite.h"
#include "attn/Target/PTX.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::attn::runtime;

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-translate: error: " << message << "\n";
  return EXIT_FAILURE;
}

/// Whether two paths name the same file: the same absolute path with `.`
/// and `..` removed, or, when both exist, the same file by identity.
static bool samePath(StringRef a, StringRef b) {
  if (llvm::sys::fs::exists(a) && llvm::sys::fs::exists(b))
    return llvm::sys::fs::equivalent(a, b);
  SmallString<128> x(a), y(b);
  llvm::sys::fs::make_absolute(x);
  llvm::sys::fs::make_absolute(y);
  llvm::sys::path::remove_dots(x, /*remove_dot_dot=*/true);
  llvm::sys::path::remove_dots(y, /*remove_dot_dot=*/true);
  return x == y;
}

/// Finds ptxas on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin.
static std::string findPtxas() {
  SmallVector<StringRef, 2> dirs;
  std::string cudaBin;
  if (const char *home = std::getenv("CUDA_HOME")) {
    cudaBin = (llvm::Twine(home) + "/bin").str();
    dirs.push_back(cudaBin);
  }
  dirs.push_back("/usr/local/cuda/bin");
  if (auto path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  if (auto path = llvm::sys::findProgramByName("ptxas", dirs))
    return *path;
  return "";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::OptionCategory category("attn-translate options");
  enum class Action { None, PTX, Cubin };
  cl::opt<Action> action(
      cl::desc("Translation:"), cl::init(Action::None),
      cl::values(
          clEnumValN(Action::PTX, "attn-to-ptx", "attn.attention to PTX text"),
          clEnumValN(Action::Cubin, "attn-to-cubin",
                     "attn.attention to a cubin (through ptxas)")),
      cl::cat(category));
  cl::opt<std::string> inputFilename(cl::Positional, cl::init("-"),
                                     cl::desc("<input .mlir>"),
                                     cl::cat(category));
  cl::opt<std::string> outputFilename(
      "o", cl::init("-"), cl::desc("Output file"), cl::value_desc("file"),
      cl::cat(category));
  cl::opt<std::string> manifestFilename(
      "manifest",
      cl::desc("Write the launch manifest here (default with -o: the output "
               "name with .json)"),
      cl::value_desc("file.json"), cl::cat(category));
  cl::opt<std::string> entry("e",
                             cl::desc("Function to compile (default: the "
                                      "only func.func)"),
                             cl::value_desc("function"), cl::cat(category));
  cl::opt<std::string> chip("chip", cl::init("sm_90a"),
                            cl::desc("CUDA chip: sm_80, sm_90a, ..."),
                            cl::cat(category));
  cl::opt<std::string> features(
      "features", cl::init("+ptx80"),
      cl::desc("PTX ISA features (default: +ptx80 up to sm_9x, from sm_100 "
               "on the chip's minimum)"),
      cl::cat(category));
  cl::opt<int64_t> blockM("block-m", cl::init(0),
                          cl::desc("Query rows per program (0: default)"),
                          cl::cat(category));
  cl::opt<int64_t> blockN("block-n", cl::init(0),
                          cl::desc("Keys per key block (0: default)"),
                          cl::cat(category));
  cl::opt<int64_t> numWarps("num-warps", cl::init(0),
                            cl::desc("Warps per program (0: default)"),
                            cl::cat(category));
  cl::opt<int64_t> numStages("num-stages", cl::init(0),
                             cl::desc("K/V stages (0: default)"),
                             cl::cat(category));
  cl::opt<int64_t> splitPrograms(
      "split-programs", cl::init(-1),
      cl::desc("Split-KV for a static Tq of one query block: the programs "
               "the key splits aim for, the combine kernel an epilogue "
               "kernel of the manifest (0: never split; -1: the target's "
               "default)"),
      cl::cat(category));
  cl::opt<std::string> scoresAhead(
      "scores-ahead", cl::init("auto"), cl::ValueOptional,
      cl::value_desc("none|tf32|auto|all"),
      cl::desc("The next key block's Q K^T on wgmma, in flight across this "
               "block's softmax and P V: auto (the default: f32 kernels on "
               "sm_90a with 16-row warps in warpgroups, and 16-bit ones at "
               "head dim 128), tf32 (the f32 ones only), all (--scores-ahead "
               "alone), or none"),
      cl::cat(category));
  cl::opt<bool> maskBlockMap(
      "mask-block-map", cl::init(true),
      cl::desc("Classify a mask tensor's blocks once per launch, in a "
               "prologue kernel (=false: each program reads its blocks)"),
      cl::cat(category));
  // Any other `--NAME[=VALUE]` is an option of --convert-attn-to-nvvm.
  cl::list<std::string> conversionArgs(cl::Sink);
  cl::HideUnrelatedOptions(category);
  std::string overview =
      "attn-translate: attn.attention to PTX, cubin and a launch manifest\n\n"
      "Also takes the options of --convert-attn-to-nvvm as --NAME=VALUE "
      "(attn-opt --help describes them; defaults: " +
      mlir::attn::describeConvertAttnToNVVMOptions() + ")\n";
  // LLVM's complaints about the command line as a whole, as errors of this
  // tool (those about one option's value it prints itself).
  std::string clErrors;
  llvm::raw_string_ostream clErrorStream(clErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &clErrorStream)) {
    for (StringRef line : llvm::split(StringRef(clErrors).trim(), '\n')) {
      line = line.trim();
      line.consume_front("attn-translate: ");
      if (!line.empty())
        fail(line);
    }
    return EXIT_FAILURE;
  }
  mlir::attn::PTXOptions options;
  std::string conversionError;
  if (failed(mlir::attn::parseConvertAttnToNVVMArguments(
          conversionArgs, options.nvvm,
          [&](const Twine &message) { conversionError = message.str(); })))
    return fail("unknown option or value " + conversionError);

  if (action == Action::None)
    return fail("choose a translation: --attn-to-ptx or --attn-to-cubin");
  if (action.getNumOccurrences() > 1)
    return fail("choose one translation: --attn-to-ptx or --attn-to-cubin");
  if (blockM < 0 || blockN < 0 || numWarps < 0 || numStages < 0)
    return fail("--block-m, --block-n, --num-warps and --num-stages must be "
                ">= 0");
  if (splitPrograms < -1)
    return fail("--split-programs must be >= -1 (-1: the target's default; "
                "0: never split), got " +
                llvm::Twine(static_cast<int64_t>(splitPrograms)));
  if (entry.getNumOccurrences() && entry.empty())
    return fail("-e needs a function name, as in -e attn");
  if (scoresAhead.empty())
    scoresAhead = "all";
  if (scoresAhead != "none" && scoresAhead != "tf32" && scoresAhead != "auto" &&
      scoresAhead != "all")
    return fail("--scores-ahead must be none, tf32, auto or all, got '" +
                scoresAhead + "'");
  if (action == Action::Cubin && outputFilename == "-")
    return fail("--attn-to-cubin writes a binary: give -o FILE");
  if (outputFilename != "-" && llvm::sys::fs::is_directory(outputFilename))
    return fail("cannot write '" + outputFilename + "': it is a directory");
  if (action == Action::Cubin && rt::isSpecialFile(outputFilename))
    return fail("--attn-to-cubin writes the PTX beside the cubin: give -o a "
                "regular file, got '" +
                outputFilename + "'");
  // The PTX beside a cubin, and the manifest: none may be another's path.
  SmallString<128> ptxPath(outputFilename);
  llvm::sys::path::replace_extension(ptxPath, "ptx");
  if (action == Action::Cubin && samePath(ptxPath, outputFilename))
    return fail(llvm::Twine("--attn-to-cubin writes the PTX beside the cubin "
                            "as '") +
                ptxPath + "': give -o a name that does not end in .ptx");
  if (!manifestFilename.empty()) {
    if (outputFilename != "-" && samePath(manifestFilename, outputFilename))
      return fail("the output (-o) and the manifest (--manifest) are the "
                  "same file '" +
                  manifestFilename + "'");
    if (action == Action::Cubin && samePath(manifestFilename, ptxPath))
      return fail(llvm::Twine("the manifest (--manifest) is the PTX beside "
                              "the cubin, '") +
                  ptxPath + "'");
  } else if (outputFilename != "-" &&
             llvm::sys::path::extension(outputFilename) == ".json") {
    return fail("the output '" + outputFilename +
                "' ends in .json, where the manifest goes by default: give "
                "--manifest=FILE or another -o");
  }

  DialectRegistry registry;
  // Every dialect, as attn-opt: the module may hold other code than the
  // function compiled, at any stage of the pipeline.
  registerAllDialects(registry);
  mlir::attn::registerAttnDialect(registry);
  mlir::attn::registerAllPasses();
  MLIRContext context(registry);
  // An error names the op and its location; the op itself (a whole kernel,
  // where a GPU conversion fails) is not printed after it.
  context.printOpOnDiagnostic(false);
  // Diagnostics as `file:line:col: error: message`, one per line.
  std::string errorMessage;
  auto input = openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return EXIT_FAILURE;

  std::string funcName = entry;
  if (funcName.empty()) {
    SmallVector<func::FuncOp> funcs(module->getOps<func::FuncOp>());
    if (funcs.size() != 1)
      return fail("the module has " + llvm::Twine(funcs.size()) +
                  " functions; choose one with -e");
    funcName = funcs.front().getSymName().str();
  }

  // The chip before anything else: LLVM aborts on one it cannot compile for.
  llvm::Expected<std::string> chipFeatures = mlir::attn::getPTXFeatures(chip);
  if (!chipFeatures)
    return fail(llvm::toString(chipFeatures.takeError()));
  options.chip = chip;
  options.features =
      features.getNumOccurrences() ? std::string(features) : *chipFeatures;
  options.overrides = {blockM, blockN, numWarps, numStages};
  options.splitPrograms = splitPrograms;
  options.scoresAhead = scoresAhead;
  options.maskBlockMap = maskBlockMap;
  FailureOr<mlir::attn::KernelArtifact> artifact =
      mlir::attn::compileToPTX(*module, funcName, options);
  if (failed(artifact))
    return EXIT_FAILURE;

  // The PTX (or cubin) and the manifest, written only when both succeed.
  std::string manifestPath = manifestFilename;
  if (manifestPath.empty() && outputFilename != "-" &&
      !rt::isSpecialFile(outputFilename)) {
    SmallString<128> path(outputFilename);
    llvm::sys::path::replace_extension(path, "json");
    manifestPath = std::string(path);
  }
  SmallString<128> ptxName(
      outputFilename == "-" ? funcName + ".ptx"
                            : llvm::sys::path::filename(outputFilename).str());
  if (action == Action::Cubin)
    llvm::sys::path::replace_extension(ptxName, "ptx");
  artifact->manifest.ptx = std::string(ptxName);

  std::string error;
  if (action == Action::PTX) {
    if (outputFilename == "-") {
      llvm::outs() << artifact->ptx;
      llvm::outs().flush();
    } else if (!rt::writeWholeFile(outputFilename, artifact->ptx.data(),
                                   artifact->ptx.size(), error)) {
      return fail(error);
    }
  } else {
    // ptxas reads the PTX from a temporary file and writes the cubin to
    // another; the outputs are written only once it succeeds, and the PTX
    // beside the cubin is kept for the manifest's "ptx" field.
    std::string ptxas = findPtxas();
    if (ptxas.empty())
      return fail("--attn-to-cubin needs ptxas (not on PATH, in "
                  "$CUDA_HOME/bin or in /usr/local/cuda/bin)");
    SmallString<128> tmpPtx, tmpCubin;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("attn-translate", "ptx", tmpPtx))
      return fail("cannot create a temporary file: " + ec.message());
    llvm::FileRemover removePtx(tmpPtx);
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "attn-translate", "cubin", tmpCubin))
      return fail("cannot create a temporary file: " + ec.message());
    llvm::FileRemover removeCubin(tmpCubin);
    if (!rt::writeWholeFile(std::string(tmpPtx), artifact->ptx.data(),
                            artifact->ptx.size(), error))
      return fail(error);
    SmallVector<StringRef> args = {ptxas, "-arch",  chip,
                                   "-o",  tmpCubin, tmpPtx};
    std::string ptxasError;
    int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0,
                                       &ptxasError);
    if (rc != 0)
      return fail("ptxas failed (exit code " + llvm::Twine(rc) + ")" +
                  (ptxasError.empty() ? "" : ": " + ptxasError));
    auto cubin = llvm::MemoryBuffer::getFile(tmpCubin, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    if (!cubin)
      return fail("cannot read ptxas's output: " + cubin.getError().message());
    if (!rt::writeWholeFile(outputFilename, (*cubin)->getBufferStart(),
                            (*cubin)->getBufferSize(), error))
      return fail(error);
    if (!rt::writeWholeFile(std::string(ptxPath), artifact->ptx.data(),
                            artifact->ptx.size(), error)) {
      llvm::sys::fs::remove(outputFilename);
      return fail(error);
    }
  }
  if (!manifestPath.empty() &&
      !rt::writeManifestFile(manifestPath, artifact->manifest, error)) {
    if (outputFilename != "-")
      llvm::sys::fs::remove(outputFilename);
    if (action == Action::Cubin)
      llvm::sys::fs::remove(ptxPath);
    return fail(error);
  }
  return EXIT_SUCCESS;
}

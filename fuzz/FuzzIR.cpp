//===- FuzzIR.cpp - libFuzzer target: IR through both pipelines -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// attn-fuzz-ir: arbitrary text is parsed (and verified) with everything
// attn-opt registers; a module that verifies goes through the CPU pipeline
// (--attn-to-llvm-cpu) and the NVVM pipeline (--attn-to-nvvm on sm_90a, up
// to LLVM bitcode: `format=offloading` skips the NVPTX backend, which takes
// most of a PTX compile and is not attn-mlir's code). Diagnostics are
// swallowed: an error is a correct answer, only a crash, a hang or a
// sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;

/// Larger inputs are skipped: the largest test input is about 21 KB, and the
/// passes' cost grows with the IR, so bigger inputs only slow the search.
static constexpr size_t kMaxInputBytes = 32 * 1024;

static const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry;
    registerAllDialects(*result);
    registerAllExtensions(*result);
    attn::registerAttnDialect(*result);
    return result;
  }();
  return *registry;
}

/// Runs `build`'s pipeline on a copy of `module`; failure is fine.
static void runPipeline(ModuleOp module,
                        function_ref<void(OpPassManager &)> build) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module->getContext());
  build(pm);
  (void)pm.run(*copy);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {});
  // MLIR's lexer finds the end of its buffer at a NUL, which libFuzzer's
  // data lacks: a std::string has one.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return 0;
  runPipeline(*module, [](OpPassManager &pm) {
    attn::buildAttnToLLVMCPUPipeline(pm, attn::AttnToLLVMCPUOptions());
  });
  runPipeline(*module, [](OpPassManager &pm) {
    attn::AttnToNVVMOptions options;
    options.format = "offloading";
    options.optLevel = 0;
    attn::buildAttnToNVVMPipeline(pm, options);
  });
  return 0;
}

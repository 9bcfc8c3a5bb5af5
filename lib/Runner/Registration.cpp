//===- Registration.cpp - Dialects the runner needs -----------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The only file of the runner that includes the InitAll headers (they are
// expensive to compile).
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Runner.h"

#include "attn/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

void mlir::attn::runner::registerRunnerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAttnDialect(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

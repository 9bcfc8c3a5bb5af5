//===- attn-opt.cpp - mlir-opt with the attn dialect and passes -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerAttnDialect(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn-mlir optimizer driver\n", registry));
}

//===- InitAll.cpp - register everything attn-mlir provides -----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::attn::registerAttnDialect(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
}

void mlir::attn::registerAllPasses() {
  static bool registered = [] {
    registerAttnPasses();
    registerAttnConversionPasses();
    registerAttnPipelines();
    return true;
  }();
  (void)registered;
}

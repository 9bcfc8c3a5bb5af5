//===- InitAll.cpp - register everything attn-mlir provides -----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::attn::registerAttnDialect(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
}

void mlir::attn::registerAllPasses() {}

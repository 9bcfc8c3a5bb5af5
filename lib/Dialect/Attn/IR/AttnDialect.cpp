//===- AttnDialect.cpp - attn dialect registration --------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

LogicalResult
KernelConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t blockM, int64_t blockN, int64_t numWarps,
                         int64_t numStages, StringRef target) {
  if (blockM < 1 || blockN < 1)
    return emitError() << "expects block_m and block_n >= 1, got " << blockM
                       << " and " << blockN;
  if (numWarps < 1 || numStages < 1)
    return emitError() << "expects num_warps and num_stages >= 1, got "
                       << numWarps << " and " << numStages;
  if (target.empty())
    return emitError() << "expects a target ('cpu' or a chip like 'sm_90a')";
  return success();
}

void AttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
}

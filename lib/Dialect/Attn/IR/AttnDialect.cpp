//===- AttnDialect.cpp - attn dialect registration --------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Runtime/Facts.inc"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

std::optional<unsigned> mlir::attn::parseCudaChip(StringRef chip) {
  unsigned number = 0;
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  StringRef digits = chip.take_while(llvm::isDigit);
  StringRef suffix = chip.drop_front(digits.size());
  if (digits.empty() || digits.getAsInteger(10, number) ||
      !(suffix.empty() || suffix == "a" || suffix == "f"))
    return std::nullopt;
  return number;
}

/// The CUDA chips of sm_80 and newer that LLVM 22's NVPTX backend knows
/// (`llc -march=nvptx64 -mcpu=help`). A name outside it makes the backend
/// fall back to a generic processor and abort in instruction selection, so
/// the verifier refuses it first. The list is python/attn_mlir/facts.json's,
/// which the Python package checks its arguments against too.
static constexpr llvm::StringLiteral kKnownCudaChips[] = {
    ATTN_KNOWN_CUDA_CHIPS};

bool mlir::attn::isKnownCudaChip(StringRef chip) {
  return llvm::is_contained(kKnownCudaChips, chip);
}

std::string mlir::attn::getKnownCudaChips() {
  return llvm::join(std::begin(kKnownCudaChips), std::end(kKnownCudaChips),
                    ", ");
}

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
  if (blockM > kMaxBlockSize || blockN > kMaxBlockSize)
    return emitError() << "expects block_m and block_n <= " << kMaxBlockSize
                       << ", got " << blockM << " and " << blockN;
  if (numWarps > kMaxNumWarps || numStages > kMaxNumStages)
    return emitError() << "expects num_warps <= " << kMaxNumWarps
                       << " and num_stages <= " << kMaxNumStages << ", got "
                       << numWarps << " and " << numStages;
  if (target.empty())
    return emitError() << "expects a target ('cpu' or a chip like 'sm_90a')";
  if (target == "cpu")
    return success();
  std::optional<unsigned> chip = parseCudaChip(target);
  if (!chip)
    return emitError() << "expects target 'cpu' or a CUDA chip sm_XY with an "
                          "optional 'a' or 'f' suffix (such as sm_90a), got '"
                       << target << "'";
  if (*chip < kMinCudaChip)
    return emitError() << "expects a CUDA chip of sm_" << kMinCudaChip
                       << " or newer (the kernels use mma.sync on 16-bit "
                          "floats and cp.async), got '"
                       << target << "'";
  if (!isKnownCudaChip(target))
    return emitError() << "expects a CUDA chip that LLVM's NVPTX backend "
                          "knows ("
                       << getKnownCudaChips() << "), got '" << target << "'";
  // On the GPU each warp owns whole m16 row tiles of the program, and the
  // scores' accumulators are n8 column tiles.
  if (blockM % (16 * numWarps) != 0)
    return emitError() << "expects block_m to be a multiple of 16 * num_warps "
                          "on "
                       << target << " (each warp owns whole 16-row tiles), got "
                       << "block_m = " << blockM
                       << ", num_warps = " << numWarps;
  if (blockN % 8 != 0)
    return emitError() << "expects block_n to be a multiple of 8 on " << target
                       << ", got " << blockN;
  return success();
}

//===----------------------------------------------------------------------===//
// WindowAttr
//===----------------------------------------------------------------------===//

LogicalResult WindowAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t left, int64_t right) {
  if (left < -1 || right < -1)
    return emitError() << "expects window left and right >= -1 (-1: "
                          "unbounded), got "
                       << left << " and " << right;
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

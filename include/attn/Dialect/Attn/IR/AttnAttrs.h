//===- AttnAttrs.h - attn dialect attributes --------------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir {
namespace attn {

/// The compute capability of a CUDA chip name `sm_<XY>` with an optional `a`
/// or `f` suffix (`sm_90a` -> 90, `sm_100a` -> 100), or nullopt for any
/// other name.
std::optional<unsigned> parseCudaChip(StringRef chip);

/// The oldest chip the GPU path supports: its kernels use `mma.sync` on
/// 16-bit floats and `cp.async`.
constexpr unsigned kMinCudaChip = 80;

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

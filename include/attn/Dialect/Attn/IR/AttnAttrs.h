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
#include <string>

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir {
namespace attn {

/// The compute capability of a CUDA chip name `sm_<XY>` with an optional `a`
/// or `f` suffix (`sm_90a` -> 90, `sm_100a` -> 100), or nullopt for any
/// other name.
std::optional<unsigned> parseCudaChip(StringRef chip);

/// Whether `chip` is a chip of sm_80 or newer that LLVM's NVPTX backend
/// knows (`sm_90a` yes; `sm_90f`, `sm_81` and `sm_75` no).
bool isKnownCudaChip(StringRef chip);

/// The chips isKnownCudaChip accepts, comma-separated, for diagnostics.
std::string getKnownCudaChips();

/// The oldest chip the GPU path supports: its kernels use `mma.sync` on
/// 16-bit floats and `cp.async`.
constexpr unsigned kMinCudaChip = 80;

/// The largest kernel config the verifier accepts: blocks of 4096 rows or
/// keys (a host program's buffers go on the heap past 64 KiB), 32 warps
/// (CUDA's 1024 threads a block), 16 stages.
constexpr int64_t kMaxBlockSize = 4096;
constexpr int64_t kMaxNumWarps = 32;
constexpr int64_t kMaxNumStages = 16;

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
